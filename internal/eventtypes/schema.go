package eventtypes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	// `at /amount: keyword type: got string, want number`.
	Detail string
}

// printer renders the validator's messages; the language tables are the
// library's own dependency.
var printer = message.NewPrinter(language.English)

// validator is one type's compiled schema.
type validator struct{ s *jsonschema.Schema }

// noLoader refuses every document but the schema itself: a schema is
// self-contained, and a function never fetches one.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a catalog schema may refer only to itself", url)
}

// compile compiles one type's schema, draft 2020-12 unless it says.
func compile(name string, schema json.RawMessage) (validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return validator{}, err
	}
	url := "https://event-types.hookline.invalid/" + name + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return validator{}, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return validator{}, err
	}
	return validator{s}, nil
}

// schema returns type i's compiled schema, compiling it the first time.
func (c *Catalog) schema(i int) (validator, error) {
	s := &c.schemas[i]
	s.once.Do(func() { s.schema, s.err = compile(c.types[i].Name, c.types[i].Schema) })
	return s.schema, s.err
}

// check validates a JSON document: nil when it validates.
func (v validator) check(doc []byte) *Mismatch {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return &Mismatch{Detail: outbox.Truncate("not a JSON document: "+err.Error(), MaxDetailBytes)}
	}
	err = v.s.Validate(inst)
	var verr *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &verr) {
		return &Mismatch{Detail: outbox.Truncate(err.Error(), MaxDetailBytes)}
	}
	return mismatchOf(verr)
}

// mismatchOf is the first violation of verr's tree (the first leaf).
func mismatchOf(verr *jsonschema.ValidationError) *Mismatch {
	leaf := verr
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	m := &Mismatch{Path: pointer(leaf.InstanceLocation)}
	if kp := leaf.ErrorKind.KeywordPath(); len(kp) > 0 {
		m.Keyword = kp[len(kp)-1]
	}
	where := "at " + m.Path
	if m.Path == "" {
		where = "at the payload's root"
	}
	m.Detail = outbox.Truncate(fmt.Sprintf("%s: keyword %s: %s", where, m.Keyword, leaf.ErrorKind.LocalizedString(printer)), MaxDetailBytes)
	return m
}

// pointer renders a location as a JSON pointer (RFC 6901).
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// Validate checks payload, a JSON document, as an event of eventType: the
// type's mode, and the mismatch when the mode is warn or reject and the
// payload does not validate. A type the catalog does not know, or whose
// mode is off, answers ValidationOff at the cost of a map lookup (a nil
// catalog too). err: the type's schema does not compile (Check refuses
// such a catalog at synth, so only a hand-made file gets here); the
// payload is then not validated.
func (c *Catalog) Validate(eventType string, payload []byte) (Validation, *Mismatch, error) {
	if c == nil {
		return ValidationOff, nil, nil
	}
	i, ok := c.index[eventType]
	if !ok || c.types[i].Validation == ValidationOff {
		return ValidationOff, nil, nil
	}
	s, err := c.schema(i)
	if err != nil {
		return c.types[i].Validation, nil, fmt.Errorf("event type %q: schema: %w", eventType, err)
	}
	return c.types[i].Validation, s.check(payload), nil
}
