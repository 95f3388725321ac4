package filter

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Case is one (filter, data) pair and EventBridge's answer, as its
// documentation states it.
type Case struct {
	Name   string          `json:"name"`
	Filter json.RawMessage `json:"filter"`
	Data   json.RawMessage `json:"data"`
	Want   bool            `json:"want"`
}

// Cases is testdata/cases.json: the table the unit tests run, and that the
// e2e test (e2e/filter_test.go) runs through EventBridge's TestEventPattern
// on the local cloud as well. The filters and data are kept as written.
var Cases = func() []Case {
	raw, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		panic(err)
	}
	var cs []Case
	if err := json.Unmarshal(raw, &cs); err != nil {
		panic(err)
	}
	return cs
}()

func TestMatch(t *testing.T) {
	for _, tc := range Cases {
		t.Run(tc.Name, func(t *testing.T) {
			f, err := Parse(tc.Filter)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tc.Filter, err)
			}
			if got := f.Match(tc.Data); got != tc.Want {
				t.Errorf("Match(%s, %s) = %v, want %v", tc.Filter, tc.Data, got, tc.Want)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, tc.Data, "", "  \t"); err != nil {
				t.Fatal(err)
			}
			if got := f.Match(pretty.Bytes()); got != tc.Want {
				t.Errorf("Match on the indented data = %v, want %v", got, tc.Want)
			}
		})
	}
}

func TestMatchNotAnObject(t *testing.T) {
	f := mustParse(t, `{"a":[{"exists":false}]}`)
	g := mustParse(t, `{"a":["x"]}`)
	for _, data := range []string{``, `[]`, `"a"`, `5`, `null`, `{`, `{"a":`} {
		if !f.Match([]byte(data)) {
			t.Errorf("exists:false on %q = false, want true", data)
		}
		if g.Match([]byte(data)) {
			t.Errorf("exact on %q = true, want false", data)
		}
	}
	for _, data := range []string{`{"a":"x`, `{"a":[`, `{"a":{"b"`, `{"a":"\`, `{"a":-`, `{"a":t`} {
		f.Match([]byte(data)) // not JSON: any answer, never a panic
		g.Match([]byte(data))
	}
	var nilFilter *Filter
	if !nilFilter.Match([]byte(`{}`)) {
		t.Error("a nil filter must match everything")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{`{"amount":[{"numeric":[">="]}]}`, `filter.amount[0].numeric: numeric needs an operator and a number`},
		{`{"amount":[{"numeric":["~",1]}]}`, `filter.amount[0].numeric: numeric needs an operator and a number`},
		{`{"amount":[{"numeric":["<",5,">",1]}]}`, `filter.amount[0].numeric: numeric with two comparisons needs a lower bound`},
		{`{"amount":[{"numeric":[">",1e10]}]}`, `filter.amount[0].numeric: numeric compares numbers from -5e+09 to 5e+09`},
		{`[]`, `filter: must be a JSON object`},
		{`{}`, `filter: names no field`},
		{`{"a":"DE"}`, `filter.a: must be an array of values`},
		{`{"a":[]}`, `filter.a: is an empty array`},
		{`{"a":{}}`, `filter.a: is an empty object`},
		{`{"a":[["x"]]}`, `filter.a[0]: must be a string, a number`},
		{`{"a":[{"prefix":1}]}`, `filter.a[0].prefix: prefix needs a string`},
		{`{"a":[{"prefix":"x","suffix":"y"}]}`, `filter.a[0]: an operator object has exactly one key`},
		{`{"a":[{"wildcard":"x*"}]}`, `filter.a[0].wildcard: wildcard is an EventBridge operator hookline's filters do not support`},
		{`{"a":[{"nope":"x"}]}`, `filter.a[0].nope: is not an operator`},
		{`{"a":[{"exists":"yes"}]}`, `filter.a[0].exists: exists needs true or false`},
		{`{"a":[{"anything-but":[]}]}`, `filter.a[0].anything-but: anything-but needs a non-empty list`},
		{`{"a":[{"anything-but":["x",1]}]}`, `filter.a[0].anything-but[1]: anything-but's list holds only strings or only numbers`},
		{`{"a":[{"anything-but":true}]}`, `filter.a[0].anything-but: anything-but needs a string`},
		{`{"a":[{"anything-but":{"numeric":[">",1]}}]}`, `filter.a[0].anything-but: anything-but needs a string`},
		{`{"$or":[{"a":["x"]}]}`, `filter.$or: must be an array of at least 2 patterns`},
		{`{"$or":[{"a":["x"]},{}]}`, `filter.$or[1]: must be a pattern object`},
		{`{"a":{"b":{"c":{"d":{"e":{"f":["x"]}}}}}}`, `filter.a.b.c.d.e: nests deeper than 5 objects (MaxDepth)`},
		{`{"a":{"b":{"c":{"d":{"$or":[{"e":["x"]},{"f":["y"]}]}}}}}`, `filter.a.b.c.d.$or[0]: nests deeper than 5 objects (MaxDepth)`},
		{`{"a":["x"]} {}`, `filter: has data after the JSON object`},
		{`{"a":`, `filter: is not valid JSON`},
		{`{"a":["` + strings.Repeat("x", MaxBytes) + `"]}`, `filter: is 4106 bytes, at most 4096 (MaxBytes)`},
		{`{"a":[` + strings.TrimSuffix(strings.Repeat(`1,`, MaxValues+1), ",") + `]}`, `filter.a[100]: takes the filter over 100 values (MaxValues)`},
	} {
		_, err := Parse([]byte(tc.filter))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%.60s) = %v, want %q...", tc.filter, err, tc.want)
		}
		if e, ok := err.(*Error); err != nil && (!ok || e.Path == "") {
			t.Errorf("Parse(%.60s): %T without a path", tc.filter, err)
		}
	}
}

