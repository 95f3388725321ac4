package payloadschema

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/stretchr/testify/require"
)

func payment(v eventtypes.Validation) eventtypes.Type {
	return eventtypes.Type{Name: "payment.succeeded", Description: "A payment was captured.", Validation: v,
		Schema:  json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1},"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}}`),
		Example: json.RawMessage(`{"amount":1999}`)}
}

// validator is the validator of a checked catalog of types.
func validator(t *testing.T, types ...eventtypes.Type) *Validator {
	t.Helper()
	c, err := eventtypes.New(types)
	require.NoError(t, err)
	require.NoError(t, Check(c))
	return New(c)
}

func TestCheckCompilesEverySchemaAndItsExample(t *testing.T) {
	t.Parallel()
	bad := payment(eventtypes.ValidationOff)
	bad.Schema = json.RawMessage(`{"type":"nonsense"}`)
	c, err := eventtypes.New([]eventtypes.Type{bad})
	require.NoError(t, err)
	require.ErrorContains(t, Check(c), `event type "payment.succeeded": schema`)

	wrong := payment(eventtypes.ValidationOff)
	wrong.Example = json.RawMessage(`{"amount":"12"}`)
	c, err = eventtypes.New([]eventtypes.Type{wrong})
	require.NoError(t, err)
	require.ErrorContains(t, Check(c), "the example does not validate against the schema: at /amount: keyword type")

	ref := payment(eventtypes.ValidationOff)
	ref.Schema = json.RawMessage(`{"$ref":"https://example.com/other.json"}`)
	c, err = eventtypes.New([]eventtypes.Type{ref})
	require.NoError(t, err)
	require.ErrorContains(t, Check(c), "may refer only to itself")

	for schema, why := range map[string]string{
		`{"$ref":"#/$defs/missing"}`:                                        "may refer only to itself",
		`{"type":"string","pattern":"(["}`:                                  "pattern",
		`{"minLength":-1}`:                                                  "at /minLength: keyword minimum",
		`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`:        "may refer only to itself",
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"no"}`: "at /type",
	} {
		bad := payment(eventtypes.ValidationOff)
		bad.Schema = json.RawMessage(schema)
		c, err := eventtypes.New([]eventtypes.Type{bad})
		require.NoError(t, err)
		require.ErrorContains(t, Check(c), why, schema)
	}

	// A draft-07 schema says so, and is compiled as one.
	d7 := payment(eventtypes.ValidationOff)
	d7.Schema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)
	validator(t, d7)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	c := validator(t, payment(eventtypes.ValidationReject))
	for _, tc := range []struct {
		payload, path, keyword string
	}{
		{`{"amount":1999}`, "", ""},
		{`{"amount":"1999"}`, "/amount", "type"},
		{`{"amount":0}`, "/amount", "minimum"},
		{`{}`, "", "required"},
		{`[]`, "", "type"},
		{`{"amount":1,"items":[{"sku":"a"},{"sku":7}]}`, "/items/1/sku", "type"},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			t.Parallel()
			mode, m, err := c.Validate("payment.succeeded", []byte(tc.payload))
			require.NoError(t, err)
			require.Equal(t, eventtypes.ValidationReject, mode)
			if tc.keyword == "" {
				require.Nil(t, m)
				return
			}
			require.NotNil(t, m)
			require.Equal(t, tc.path, m.Path)
			require.Equal(t, tc.keyword, m.Keyword)
			require.Contains(t, m.Detail, "keyword "+tc.keyword)
			require.LessOrEqual(t, len(m.Detail), MaxDetailBytes)
		})
	}
	// Unknown types, off, and no catalog: nothing validated.
	mode, m, err := c.Validate("order.created", []byte(`"x"`))
	require.Equal(t, eventtypes.ValidationOff, mode)
	require.Nil(t, m)
	require.NoError(t, err)
	off := validator(t, payment(""))
	mode, m, _ = off.Validate("payment.succeeded", []byte(`"x"`))
	require.Equal(t, eventtypes.ValidationOff, mode)
	require.Nil(t, m)
	mode, _, _ = New(nil).Validate("payment.succeeded", []byte(`"x"`))
	require.Equal(t, eventtypes.ValidationOff, mode)
}

func TestAMismatchNeverQuotesThePayload(t *testing.T) {
	t.Parallel()
	typ := payment(eventtypes.ValidationWarn)
	typ.Schema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
		"card":{"type":"string","maxLength":4},"brand":{"enum":["visa"]},"pin":{"not":{"type":"string"}},
		"exp":{"type":"string","pattern":"^[0-9]{2}/[0-9]{2}$"},"cvc":{"const":"000"},"n":{"minimum":10}}}`)
	typ.Example = json.RawMessage(`{"card":"4242"}`)
	c := validator(t, typ)
	for payload, want := range map[string]Mismatch{
		`{"card":"4242424242424242"}`: {Path: "/card", Keyword: "maxLength"},
		`{"brand":"SECRET-BRAND"}`:    {Path: "/brand", Keyword: "enum"},
		`{"pin":"SECRET-PIN"}`:        {Path: "/pin", Keyword: "not"},
		`{"exp":"SECRET-EXP"}`:        {Path: "/exp", Keyword: "pattern"},
		`{"cvc":"SECRET-CVC"}`:        {Path: "/cvc", Keyword: "const"},
		`{"n":-77777}`:                {Path: "/n", Keyword: "minimum"},
		`{"SECRET-KEY/~x":1}`:         {Path: "/SECRET-KEY~1~0x", Keyword: "additionalProperties"},
	} {
		_, m, err := c.Validate("payment.succeeded", []byte(payload))
		require.NoError(t, err)
		require.NotNil(t, m, payload)
		require.Equal(t, want.Path, m.Path, payload)
		require.Equal(t, want.Keyword, m.Keyword, payload)
		for _, secret := range []string{"4242424242424242", "SECRET-BRAND", "SECRET-PIN", "SECRET-EXP", "SECRET-CVC", "77777"} {
			require.NotContains(t, m.Detail, secret)
		}
	}
}

