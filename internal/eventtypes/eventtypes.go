package eventtypes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookline/hookline/outbox"
)

// FileName is the catalog's file in a function's code, beside its
// bootstrap: {"event_types": [Type, ...]}.
const FileName = "event-types.json"

// MaxNameBytes bounds a type's name, as the API bounds an endpoint's
// event_types entries.
const MaxNameBytes = 128

// The catalog's bounds. A catalog is read whole at every cold start of the
// enqueue and api functions, and GET /v1/event-types answers it in pages
// that must stay under Lambda's 6 MB response (JSON's escaping of <, > and
// & can make a document six times its size).
const (
	// MaxTypes bounds the catalog's types.
	MaxTypes = 1000
	// MaxDescriptionBytes bounds a type's description.
	MaxDescriptionBytes = 1024
	// MaxTypeBytes bounds a type's schema and example together, compacted.
	MaxTypeBytes = 64 << 10
	// MaxCatalogBytes bounds the catalog's names, descriptions, schemas
	// and examples together, compacted.
	MaxCatalogBytes = 512 << 10
)

// Validation is what enqueue does with a payload of a catalog type that
// does not validate against its schema.
type Validation string

// The validation modes.
const (
	// ValidationOff: nothing; the payload is not validated (the default).
	ValidationOff Validation = "off"
	// ValidationWarn: delivered, counted (the SchemaMismatches metric) and
	// logged without the payload.
	ValidationWarn Validation = "warn"
	// ValidationReject: rejected with reason schema_mismatch, as a
	// malformed item is; it never blocks the stream.
	ValidationReject Validation = "reject"
)

// Type is one event type of the catalog, as declared (one JSON file of a
// catalog directory) and as tenants read it.
type Type struct {
	// Name is the event type, e.g. payment.succeeded: segments of letters,
	// digits, _ or -, joined by dots, at most MaxNameBytes, not one of
	// hookline's own (outbox.ReservedTypes). Required.
	Name string `json:"name"`
	// Description says what the event means. Default: empty.
	Description string `json:"description"`
	// Schema is the payload's JSON Schema (draft 2020-12 unless its
	// $schema names another). Required.
	Schema json.RawMessage `json:"schema"`
	// Example is a payload of the type, which must validate against
	// Schema; the console's "send a test event" sends it. Required.
	Example json.RawMessage `json:"example"`
	// Deprecated says producers should stop sending it; endpoints may
	// still subscribe to it. Default false.
	Deprecated bool `json:"deprecated"`
	// Validation is enqueue's mode for the type. Default ValidationOff.
	Validation Validation `json:"validation"`
}

// Catalog is a checked list of event types, sorted by name.
type Catalog struct {
	types []Type
	index map[string]int
}

// New checks types (names, fields, modes; see Type) and returns them as a
// catalog, sorted by name. It compiles no schema: package payloadschema
// does (its Check at synth, its Validator in enqueue).
func New(types []Type) (*Catalog, error) {
	if len(types) > MaxTypes {
		return nil, fmt.Errorf("event-type catalog: %d types, at most %d", len(types), MaxTypes)
	}
	c := &Catalog{types: slices.Clone(types), index: make(map[string]int, len(types))}
	total := 0
	slices.SortFunc(c.types, func(a, b Type) int { return strings.Compare(a.Name, b.Name) })
	for i := range c.types {
		t := &c.types[i]
		if t.Validation == "" {
			t.Validation = ValidationOff
		}
		if err := checkType(*t); err != nil {
			return nil, err
		}
		t.Schema, t.Example = compact(t.Schema), compact(t.Example)
		if n := len(t.Schema) + len(t.Example); n > MaxTypeBytes {
			return nil, fmt.Errorf("event type %q: schema and example are %d bytes together, compacted; at most %d", t.Name, n, MaxTypeBytes)
		}
		if total += len(t.Name) + len(t.Description) + len(t.Schema) + len(t.Example); total > MaxCatalogBytes {
			return nil, fmt.Errorf("event-type catalog: its names, descriptions, schemas and examples pass %d bytes together, compacted (at %q)", MaxCatalogBytes, t.Name)
		}
		if _, dup := c.index[t.Name]; dup {
			return nil, fmt.Errorf("event type %q is declared twice", t.Name)
		}
		c.index[t.Name] = i
	}
	return c, nil
}

