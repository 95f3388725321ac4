package filter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: Parse never panics, and a filter it accepts parses again from
// its String (the stored form) into one that matches the same documents.
func FuzzParse(f *testing.F) {
	for _, tc := range Cases {
		f.Add(string(tc.Filter))
	}
	for _, s := range []string{`{"a":[{"numeric":[">",0,"<",1]}]}`, `{"$or":[{"a":[1]},{"b":[null]}]}`, `{"a":[{"anything-but":{"prefix":""}}]}`, `{"a":{"b":{"c":[{"exists":true}]}}}`, `{"a":[1e400]}`, `{"a":["\ud800"]}`} {
		f.Add(s)
	}
	docs := fuzzDocs()
	f.Fuzz(func(t *testing.T, text string) {
		flt, err := Parse([]byte(text))
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse error %T, want *Error", err)
			}
			return
		}
		again, err := Parse([]byte(flt.String()))
		if err != nil {
			t.Fatalf("String() %s does not parse: %v", flt.String(), err)
		}
		for _, d := range docs {
			if flt.Match(d) != again.Match(d) {
				t.Fatalf("%s and its String() disagree on %s", text, d)
			}
		}
	})
}

// FuzzMatch: Match never panics on any bytes; on a JSON document it gives
// the answer of the reference matcher below (an independent, plain
// reading of the same rules on the decoded document) whatever the
// document's whitespace.
func FuzzMatch(f *testing.F) {
	for _, tc := range Cases {
		f.Add(string(tc.Filter), string(tc.Data))
	}
	f.Add(`{"a":[{"exists":false}]}`, `[[[[`)
	f.Add(`{"a":{"b":["x"]}}`, `{"a":[[{"b":"x"}],[]]}`)
	f.Add(`{"$or":[{"a":["x"]},{"a":[{"prefix":"y"}]},{"a":{"b":[1]}}]}`, `{"a":[[[["y",{"b":1}]]]],"\u0061":["x"]}`)
	f.Fuzz(func(t *testing.T, text, data string) {
		flt, err := Parse([]byte(text))
		if err != nil {
			return
		}
		o, work := flt.EvalWithin([]byte(data), 1<<62)
		if bound := flt.factor * (len(data) + 1); work > bound {
			t.Fatalf("Match(%s, %.80s) worked %d, over its linear bound %d", text, data, work, bound)
		}
		if o == OverBudget {
			t.Fatalf("Match(%s, %.80s) is over an unlimited budget", text, data)
		}
		if b := Budget(len(data)); work <= b && flt.Eval([]byte(data)) == OverBudget {
			t.Fatalf("Match(%s, %.80s) worked %d within its budget %d, yet answered OverBudget", text, data, work, b)
		}
		got := o == Matched
		if !json.Valid([]byte(data)) || !utf8.ValidString(data) {
			return
		}
		var pretty bytes.Buffer
		if json.Indent(&pretty, []byte(data), " ", "\t") == nil && flt.Match(pretty.Bytes()) != got {
			t.Fatalf("Match(%s) changes with whitespace", data)
		}
		if want := refMatchText(t, text, data); got != want {
			t.Fatalf("Match(%s, %s) = %v, the reference says %v", text, data, got, want)
		}
	})
}

func fuzzDocs() [][]byte {
	var docs [][]byte
	for _, tc := range Cases {
		docs = append(docs, tc.Data)
	}
	return append(docs, []byte(`{}`), []byte(`[]`), []byte(`{"a":[1,"x",null,true,{"b":2}]}`))
}

// refMatchText decodes both and runs refMatch.
func refMatchText(t *testing.T, text, data string) bool {
	var pat, doc any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&pat); err != nil {
		t.Fatal(err)
	}
	dec = json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.(map[string]any); !ok {
		doc = map[string]any{}
	}
	return refMatch(pat.(map[string]any), doc)
}

