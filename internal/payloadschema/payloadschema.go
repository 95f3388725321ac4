package payloadschema

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/outbox"
	"github.com/kaptinlin/jsonschema"
)

// MaxDetailBytes bounds a Mismatch's Detail: a rejection's detail
// (outbox.MaxDetailBytes).
const MaxDetailBytes = outbox.MaxDetailBytes

// Mismatch is a payload that does not validate against its type's schema:
// where (the first violation the validator reports) and why.
type Mismatch struct {
	// Path is the JSON pointer of the violating value in the payload:
	// "/amount", "/items/0/sku"; "" is the payload itself.
	Path string
	// Keyword is the name of the schema keyword violated: "type",
	// "required", "minimum", "additionalProperties".
	Keyword string
	// Detail says both and what was wrong, at most MaxDetailBytes:
	// `at /amount: keyword type: got string, want integer`.
	Detail string
}

// metaschemas are draft 2020-12's metaschema and vocabularies, as
// json-schema.org publishes them: the library has drafts 4, 6 and 7 of its
// own and would fetch 2020-12's.
//
//go:embed metaschemas/2020-12
var metaschemas embed.FS

// metaschemaURL is where draft 2020-12 publishes its metaschema documents.
const metaschemaURL = "https://json-schema.org/draft/2020-12/"

// newCompiler is a compiler that fetches no document: a schema is
// self-contained, and a function never fetches one (the library's default
// loaders fetch http and https references). It loads draft 2020-12's
// metaschemas from metaschemas, and nothing else.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	for scheme := range c.Loaders {
		delete(c.Loaders, scheme)
	}
	c.RegisterLoader("https", func(url string) (io.ReadCloser, error) {
		name, ok := strings.CutPrefix(url, metaschemaURL)
		if !ok || name == "" || strings.Contains(name, "..") {
			return nil, fmt.Errorf("%s: a catalog schema may refer only to itself", url)
		}
		return metaschemas.Open("metaschemas/2020-12/" + name + ".json")
	})
	return c
}

// compile compiles one type's schema, draft 2020-12 unless it says. A
// reference to another document is refused: the library would otherwise
// leave it unresolved and let every payload through it.
func compile(name string, schema json.RawMessage) (*jsonschema.Schema, error) {
	url := "https://event-types.hookline.invalid/" + name + ".json"
	s, err := newCompiler().Compile(schema, url)
	if err != nil {
		return nil, err
	}
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		return nil, fmt.Errorf("%s: a catalog schema may refer only to itself", strings.Join(refs, ", "))
	}
	return s, nil
}

// conforms checks schema against its draft's metaschema (2020-12 unless
// its $schema says): what Check adds to compile, because the library
// compiles a schema it does not understand ({"type": "nonsense"}) without
// a word. Only at synth: the metaschema is compiled on first use, and a
// function compiles only schemas that passed here.
func conforms(schema json.RawMessage) error {
	r, err := newCompiler().ValidateSchema(schema)
	if err != nil {
		return err
	}
	if m := mismatchOf(r); m != nil {
		return fmt.Errorf("not a valid JSON Schema: %s", m.Detail)
	}
	return nil
}

// check validates doc against s: nil when it validates. doc is a JSON
// document already (an outbox item's payload, checked by outbox.Validate;
// a catalog's example, by eventtypes.New), so it is not scanned for that
// again; were it not one, the library answers a mismatch (keyword format).
func check(s *jsonschema.Schema, doc []byte) *Mismatch {
	return mismatchOf(s.ValidateJSON(doc))
}