// checkType checks one type's fields, each error naming the type.
func checkType(t Type) error {
	switch {
	case !ValidName(t.Name):
		return fmt.Errorf("event type %q: the name must be segments of letters, digits, _ or - joined by dots (payment.succeeded), at most %d bytes", t.Name, MaxNameBytes)
	case outbox.IsReservedType(t.Name):
		return fmt.Errorf("event type %q: reserved for the events hookline itself sends", t.Name)
	case len(t.Description) > MaxDescriptionBytes:
		return fmt.Errorf("event type %q: the description is %d bytes, at most %d", t.Name, len(t.Description), MaxDescriptionBytes)
	case t.Validation != ValidationOff && t.Validation != ValidationWarn && t.Validation != ValidationReject:
		return fmt.Errorf("event type %q: validation %q: want off, warn or reject", t.Name, t.Validation)
	case len(bytes.TrimSpace(t.Schema)) == 0 || !json.Valid(t.Schema):
		return fmt.Errorf("event type %q: schema is required, a JSON Schema", t.Name)
	case len(bytes.TrimSpace(t.Example)) == 0 || !json.Valid(t.Example):
		return fmt.Errorf("event type %q: example is required, a JSON document", t.Name)
	}
	return nil
}

// compact is the JSON document doc (valid) without its insignificant space.
func compact(doc json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	_ = json.Compact(&b, doc) // doc is valid: checkType checked it
	return b.Bytes()
}

// ValidName reports whether s can name a catalog type: segments of
// letters, digits, _ or -, joined by dots, 1 to MaxNameBytes bytes.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameBytes {
		return false
	}
	for seg := range strings.SplitSeq(s, ".") {
		if seg == "" || strings.IndexFunc(seg, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			return false
		}
	}
	return true
}

// Types returns the catalog's types, sorted by name (nil: none).
func (c *Catalog) Types() []Type {
	if c == nil {
		return nil
	}
	return c.types
}

// Lookup returns the type named name.
func (c *Catalog) Lookup(name string) (Type, bool) {
	if c == nil {
		return Type{}, false
	}
	i, ok := c.index[name]
	if !ok {
		return Type{}, false
	}
	return c.types[i], true
}

// Matches reports whether an endpoint's event_types entry names at least
// one catalog type or one of hookline's own (outbox.ReservedTypes, the
// operational events a tenant subscribes to by name): "*" always;
// "prefix.*" when such a type starts with "prefix."; else the exact name.
// A nil catalog (none) matches everything.
func (c *Catalog) Matches(entry string) bool {
	if c == nil || entry == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(entry, "*"); ok {
		for _, t := range c.types {
			if strings.HasPrefix(t.Name, prefix) {
				return true
			}
		}
		for _, t := range outbox.ReservedTypes {
			if strings.HasPrefix(t, prefix) {
				return true
			}
		}
		return false
	}
	_, ok := c.index[entry]
	return ok || outbox.IsReservedType(entry)
}

// file is FileName's shape.
type file struct {
	EventTypes []Type `json:"event_types"`
}

// Marshal renders types as FileName's content, to bundle with a function.
func Marshal(types []Type) ([]byte, error) {
	if types == nil {
		types = []Type{}
	}
	return json.Marshal(file{EventTypes: types})
}

// Parse reads FileName's content as a catalog.
func Parse(data []byte) (*Catalog, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("event-type catalog: %w", err)
	}
	return New(f.EventTypes)
}

// Open reads the catalog a function was deployed with: name (from
// HOOKLINE_EVENT_TYPES; empty: none, and a nil catalog) relative to the
// directory of the running executable, where infra bundles it.
func Open(name string) (*Catalog, error) {
	if name == "" {
		return nil, nil
	}
	path := name
	if !filepath.IsAbs(path) {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("event-type catalog: %w", err)
		}
		path = filepath.Join(filepath.Dir(exe), name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("event-type catalog: %w", err)
	}
	defer f.Close()
	// The file is what New accepted, marshalled: its bound and the JSON
	// around each type; a larger file was not made by infra.
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("event-type catalog: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("event-type catalog %s: larger than %d bytes", path, maxFileBytes)
	}
	return Parse(data)
}

// maxFileBytes bounds FileName: MaxCatalogBytes escaped at worst (six
// bytes a character) and each type's field names.
const maxFileBytes = 6*MaxCatalogBytes + MaxTypes*256

// LoadDir reads a catalog directory: every *.json file in dir (not its
// subdirectories), each one Type. The types are not checked: New and
// Check do.
func LoadDir(dir string) ([]Type, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("event-type catalog %s: no *.json file", dir)
	}
	types := make([]Type, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("event-type catalog: %w", err)
		}
		var t Type
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("event-type catalog %s: %w", p, err)
		}
		types = append(types, t)
	}
	return types, nil
}
