package filter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// worstShape is a filter and a payload built to make matching work hard:
// the shapes issue 34 names, each about 120 KB.
type worstShape struct {
	name   string
	filter string
	data   []byte
}

// orOnOneField is a $or of n branches, each naming field with a prefix
// that almost matches every leaf.
func orOnOneField(field string, n int) string {
	var b strings.Builder
	b.WriteString(`{"$or":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{%q:[{"prefix":"xxxxxxxxxxxxxxx%02d"}]}`, field, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// worstShapes are the shapes the matching-cost benchmark and the enqueue
// budget test use.
func worstShapes() []worstShape {
	filler := `"` + strings.Repeat("x", 470) + `"`
	// ~250 arrays nested in one another, each holding a string.
	nested := strings.Repeat(`[`+filler+`,`, 250) + `"y"` + strings.Repeat(`]`, 250)
	// one field holding ~5000 strings that share the prefixes' first bytes.
	var wide strings.Builder
	for i := 0; i < 5000; i++ {
		if i > 0 {
			wide.WriteByte(',')
		}
		wide.WriteString(`"xxxxxxxxxxxxxxxxxxxx"`)
	}
	// ~4000 keys, each escaped, none of them the filter's.
	var esc strings.Builder
	for i := 0; i < 4000; i++ {
		if i > 0 {
			esc.WriteByte(',')
		}
		fmt.Fprintf(&esc, `"\u0061\u0062\u0063\u0064%05d":"\u0078\u0079%d"`, i, i)
	}
	// a wide object whose every member is an object, the filter nested in
	// a $or of patterns on those members.
	var obj strings.Builder
	for i := 0; i < 2000; i++ {
		if i > 0 {
			obj.WriteByte(',')
		}
		fmt.Fprintf(&obj, `"k%d":{"a":[1,2,3],"b":{"c":"xxxxxxxxxxxxx"}}`, i%50)
	}
	var objFilter strings.Builder
	objFilter.WriteString(`{"$or":[`)
	for i := 0; i < 49; i++ {
		if i > 0 {
			objFilter.WriteByte(',')
		}
		fmt.Fprintf(&objFilter, `{"k%d":{"b":{"c":["nope"]}}}`, i)
	}
	objFilter.WriteString(`]}`)
	return []worstShape{
		{"nested arrays x 100-branch $or", orOnOneField("a", 100), []byte(`{"a":` + nested + `}`)},
		{"wide array x 100-branch $or", orOnOneField("a", 100), []byte(`{"a":[` + wide.String() + `]}`)},
		{"escaped keys", `{"abcd00001":["xy1"],"$or":[{"abcd03999":["xy3999"]},{"zz":[{"exists":false}]}]}`, []byte(`{` + esc.String() + `}`)},
		{"wide object x nested $or", objFilter.String(), []byte(`{` + obj.String() + `}`)},
	}
}

// BenchmarkMatchCost prints, for each worst shape, matching's cost per
// payload byte and json.Valid's on the same payload, and their ratio
// (match/valid): the figure docs/performance.md records.
func BenchmarkMatchCost(b *testing.B) {
	for _, s := range worstShapes() {
		f := mustParse(b, s.filter)
		if !json.Valid(s.data) {
			b.Fatalf("%s: the payload is not JSON", s.name)
		}
		b.Run(s.name, func(b *testing.B) {
			var valid float64
			for i := 0; i < 3; i++ { // json.Valid's cost, best of three runs of 20
				start := time.Now()
				for j := 0; j < 20; j++ {
					json.Valid(s.data)
				}
				if v := float64(time.Since(start).Nanoseconds()) / 20 / float64(len(s.data)); i == 0 || v < valid {
					valid = v
				}
			}
			b.SetBytes(int64(len(s.data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.Match(s.data)
			}
			b.StopTimer()
			match := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(s.data))
			b.ReportMetric(match, "match-ns/B")
			b.ReportMetric(valid, "valid-ns/B")
			b.ReportMetric(match/valid, "match/valid")
		})
	}
}
