package eventtypes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustNew(t *testing.T, types ...Type) *Catalog {
	t.Helper()
	c, err := New(types)
	require.NoError(t, err)
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
		{"description", func(t *Type) { t.Description = strings.Repeat("d", MaxDescriptionBytes+1) }, "the description is 1025 bytes"},
		{"schema and example", func(t *Type) {
			t.Example = json.RawMessage(`"` + strings.Repeat("x", MaxTypeBytes) + `"`)
		}, "schema and example are"},
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

// The catalog's bounds: its types and their bytes together, each at the
// bound accepted and one past it refused.
func TestNewBoundsTheCatalog(t *testing.T) {
	t.Parallel()
	named := func(n int, example string) []Type {
		types := make([]Type, n)
		for i := range types {
			types[i] = Type{Name: fmt.Sprintf("t.%04d", i), Schema: json.RawMessage(`{}`), Example: json.RawMessage(example)}
		}
		return types
	}
	_, err := New(named(MaxTypes, `1`))
	require.NoError(t, err)
	_, err = New(named(MaxTypes+1, `1`))
	require.ErrorContains(t, err, "1001 types, at most 1000")

	// Eight types of 64 KiB examples pass 512 KiB with their names.
	big := `"` + strings.Repeat("x", MaxTypeBytes-4) + `"`
	_, err = New(named(7, big))
	require.NoError(t, err)
	_, err = New(named(8, big))
	require.ErrorContains(t, err, `pass 524288 bytes together, compacted (at "t.0007")`)
}

// A file larger than any catalog New accepts is not read whole.
func TestOpenRefusesAFileNoCatalogMakes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, os.WriteFile(path, []byte(`{"event_types":[`+strings.Repeat(" ", maxFileBytes)+`]}`), 0o600))
	_, err := Open(path)
	require.ErrorContains(t, err, "larger than")
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