func TestParseLimitsHold(t *testing.T) {
	for _, ok := range []string{
		`{"a":{"b":{"c":{"d":{"e":["x"]}}}}}`, // MaxDepth objects
		`{"a":{"b":{"c":{"$or":[{"e":["x"]},{"f":["y"]}]}}}}`,
		`{"a":[` + strings.TrimSuffix(strings.Repeat(`1,`, MaxValues), ",") + `]}`,
		`{"a":["` + strings.Repeat("x", MaxBytes-10) + `"]}`,
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("Parse(%.60s): %v", ok, err)
		}
	}
}

func TestStringIsCompact(t *testing.T) {
	f := mustParse(t, "{ \"country\" : [ \"DE\" ] ,\n \"n\": [1.50] }")
	if got, want := f.String(), `{"country":["DE"],"n":[1.50]}`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

func TestMatchAllocatesNothing(t *testing.T) {
	f := mustParse(t, `{"country":["DE"],"amount":[{"numeric":[">=",100]}],"tier":[{"anything-but":"free"}],"coupon":[{"exists":false}],"items":{"sku":[{"prefix":"A"}]}}`)
	data := []byte(`{"id":"o_1","country":"DE","amount":120.5,"tier":"gold","note":"a \"quoted\" note","items":[{"sku":"B1"},{"sku":"A2"}],"meta":{"x":[1,2,3]}}`)
	if !f.Match(data) {
		t.Fatal("want a match")
	}
	if n := testing.AllocsPerRun(100, func() { f.Match(data) }); n != 0 {
		t.Errorf("Match allocates %v times, want 0", n)
	}
}

func mustParse(t testing.TB, s string) *Filter {
	t.Helper()
	f, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCache(t *testing.T) {
	c := Cache{Size: 2}
	a, err := c.Parse(`{"a":["x"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Parse(`{"a":["x"]}`); b != a {
		t.Error("the same text must give the cached filter")
	}
	if _, err := c.Parse(`{"a":"x"}`); err == nil {
		t.Error("a bad filter must give its error, cached or not")
	}
	if _, err := c.Parse(`{"a":"x"}`); err == nil {
		t.Error("a bad filter must give its error from the cache too")
	}
	c.Parse(`{"b":["y"]}`) // over Size: the cache starts again
	if len(c.m) > c.Size {
		t.Errorf("the cache holds %d, at most %d", len(c.m), c.Size)
	}
}

func TestParseRefusesWhatEventBridgeRefuses(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{`{"a":[{"numeric":[">",1.2345678901234567]}]}`, `filter.a[0].numeric: 1.2345678901234567 has more than 16 significant digits`},
		{`{"a":[{"numeric":[">",0,"<",12345678901234567e-10]}]}`, `filter.a[0].numeric: 12345678901234567e-10 has more than 16`},
		{`{"a":[{"anything-but":1.2345678901234567}]}`, `filter.a[0].anything-but: 1.2345678901234567 has more than 16`},
		{`{"a":[{"anything-but":[1,0.00012345678901234567]}]}`, `filter.a[0].anything-but[1]: 0.00012345678901234567 has more than 16`},
		{`{"a":[{"anything-but":{"prefix":""}}]}`, `filter.a[0].anything-but.prefix: anything-but prefix needs a non-empty string`},
		{`{"a":[{"anything-but":{"suffix":""}}]}`, `filter.a[0].anything-but.suffix: anything-but suffix needs a non-empty string`},
		{`{"$or":[{"a":["x"]},{"prefix":["y"]}]}`, `filter.$or[1].prefix: is named like an operator`},
		{`{"$or":[{"numeric":["x"]},{"b":["y"]}]}`, `filter.$or[0].numeric: is named like an operator`},
	} {
		_, err := Parse([]byte(tc.filter))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want %q...", tc.filter, err, tc.want)
		}
	}
	for _, ok := range []string{
		`{"a":[{"numeric":[">",1.234567890123456]}]}`, // 16 digits
		`{"a":[{"numeric":[">",100000000.0000000]}]}`, // trailing zeros are not significant
		`{"a":[{"anything-but":{"equals-ignore-case":""}}]}`,
		`{"prefix":["x"]}`, // outside $or a field may be named so
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("Parse(%s): %v", ok, err)
		}
	}
}

// TestExistsFalseInArrayOfObjects pins hookline's choice (docs/filters.md):
// in a nested pattern over an array of objects, exists: false is judged
// per element, like every other condition of the pattern; EventBridge's
// Event Ruler wants the field absent from every element.
func TestExistsFalseInArrayOfObjects(t *testing.T) {
	f := mustParse(t, `{"items":{"sku":["A1"],"gift":[{"exists":false}]}}`)
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{"items":[{"sku":"A1"},{"sku":"B2","gift":true}]}`, true}, // Ruler: false
		{`{"items":[{"sku":"A1","gift":true},{"sku":"B2"}]}`, false},
		{`{"items":[{"sku":"A1"}]}`, true},
		{`{"items":[{"sku":"A1","gift":"x"}]}`, false},
	} {
		if got := f.Match([]byte(tc.data)); got != tc.want {
			t.Errorf("Match(%s) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

func TestEvalOverBudget(t *testing.T) {
	f := mustParse(t, orOnOneField("a", 100))
	data := []byte(`{"a":[` + strings.TrimSuffix(strings.Repeat(`"xxxxxxxxxxxxxxx",`, 2000), ",") + `]}`)
	full, work := f.EvalWithin(data, 1<<62)
	if full != NotMatched || work <= 0 {
		t.Fatalf("unlimited: %v after %d work, want NotMatched after some", full, work)
	}
	if o, spent := f.EvalWithin(data, work/2); o != OverBudget || spent > work/2+f.factor*64 {
		t.Errorf("within half its work: %v after %d, want OverBudget soon after %d", o, spent, work/2)
	}
	if o, _ := f.EvalWithin(data, 0); o != OverBudget {
		t.Errorf("within 0: %v, want OverBudget", o)
	}
	if o := f.Eval(data); o != NotMatched {
		t.Errorf("Eval within the default budget = %v, want NotMatched", o)
	}
	if work > f.factor*len(data) {
		t.Errorf("work %d over the filter's linear bound %d x %d bytes", work, f.factor, len(data))
	}
}

// TestWorstShapesLinear: on every worst shape, matching's work stays
// within the filter's linear bound and the default budget.
func TestWorstShapesLinear(t *testing.T) {
	for _, s := range worstShapes() {
		f := mustParse(t, s.filter)
		o, work := f.EvalWithin(s.data, 1<<62)
		if work > f.factor*len(s.data) || work > Budget(len(s.data)) {
			t.Errorf("%s: work %d, bound %d, budget %d", s.name, work, f.factor*len(s.data), Budget(len(s.data)))
		}
		if o == OverBudget {
			t.Errorf("%s: over an unlimited budget", s.name)
		}
	}
}