// A reference inside the schema is followed, and the path is the
// payload's, not the schema's.
func TestAMismatchThroughAReferenceNamesThePayloadsPath(t *testing.T) {
	t.Parallel()
	typ := payment(eventtypes.ValidationReject)
	typ.Schema = json.RawMessage(`{"$defs":{"line":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"}}}},
		"type":"object","properties":{"lines":{"type":"array","items":{"$ref":"#/$defs/line"}},"any":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`)
	typ.Example = json.RawMessage(`{"lines":[{"sku":"a"}]}`)
	c := validator(t, typ)
	_, m, err := c.Validate("payment.succeeded", []byte(`{"lines":[{"sku":"a"},{"sku":"b"},{}]}`))
	require.NoError(t, err)
	require.Equal(t, Mismatch{Path: "/lines/2", Keyword: "required", Detail: "at /lines/2: keyword required: missing property 'sku'"}, *m)
	_, m, err = c.Validate("payment.succeeded", []byte(`{"any":true}`))
	require.NoError(t, err)
	require.Equal(t, "/any", m.Path)
	require.Equal(t, "type", m.Keyword)
}

func TestEachSchemaCompiledOnce(t *testing.T) {
	t.Parallel()
	v := validator(t, payment(eventtypes.ValidationReject))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _, err := v.Validate("payment.succeeded", []byte(`{"amount":1}`))
			require.NoError(t, err)
		})
	}
	wg.Wait()
	first := v.types["payment.succeeded"].schema
	_, _, err := v.Validate("payment.succeeded", []byte(`{"amount":1}`))
	require.NoError(t, err)
	require.NotNil(t, first)
	require.Same(t, first, v.types["payment.succeeded"].schema, "compiled once")
}

// A payload that breaks several rules is refused with the same one every
// time, the one at the smallest path: the validator walks an object's
// properties in a map's order.
func TestAMismatchIsTheSameEveryTime(t *testing.T) {
	t.Parallel()
	typ := payment(eventtypes.ValidationReject)
	typ.Schema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"d":{"type":"integer"}}}`)
	typ.Example = json.RawMessage(`{"a":1}`)
	c := validator(t, typ)
	for range 50 {
		_, m, err := c.Validate("payment.succeeded", []byte(`{"d":"x","c":"x","b":"x","a":"x"}`))
		require.NoError(t, err)
		require.NotNil(t, m)
		require.Equal(t, "/a", m.Path)
	}
}
