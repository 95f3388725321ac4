package payloadschema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/outbox"
)

// hostilePayload is the costliest payload shape the outbox accepts for a
// validator: just under outbox.MaxPayloadBytes of keys, each an array
// nested 30 deep (within outbox.MaxPayloadDepth) around a string.
func hostilePayload() []byte {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; b.Len() < outbox.MaxPayloadBytes-100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":%s"x"%s`, i, strings.Repeat("[", 30), strings.Repeat("]", 30))
	}
	b.WriteString("}")
	return []byte(b.String())
}

// BenchmarkValidateHostilePayload: what a validated type's worst payload
// costs enqueue, against decoding the same payload (x-decode), measured in
// the same run, alternating. "recursive" is a schema that tries two
// branches (anyOf) at every level of the nesting; "flat" one keyword per
// property. docs/performance.md reads it.
func BenchmarkValidateHostilePayload(b *testing.B) {
	payload := hostilePayload()
	for name, schema := range map[string]string{
		"recursive": `{"type":"object","additionalProperties":{"$ref":"#/$defs/n"},"$defs":{"n":{"anyOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"array","items":{"$ref":"#/$defs/n"}}]}}}`,
		"flat":      `{"type":"object","additionalProperties":{"type":"string"}}`,
	} {
		b.Run(name, func(b *testing.B) {
			s, err := compile("bench.hostile", json.RawMessage(schema))
			if err != nil {
				b.Fatal(err)
			}
			var decode, validate time.Duration
			for b.Loop() {
				t0 := time.Now()
				var v any
				if err := json.Unmarshal(payload, &v); err != nil {
					b.Fatal(err)
				}
				decode += time.Since(t0)
				t0 = time.Now()
				check(s, payload)
				validate += time.Since(t0)
			}
			b.ReportMetric(float64(len(payload)), "payload-bytes")
			b.ReportMetric(float64(validate)/float64(b.N)/1e6, "validate-ms/op")
			b.ReportMetric(float64(validate)/float64(decode), "x-decode")
		})
	}
}
