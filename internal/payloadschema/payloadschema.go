package payloadschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/outbox"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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

// printer renders the validator's messages; the language tables are the
// library's own dependency.
var printer = message.NewPrinter(language.English)

// noLoader refuses every document but the schema itself: a schema is
// self-contained, and a function never fetches one.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a catalog schema may refer only to itself", url)
}

// compile compiles one type's schema, draft 2020-12 unless it says.
func compile(name string, schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	url := "https://event-types.hookline.invalid/" + name + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// check validates a JSON document against s: nil when it validates.
func check(s *jsonschema.Schema, doc []byte) *Mismatch {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return &Mismatch{Detail: outbox.Truncate("not a JSON document: "+err.Error(), MaxDetailBytes)}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &Mismatch{Detail: outbox.Truncate(err.Error(), MaxDetailBytes)}
	}
	return mismatchOf(verr)
}

// mismatchOf is the first violation of verr's tree: of its leaves, the
// one at the smallest payload path (then keyword), so that a payload
// breaking several rules is refused with the same one every time (the
// validator walks an object's properties in a map's order).
func mismatchOf(verr *jsonschema.ValidationError) *Mismatch {
	var leaf *jsonschema.ValidationError
	var leafPath, leafKeyword string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		path, kw := pointer(e.InstanceLocation), keywordOf(e)
		if leaf == nil || path < leafPath || path == leafPath && kw < leafKeyword {
			leaf, leafPath, leafKeyword = e, path, kw
		}
	}
	walk(verr)
	m := &Mismatch{Path: leafPath, Keyword: leafKeyword}
	where := "at " + m.Path
	if m.Path == "" {
		where = "at the payload's root"
	}
	m.Detail = outbox.Truncate(fmt.Sprintf("%s: keyword %s: %s", where, m.Keyword, leaf.ErrorKind.LocalizedString(printer)), MaxDetailBytes)
	return m
}

// keywordOf is the name of the keyword e violates ("" when none).
func keywordOf(e *jsonschema.ValidationError) string {
	if kp := e.ErrorKind.KeywordPath(); len(kp) > 0 {
		return kp[len(kp)-1]
	}
	return ""
}

// escape escapes a JSON pointer's reference token (RFC 6901).
var escape = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders a location as a JSON pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escape.Replace(tok))
	}
	return b.String()
}

// Check compiles every schema of c and validates every example against
// its own: what infra runs at synth, so a catalog that deploys has no
// schema that fails to compile in a function. The error names each type
// at fault.
func Check(c *eventtypes.Catalog) error {
	var errs []error
	for _, t := range c.Types() {
		s, err := compile(t.Name, t.Schema)
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