func refMatch(pat map[string]any, doc any) bool {
	obj, _ := doc.(map[string]any)
	for key, pv := range pat {
		if key == "$or" {
			hit := false
			for _, b := range pv.([]any) {
				hit = hit || refMatch(b.(map[string]any), doc)
			}
			if !hit {
				return false
			}
			continue
		}
		val, present := obj[key]
		if sub, ok := pv.(map[string]any); ok {
			cands := flat(val, true)
			if !present || len(cands) == 0 {
				cands = []any{map[string]any{}}
			}
			hit := false
			for _, c := range cands {
				hit = hit || refMatch(sub, c)
			}
			if !hit {
				return false
			}
			continue
		}
		if !refLeaf(pv.([]any), val, present) {
			return false
		}
	}
	return true
}

func refLeaf(conds []any, val any, present bool) bool {
	var leaves []any
	if present {
		leaves = flat(val, false)
	}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["exists"] != nil {
			if m["exists"].(bool) == (len(leaves) > 0) {
				return true
			}
			continue
		}
	}
	for _, leaf := range leaves {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["exists"] == nil && refOp(m, leaf) {
				return true
			} else if !ok && refEqual(c, leaf) {
				return true
			}
		}
	}
	return false
}

// flat is v's objects (objects) or scalars, looking into nested arrays.
func flat(v any, objects bool) []any {
	switch v := v.(type) {
	case []any:
		var out []any
		for _, e := range v {
			out = append(out, flat(e, objects)...)
		}
		return out
	case map[string]any:
		if objects {
			return []any{v}
		}
		return nil
	}
	if objects {
		return nil
	}
	return []any{v}
}

func refNumber(n json.Number) (int64, bool) {
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f < -5e9 || f > 5e9 {
		return 0, false
	}
	return int64(1e6 * (5e9 + f)), true
}

func refEqual(c, leaf any) bool {
	switch c := c.(type) {
	case json.Number:
		l, ok := leaf.(json.Number)
		if !ok {
			return false
		}
		a, aok := refNumber(c)
		b, bok := refNumber(l)
		return (aok && bok && a == b) || c.String() == l.String()
	case nil:
		return leaf == nil
	}
	return c == leaf
}

func refOp(m map[string]any, leaf any) bool {
	s, isString := leaf.(string)
	for op, v := range m {
		switch op {
		case "prefix", "suffix":
			p, fold := v.(string)
			if !fold {
				p = v.(map[string]any)["equals-ignore-case"].(string)
			}
			fold = !fold
			if !isString {
				return false
			}
			if fold {
				return refFold(s, p, op == "prefix")
			}
			return (op == "prefix" && strings.HasPrefix(s, p)) || (op == "suffix" && strings.HasSuffix(s, p))
		case "equals-ignore-case":
			return isString && utf8.RuneCountInString(s) == utf8.RuneCountInString(v.(string)) && refFold(s, v.(string), true)
		case "anything-but":
			switch v := v.(type) {
			case []any:
				for _, x := range v {
					if refEqual(x, leaf) {
						return false
					}
				}
				return true
			case map[string]any:
				return !refOp(v, leaf)
			}
			return !refEqual(v, leaf)
		case "numeric":
			n, ok := leaf.(json.Number)
			if !ok {
				return false
			}
			q, ok := refNumber(n)
			args := v.([]any)
			for i := 0; ok && i < len(args); i += 2 {
				b, _ := refNumber(args[i+1].(json.Number))
				switch args[i].(string) {
				case "<":
					ok = q < b
				case "<=":
					ok = q <= b
				case "=":
					ok = q == b
				case ">":
					ok = q > b
				case ">=":
					ok = q >= b
				}
			}
			return ok
		}
	}
	return false
}

// refFold compares s's first (prefix) or last runes with p's, each of p's
// runes in either case.
func refFold(s, p string, prefix bool) bool {
	sr, pr := []rune(s), []rune(p)
	if len(sr) < len(pr) {
		return false
	}
	if !prefix {
		sr = sr[len(sr)-len(pr):]
	}
	for i, o := range pr {
		if !foldRune(sr[i], o) {
			return false
		}
	}
	return true
}
