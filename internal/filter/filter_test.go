package filter

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Cases is the table of (filter, data, want) that the unit tests run and
// the e2e test (e2e/filter_test.go) runs through EventBridge's
// TestEventPattern on the local cloud as well. Each want is EventBridge's
// answer as its documentation states it.
var Cases = []struct {
	Name, Filter, Data string
	Want               bool
}{
	{"exact string", `{"country":["DE"]}`, `{"country":"DE"}`, true},
	{"exact string other", `{"country":["DE"]}`, `{"country":"FR"}`, false},
	{"exact string any of", `{"country":["FR","DE"]}`, `{"country":"DE"}`, true},
	{"exact missing", `{"country":["DE"]}`, `{"city":"Berlin"}`, false},
	{"exact case matters", `{"country":["DE"]}`, `{"country":"de"}`, false},
	{"exact number", `{"n":[5]}`, `{"n":5}`, true},
	{"exact number as number", `{"n":[300]}`, `{"n":3.0e2}`, true},
	{"exact number not string", `{"n":[5]}`, `{"n":"5"}`, false},
	{"exact string not number", `{"n":["5"]}`, `{"n":5}`, false},
	{"exact true", `{"b":[true]}`, `{"b":true}`, true},
	{"exact true not false", `{"b":[true]}`, `{"b":false}`, false},
	{"exact null", `{"b":[null]}`, `{"b":null}`, true},
	{"null not empty string", `{"b":[null]}`, `{"b":""}`, false},
	{"empty string", `{"b":[""]}`, `{"b":""}`, true},
	{"escaped string", `{"s":["a\"b"]}`, `{"s":"a\u0022b"}`, true},
	{"array any element", `{"tags":["vip"]}`, `{"tags":["new","vip"]}`, true},
	{"array no element", `{"tags":["vip"]}`, `{"tags":["new"]}`, false},
	{"nested", `{"customer":{"tier":["gold"]}}`, `{"customer":{"tier":"gold","id":1}}`, true},
	{"nested other", `{"customer":{"tier":["gold"]}}`, `{"customer":{"tier":"free"}}`, false},
	{"nested in array of objects", `{"items":{"sku":["A1"]}}`, `{"items":[{"sku":"B2"},{"sku":"A1"}]}`, true},
	{"array element consistency", `{"items":{"sku":["A1"],"qty":[2]}}`, `{"items":[{"sku":"A1","qty":1},{"sku":"B2","qty":2}]}`, false},
	{"array element consistency ok", `{"items":{"sku":["A1"],"qty":[2]}}`, `{"items":[{"sku":"B2","qty":1},{"sku":"A1","qty":2}]}`, true},
	{"leaf pattern on object", `{"customer":["x"]}`, `{"customer":{"a":"x"}}`, false},
	{"prefix", `{"sku":[{"prefix":"AB-"}]}`, `{"sku":"AB-12"}`, true},
	{"prefix no", `{"sku":[{"prefix":"AB-"}]}`, `{"sku":"XAB-12"}`, false},
	{"prefix not on number", `{"n":[{"prefix":"1"}]}`, `{"n":12}`, false},
	{"prefix ignore case", `{"sku":[{"prefix":{"equals-ignore-case":"ab-"}}]}`, `{"sku":"Ab-12"}`, true},
	{"suffix", `{"file":[{"suffix":".png"}]}`, `{"file":"a.png"}`, true},
	{"suffix no", `{"file":[{"suffix":".png"}]}`, `{"file":"a.PNG"}`, false},
	{"suffix ignore case", `{"file":[{"suffix":{"equals-ignore-case":".png"}}]}`, `{"file":"a.PNG"}`, true},
	{"equals-ignore-case", `{"c":[{"equals-ignore-case":"de"}]}`, `{"c":"De"}`, true},
	{"equals-ignore-case no", `{"c":[{"equals-ignore-case":"de"}]}`, `{"c":"Dex"}`, false},
	{"anything-but string", `{"tier":[{"anything-but":"free"}]}`, `{"tier":"gold"}`, true},
	{"anything-but string same", `{"tier":[{"anything-but":"free"}]}`, `{"tier":"free"}`, false},
	{"anything-but missing", `{"tier":[{"anything-but":"free"}]}`, `{"x":1}`, false},
	{"anything-but list", `{"tier":[{"anything-but":["free","trial"]}]}`, `{"tier":"trial"}`, false},
	{"anything-but number", `{"n":[{"anything-but":[1,2]}]}`, `{"n":3}`, true},
	{"anything-but number same", `{"n":[{"anything-but":[1,2]}]}`, `{"n":2.0}`, false},
	{"anything-but null", `{"tier":[{"anything-but":"free"}]}`, `{"tier":null}`, true},
	{"anything-but array any", `{"tags":[{"anything-but":"a"}]}`, `{"tags":["a","b"]}`, true},
	{"anything-but array all", `{"tags":[{"anything-but":"a"}]}`, `{"tags":["a","a"]}`, false},
	{"anything-but prefix", `{"r":[{"anything-but":{"prefix":"us-"}}]}`, `{"r":"eu-west-1"}`, true},
	{"anything-but prefix same", `{"r":[{"anything-but":{"prefix":"us-"}}]}`, `{"r":"us-east-1"}`, false},
	{"anything-but suffix", `{"f":[{"anything-but":{"suffix":".png"}}]}`, `{"f":"a.png"}`, false},
	{"anything-but ignore case", `{"s":[{"anything-but":{"equals-ignore-case":"init"}}]}`, `{"s":"INIT"}`, false},
	{"numeric >=", `{"amount":[{"numeric":[">=",100]}]}`, `{"amount":100}`, true},
	{"numeric >= no", `{"amount":[{"numeric":[">=",100]}]}`, `{"amount":99.99}`, false},
	{"numeric range", `{"n":[{"numeric":[">",0,"<=",5]}]}`, `{"n":5}`, true},
	{"numeric range out", `{"n":[{"numeric":[">",0,"<=",5]}]}`, `{"n":0}`, false},
	{"numeric =", `{"n":[{"numeric":["=",3.018e2]}]}`, `{"n":301.8}`, true},
	{"numeric not string", `{"n":[{"numeric":[">",0]}]}`, `{"n":"5"}`, false},
	{"numeric six decimals", `{"n":[{"numeric":["=",1.0000001]}]}`, `{"n":1.0000002}`, true},
	{"numeric event out of range", `{"n":[{"numeric":[">",0]}]}`, `{"n":6e9}`, false},
	{"numeric array any", `{"n":[{"numeric":[">",10]}]}`, `{"n":[1,20]}`, true},
	{"exists true", `{"coupon":[{"exists":true}]}`, `{"coupon":"X"}`, true},
	{"exists true null", `{"coupon":[{"exists":true}]}`, `{"coupon":null}`, true},
	{"exists true missing", `{"coupon":[{"exists":true}]}`, `{"x":1}`, false},
	{"exists false missing", `{"coupon":[{"exists":false}]}`, `{"x":1}`, true},
	{"exists false present", `{"coupon":[{"exists":false}]}`, `{"coupon":"X"}`, false},
	{"exists false object", `{"coupon":[{"exists":false}]}`, `{"coupon":{"code":"X"}}`, true},
	{"exists false empty array", `{"coupon":[{"exists":false}]}`, `{"coupon":[]}`, true},
	{"exists true empty array", `{"coupon":[{"exists":true}]}`, `{"coupon":[]}`, false},
	{"exists false nested missing parent", `{"a":{"b":[{"exists":false}]}}`, `{"x":1}`, true},
	{"exists false nested scalar parent", `{"a":{"b":[{"exists":false}]}}`, `{"a":"s"}`, true},
	{"exists or value", `{"c":[{"exists":false},"X"]}`, `{"c":"X"}`, true},
	{"or first", `{"$or":[{"country":["DE"]},{"amount":[{"numeric":[">",1000]}]}]}`, `{"country":"DE","amount":1}`, true},
	{"or second", `{"$or":[{"country":["DE"]},{"amount":[{"numeric":[">",1000]}]}]}`, `{"country":"FR","amount":5000}`, true},
	{"or none", `{"$or":[{"country":["DE"]},{"amount":[{"numeric":[">",1000]}]}]}`, `{"country":"FR","amount":5}`, false},
	{"or and field", `{"type":["b2b"],"$or":[{"country":["DE"]},{"vip":[true]}]}`, `{"type":"b2c","country":"DE"}`, false},
	{"or nested", `{"c":{"$or":[{"a":["1"]},{"b":["2"]}]}}`, `{"c":{"b":"2"}}`, true},
	{"and fields", `{"country":["DE"],"amount":[{"numeric":[">=",100]}]}`, `{"country":"DE","amount":50}`, false},
	{"brief example", `{"country":["DE"],"amount":[{"numeric":[">=",100]}],"tier":[{"anything-but":"free"}],"coupon":[{"exists":false}]}`, `{"country":"DE","amount":120,"tier":"gold"}`, true},
	{"duplicate key last wins", `{"c":["DE"]}`, `{"c":"FR","c":"DE"}`, true},
	{"unicode", `{"city":["Zürich"]}`, `{"city":"Z\u00fcrich"}`, true},
}

func TestMatch(t *testing.T) {
	for _, tc := range Cases {
		t.Run(tc.Name, func(t *testing.T) {
			f, err := Parse([]byte(tc.Filter))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tc.Filter, err)
			}
			if got := f.Match([]byte(tc.Data)); got != tc.Want {
				t.Errorf("Match(%s, %s) = %v, want %v", tc.Filter, tc.Data, got, tc.Want)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, []byte(tc.Data), "", "  \t"); err != nil {
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