// mismatchOf is the first violation of a result's tree (nil: it
// validates): of its leaves, the one at the smallest payload path (then
// keyword), so that a payload breaking several rules is refused with the
// same one every time. A leaf is a keyword's error that no failing
// subschema explains: "properties" fails because "/properties/amount"
// did, so the leaf is amount's "type".
func mismatchOf(r *jsonschema.EvaluationResult) *Mismatch {
	if r == nil || r.IsValid() {
		return nil
	}
	var leaf *Mismatch
	var leafErr *jsonschema.EvaluationError
	var walk func(n *jsonschema.EvaluationResult, path, evalPath string)
	walk = func(n *jsonschema.EvaluationResult, path, evalPath string) {
		// A node's location is one reference token of the payload
		// ("/amount", "/1") or none, unescaped.
		if tok, ok := strings.CutPrefix(n.InstanceLocation, "/"); ok {
			path += "/" + escape.Replace(tok)
		}
		explained := map[string]bool{}
		for _, d := range n.Details {
			if d.IsValid() {
				continue
			}
			kw := firstSegment(d.EvaluationPath)
			if kw == "" {
				// An in-place applicator: $ref, $dynamicRef.
				explained["$ref"], explained["$dynamicRef"] = true, true
			}
			explained[kw] = true
			walk(d, path, d.EvaluationPath)
		}
		for kw, e := range n.Errors {
			if explained[kw] {
				continue
			}
			if kw == "schema" {
				// The false schema: name the keyword that holds it
				// ("additionalProperties", "items").
				kw = firstSegment(evalPath)
			}
			if leaf == nil || path < leaf.Path || path == leaf.Path && kw < leaf.Keyword {
				leaf, leafErr = &Mismatch{Path: path, Keyword: kw}, e
			}
		}
	}
	walk(r, "", "")
	if leaf == nil {
		// Invalid without a leaf: the root's own verdict.
		return &Mismatch{Detail: "at the payload's root: does not validate"}
	}
	where := "at " + leaf.Path
	if leaf.Path == "" {
		where = "at the payload's root"
	}
	leaf.Detail = outbox.Truncate(fmt.Sprintf("%s: keyword %s: %s", where, leaf.Keyword, why(leafErr)), MaxDetailBytes)
	return leaf
}

// why says what a keyword's error found without a value of the payload:
// the library's messages quote some ("Value X should be one of ..."), so
// only its code is said, for a type mismatch the two types, and for a
// required property its name (the schema's).
func why(e *jsonschema.EvaluationError) string {
	if e == nil {
		return "does not validate"
	}
	switch e.Code {
	case "type_mismatch":
		return fmt.Sprintf("got %v, want %v", e.Params["received"], e.Params["expected"])
	case "missing_required_property":
		// The names are the schema's, quoted: 'weight_grams'.
		return fmt.Sprintf("missing property %v", e.Params["property"])
	case "missing_required_properties":
		return fmt.Sprintf("missing properties %v", e.Params["properties"])
	}
	return strings.ReplaceAll(e.Code, "_", " ")
}

// escape escapes a JSON pointer's reference token (RFC 6901).
var escape = strings.NewReplacer("~", "~0", "/", "~1")

// firstSegment is a JSON pointer's first reference token ("" for "").
func firstSegment(pointer string) string {
	s := strings.TrimPrefix(pointer, "/")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Check compiles every schema of c and validates every example against
// its own: what infra runs at synth, so a catalog that deploys has no
// schema that fails to compile in a function. The error names each type
// at fault.
func Check(c *eventtypes.Catalog) error {
	var errs []error
	for _, t := range c.Types() {
		s, err := compile(t.Name, t.Schema)
		if err == nil {
			err = conforms(t.Schema)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("event type %q: schema: %w", t.Name, err))
			continue
		}
		if m := check(s, t.Example); m != nil {
			errs = append(errs, fmt.Errorf("event type %q: the example does not validate against the schema: %s", t.Name, m.Detail))
		}
	}
	return errors.Join(errs...)
}

// Validator validates payloads against a catalog's schemas, each compiled
// once, on first use. Safe for concurrent use.
type Validator struct {
	types map[string]*entry // the types whose validation is warn or reject
}

// entry is one type's schema, compiled once.
type entry struct {
	t      eventtypes.Type
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// New is the validator of c's types (nil c: none). It compiles nothing.
func New(c *eventtypes.Catalog) *Validator {
	v := &Validator{types: map[string]*entry{}}
	for _, t := range c.Types() {
		if t.Validation == eventtypes.ValidationWarn || t.Validation == eventtypes.ValidationReject {
			v.types[t.Name] = &entry{t: t}
		}
	}
	return v
}

// Validate checks payload, a JSON document, as an event of eventType: the
// type's mode, and the mismatch when the mode is warn or reject and the
// payload does not validate. A type the catalog does not know, or whose
// mode is off, answers eventtypes.ValidationOff at the cost of a map
// lookup. err: the type's schema does not compile (Check refuses such a
// catalog at synth, so only a hand-made file gets here); the payload is
// then not validated.
func (v *Validator) Validate(eventType string, payload []byte) (eventtypes.Validation, *Mismatch, error) {
	e, ok := v.types[eventType]
	if !ok {
		return eventtypes.ValidationOff, nil, nil
	}
	e.once.Do(func() { e.schema, e.err = compile(e.t.Name, e.t.Schema) })
	if e.err != nil {
		return e.t.Validation, nil, fmt.Errorf("event type %q: schema: %w", eventType, e.err)
	}
	return e.t.Validation, check(e.schema, payload), nil
}
