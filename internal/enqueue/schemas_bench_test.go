package enqueue

import (
	"encoding/json"
	"testing"

	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/payloadschema"
	"github.com/hookline/hookline/tooling/perf/ratio"
)

// benchSchema is a schema of the bench payload (benchPayload) as an
// operator would write it: its required fields, their types, the nested
// customer, card and lines, a pattern and bounds.
const benchSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["object", "id", "amount", "currency", "status", "customer", "lines"],
  "properties": {
    "object": {"const": "payment"},
    "id": {"type": "string", "pattern": "^pay_[A-Za-z0-9]+$"},
    "amount": {"type": "integer", "minimum": 1},
    "amount_received": {"type": "integer", "minimum": 0},
    "currency": {"type": "string", "minLength": 3, "maxLength": 3},
    "status": {"enum": ["succeeded", "processing", "failed"]},
    "livemode": {"type": "boolean"},
    "customer": {"type": "object", "required": ["id", "email"], "properties": {
      "id": {"type": "string"}, "email": {"type": "string"}, "name": {"type": "string"},
      "address": {"type": "object", "properties": {"country": {"type": "string", "minLength": 2, "maxLength": 2}}}}},
    "payment_method": {"type": "object", "properties": {"type": {"type": "string"},
      "card": {"type": "object", "properties": {"last4": {"type": "string", "maxLength": 4}, "exp_month": {"type": "integer", "minimum": 1, "maximum": 12}}}}},
    "lines": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["sku", "quantity"], "properties": {
      "sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}, "unit_amount": {"type": "integer"}}}},
    "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
    "created": {"type": "integer"}
  }
}`

// benchCatalog is a catalog of the bench event's type (payment.succeeded)
// with validation v, and nine other types, compiled as an instance would
// (the first validation compiles the schema; ratio.Compare's warm-up runs it).
func benchCatalog(b *testing.B, v eventtypes.Validation) *payloadschema.Validator {
	types := []eventtypes.Type{{Name: "payment.succeeded", Schema: json.RawMessage(benchSchema), Example: benchPayload(), Validation: v}}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		types = append(types, eventtypes.Type{Name: "other." + name, Schema: json.RawMessage(benchSchema), Example: benchPayload(), Validation: eventtypes.ValidationReject})
	}
	c, err := eventtypes.New(types)
	if err != nil {
		b.Fatal(err)
	}
	if err := payloadschema.Check(c); err != nil {
		b.Fatal(err)
	}
	return payloadschema.New(c)
}

// BenchmarkEnqueueSchemaValidation is the enqueue path of one stream
// record (BenchmarkEnqueueVsDecode's, one endpoint) with an event-type
// catalog whose type for the record has validation off, warn and reject
// (the payload validates, so each is delivered: the price every record of
// the type pays). validation=off is held against decoding the record
// alone (the enqueue path's own ratio, target 2x); warn and reject
// against the same path with validation off, in the same run,
// alternating blocks (ratio.Compare): what validating a 1 KB payload
// against its schema adds. Printed, never asserted.
func BenchmarkEnqueueSchemaValidation(b *testing.B) {
	raw := benchEventJSON(b)
	b.Run("validation=off", func(b *testing.B) {
		ratio.Compare(b, "enqueue", enqueueOpWith(b, raw, 1, "", benchCatalog(b, eventtypes.ValidationOff)), "decode", decodeOp(b, raw))
	})
	for _, v := range []eventtypes.Validation{eventtypes.ValidationWarn, eventtypes.ValidationReject} {
		b.Run("validation="+string(v), func(b *testing.B) {
			off := enqueueOpWith(b, raw, 1, "", benchCatalog(b, eventtypes.ValidationOff))
			ratio.Compare(b, "enqueue", enqueueOpWith(b, raw, 1, "", benchCatalog(b, v)), "off", off)
		})
	}
}
