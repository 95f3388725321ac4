package eventtypes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustNew(t *testing.T, types ...Type) *Catalog {
	t.Helper()
	c, err := New(types)
	require.NoError(t, err)
	require.NoError(t, c.Check())
	return c
}

func payment(v Validation) Type {
	return Type{Name: "payment.succeeded", Description: "A payment was captured.", Validation: v,
		Schema:  json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1},"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}}}`),
		Example: json.RawMessage(`{"amount":1999}`)}
}

func TestNewRefusesWhatCannotBeDeployed(t *testing.T) {
	t.Parallel()
	ok := payment(ValidationReject)
	for _, tc := range []struct {
		name string
		edit func(*Type)
		want string
	}{
		{"empty name", func(t *Type) { t.Name = "" }, "the name must be"},
		{"wildcard", func(t *Type) { t.Name = "payment.*" }, "the name must be"},
		{"empty segment", func(t *Type) { t.Name = "payment..x" }, "the name must be"},
		{"too long", func(t *Type) { t.Name = strings.Repeat("a", MaxNameBytes+1) }, "the name must be"},
		{"reserved", func(t *Type) { t.Name = "endpoint.disabled" }, "reserved"},
		{"validation", func(t *Type) { t.Validation = "strict" }, `validation "strict"`},
		{"no schema", func(t *Type) { t.Schema = nil }, "schema is required"},
		{"no example", func(t *Type) { t.Example = nil }, "example is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			typ := ok
			tc.edit(&typ)
			_, err := New([]Type{typ})
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := New([]Type{ok, ok})
	require.ErrorContains(t, err, "declared twice")
}

func TestCheckCompilesEverySchemaAndItsExample(t *testing.T) {
	t.Parallel()
	bad := payment(ValidationOff)
	bad.Schema = json.RawMessage(`{"type":"nonsense"}`)
	c, err := New([]Type{bad})
	require.NoError(t, err)
	require.ErrorContains(t, c.Check(), `event type "payment.succeeded": schema`)

	wrong := payment(ValidationOff)
	wrong.Example = json.RawMessage(`{"amount":"12"}`)
	c, err = New([]Type{wrong})
	require.NoError(t, err)
	require.ErrorContains(t, c.Check(), "the example does not validate against the schema: at /amount: keyword type")

	ref := payment(ValidationOff)
	ref.Schema = json.RawMessage(`{"$ref":"https://example.com/other.json"}`)
	c, err = New([]Type{ref})
	require.NoError(t, err)
	require.ErrorContains(t, c.Check(), "may refer only to itself")

	// A draft-07 schema says so, and is compiled as one.
	d7 := payment(ValidationOff)
	d7.Schema = json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)
	mustNew(t, d7)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	c := mustNew(t, payment(ValidationReject))
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
			require.Equal(t, ValidationReject, mode)
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
	require.Equal(t, ValidationOff, mode)
	require.Nil(t, m)
	require.NoError(t, err)
	off := mustNew(t, payment(""))
	mode, m, _ = off.Validate("payment.succeeded", []byte(`"x"`))
	require.Equal(t, ValidationOff, mode)
	require.Nil(t, m)
	var none *Catalog
	mode, _, _ = none.Validate("payment.succeeded", []byte(`"x"`))
	require.Equal(t, ValidationOff, mode)
}

func TestAMismatchNeverQuotesThePayload(t *testing.T) {
	t.Parallel()
	typ := payment(ValidationWarn)
	typ.Schema = json.RawMessage(`{"type":"object","properties":{"card":{"type":"string","maxLength":4}}}`)
	typ.Example = json.RawMessage(`{"card":"4242"}`)
	c := mustNew(t, typ)
	_, m, err := c.Validate("payment.succeeded", []byte(`{"card":"4242424242424242"}`))
	require.NoError(t, err)
	require.Equal(t, "/card", m.Path)
	require.NotContains(t, m.Detail, "4242424242424242")
}

func TestEachSchemaCompiledOnce(t *testing.T) {
	t.Parallel()
	c, err := New([]Type{payment(ValidationReject)})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _, err := c.Validate("payment.succeeded", []byte(`{"amount":1}`))
			require.NoError(t, err)
		})
	}
	wg.Wait()
	first, _ := c.schema(0)
	second, _ := c.schema(0)
	require.Same(t, first.s, second.s)
}

func TestMatches(t *testing.T) {
	t.Parallel()
	c := mustNew(t, payment(""))
	for entry, want := range map[string]bool{
		"*": true, "payment.*": true, "payment.succeeded": true,
		"payment.failed": false, "order.*": false, "pay.*": false, "payment.succeeded.*": false,
		"endpoint.disabled": true, "endpoint.*": true, "delivery.dead": true, "hookline.test": true,
	} {
		require.Equal(t, want, c.Matches(entry), entry)
	}
	var none *Catalog
	require.True(t, none.Matches("anything.at.all"))
}

func TestFileRoundTripAndDir(t *testing.T) {
	t.Parallel()
	types, err := LoadDir("testdata/catalog")
	require.NoError(t, err)
	c := mustNew(t, types...)
	require.Equal(t, []string{"order.created", "payment.succeeded"}, []string{c.Types()[0].Name, c.Types()[1].Name})
	require.Equal(t, ValidationWarn, c.Types()[0].Validation)

	data, err := Marshal(c.Types())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	back, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, c.Types(), back.Types())

	none, err := Open("")
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = LoadDir(t.TempDir())
	require.ErrorContains(t, err, "no *.json file")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.json"), []byte(`{"name":"x","schemas":{}}`), 0o644))
	_, err = LoadDir(dir)
	require.ErrorContains(t, err, "unknown field")
}
