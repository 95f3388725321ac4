package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	// Reason is the outbox's reason code (outbox.Reason*) when the field
	// fails the outbox contract's validation (POST /v1/events); else empty.
	Reason string `json:"reason,omitempty"`
}

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
	// MissingScope names the scope a portal link lacks for the route (a
	// 403); else empty.
	MissingScope string `json:"missing_scope,omitempty"`
	// Cap names the tenant cap a request would pass (caps.go), and Limit
	// its value; else empty.
	Cap   string `json:"cap,omitempty"`
	Limit int    `json:"limit,omitempty"`
	// allow is the Allow header of a 405.
	allow string
	// retryAfter, when set, is the Retry-After header (whole seconds).
	retryAfter time.Duration
}

func (p *Problem) Error() string { return p.Detail }

func problem(status int, format string, args ...any) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: fmt.Sprintf(format, args...)}
}

func invalid(errs ...FieldError) *Problem {
	p := problem(http.StatusBadRequest, "the request has invalid fields: %s", fieldList(errs))
	p.Errors = errs
	return p
}

func fieldList(errs []FieldError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Field + " " + e.Message
	}
	return strings.Join(parts, "; ")
}

func writeProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	if p.allow != "" {
		w.Header().Set("Allow", p.allow)
	}
	if p.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(p.retryAfter.Seconds())))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// MaxBodyBytes caps a request body.
const MaxBodyBytes = 64 << 10

// decode reads a JSON object into v: at most MaxBodyBytes, no unknown
// fields, nothing after it. Every failure is a 4xx problem naming the cause.
//
// The body is read as JSON under no Content-Type, a JSON type, and the form
// type when the body is a JSON document, which is what `curl -d '{...}'`
// sends (see bodyIsJSON). Any other type is a 415 naming it, with an
// Accept-Post (Accept-Patch for PATCH) header saying application/json.
func decode(w http.ResponseWriter, r *http.Request, v any) *Problem {
	return decodeLimit(w, r, v, MaxBodyBytes)
}

// decodeLimit is decode with a cap of limit bytes. A field of v of type
// json.RawMessage is taken as it is, nulls inside it included.
func decodeLimit(w http.ResponseWriter, r *http.Request, v any, limit int64) *Problem {
	body := bufio.NewReader(http.MaxBytesReader(w, r.Body, limit))
	if p := bodyIsJSON(r.Header.Get("Content-Type"), body, limit); p != nil {
		if p.Status == http.StatusUnsupportedMediaType {
			w.Header().Set(acceptHeader(r.Method), "application/json")
		}
		return p
	}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		err = decodeObject(raw, v)
	}
	if err != nil {
		return decodeProblem(err, limit)
	}
	return trailingProblem(dec, limit)
}

// acceptHeader is the header that says which media types a request of
// method takes: Accept-Patch for PATCH, else Accept-Post.
func acceptHeader(method string) string {
	if method == http.MethodPatch {
		return "Accept-Patch"
	}
	return "Accept-Post"
}

// decodeProblem is the problem of a body whose JSON object could not be
// decoded (err, of at most limit bytes).
func decodeProblem(err error, limit int64) *Problem {
	var syntax *json.SyntaxError
	var null *nullError
	var typ *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return problem(http.StatusBadRequest, "the request body is empty: send a JSON object")
	case errors.As(err, &tooBig):
		return problem(http.StatusRequestEntityTooLarge, "the request body is over %d bytes", limit)
	case errors.As(err, &syntax):
		return problem(http.StatusBadRequest, "the request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.Is(err, errNotObject):
		return problem(http.StatusBadRequest, "the request body must be a JSON object")
	case errors.As(err, &null):
		return invalid(FieldError{Field: null.field, Message: "is null: leave the field out instead"})
	case errors.As(err, &typ):
		if typ.Field == "" {
			return problem(http.StatusBadRequest, "the request body must be a JSON object")
		}
		return invalid(FieldError{Field: typ.Field, Message: "must be " + jsonKind(typ.Type.Kind().String())})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalid(FieldError{Field: name, Message: "is not a known field"})
	default:
		return problem(http.StatusBadRequest, "the request body cannot be read as JSON: %s", err.Error())
	}
}

// trailingProblem is the problem of what dec holds after the body's JSON
// object, if anything but white space, or too much of it; nil if nothing.
func trailingProblem(dec *json.Decoder, limit int64) *Problem {
	if dec.More() {
		return problem(http.StatusBadRequest, "the request body has data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) { // only white space after the object, but too much of it
			return problem(http.StatusRequestEntityTooLarge, "the request body is over %d bytes", limit)
		}
		return problem(http.StatusBadRequest, "the request body has data after the JSON object")
	}
	return nil
}

// formType is what curl -d, HTML forms and many HTTP clients send by default.
const formType = "application/x-www-form-urlencoded"

// bodyIsJSON decides, from the request's Content-Type and the start of its
// body, whether the body is read as JSON. It answers nil for:
//
//   - no Content-Type;
//   - application/json, or any application/<name>+json (RFC 6839), with any
//     parameters;
//   - application/x-www-form-urlencoded when the body, after white space,
//     starts with { or [ (a JSON document: `curl -d '{...}'`) or is empty
//     (then the caller reports the empty body). No form field name can start
//     with either character unescaped.
//
// Anything else is a 415 problem naming the type: another media type
// (text/plain, multipart/form-data, text/xml...), a Content-Type that does not
// parse, or a form body that is a real form (name=value pairs). Reading the
// leading white space of a form body can exceed the cap: that is a 413.
//
// Accepting JSON under a form type opens no cross-site request path: a
// browser cannot add the Authorization header every route needs without a
// CORS preflight, which the API never grants (it sends no CORS headers). A
// route authenticated by a cookie would change that (an HTML form can post
// a body that reads as JSON): such a route must refuse the form type.
func bodyIsJSON(contentType string, body *bufio.Reader, limit int64) *Problem {
	if contentType == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return problem(http.StatusUnsupportedMediaType, "the Content-Type %q cannot be parsed: send the body as application/json", contentType)
	}
	switch {
	case mt == "application/json", strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return nil
	case mt == formType:
		switch first, err := firstNonSpace(body); {
		case errors.As(err, new(*http.MaxBytesError)):
			return problem(http.StatusRequestEntityTooLarge, "the request body is over %d bytes", limit)
		case errors.Is(err, io.EOF), err == nil && (first == '{' || first == '['):
			return nil
		case err != nil:
			return problem(http.StatusBadRequest, "the request body cannot be read: %s", err.Error())
		}
		return problem(http.StatusUnsupportedMediaType, "the body is a form (%s), not JSON: send a JSON object, as application/json", formType)
	default:
		return problem(http.StatusUnsupportedMediaType, "the body is sent as %q: send it as application/json", mt)
	}
}

// firstNonSpace consumes JSON white space from b and returns the next byte,
// without consuming it.
func firstNonSpace(b *bufio.Reader) (byte, error) {
	for {
		c, err := b.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, b.UnreadByte()
	}
}

var errNotObject = errors.New("not a JSON object")

// nullError names a null in a request body where none is taken.
type nullError struct{ field string }

func (e *nullError) Error() string { return e.field + " is null" }

// decodeObject decodes raw, a syntactically valid JSON value, into v, a
// pointer to a struct: raw must be an object without unknown fields, and
// without null but as the value of a field v holds as a pointer, where null
// means the field is left out (Go would read any other null as the zero
// value, which the request's schema does not allow).
func decodeObject(raw json.RawMessage, v any) error {
	if len(raw) == 0 || raw[0] != '{' {
		return errNotObject
	}
	optional, opaque := optionalFields(v)
	if field := findNull(raw, optional, opaque); field != "" {
		return &nullError{field: field}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// optionalFields lists the JSON names of the pointer fields of the struct v
// points to, and of its json.RawMessage fields (opaque: any JSON value,
// null included).
func optionalFields(v any) (optional, opaque map[string]bool) {
	optional, opaque = map[string]bool{}, map[string]bool{}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return optional, opaque
	}
	for f := range t.Elem().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" || name == "-":
		case f.Type == reflect.TypeFor[json.RawMessage]():
			opaque[name] = true
		case f.Type.Kind() == reflect.Pointer:
			optional[name] = true
		}
	}
	return optional, opaque
}

// findNull names the first null in raw (a valid JSON object) that is not
// the value of one of its optional fields, nor within one of its opaque
// fields, as a field path like headers.X-Name or delivery_ids[2]; "" if
// there is none.
func findNull(raw json.RawMessage, optional, opaque map[string]bool) string {
	if !bytes.Contains(raw, []byte("null")) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*nullLevel
	for {
		if len(stack) == 1 && !stack[0].want && opaque[stack[0].key] {
			if stack[0].want = skipValue(dec); !stack[0].want {
				return ""
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if len(stack) == 0 { // the opening brace
			stack = append(stack, &nullLevel{object: true, want: true})
			continue
		}
		top := stack[len(stack)-1]
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return ""
			}
			continue
		}
		if top.object && top.want {
			top.key, top.want = tok.(string), false
			continue
		}
		path := top.next()
		switch tok := tok.(type) {
		case nil:
			if len(stack) > 1 || !optional[top.key] {
				return path
			}
		case json.Delim:
			stack = append(stack, &nullLevel{path: path, object: tok == '{', want: tok == '{'})
		}
	}
}

// nullLevel is an object or an array findNull is within.
type nullLevel struct {
	path   string
	object bool
	key    string // an object's current key
	index  int    // an array's next index
	want   bool   // an object awaits a key (true) or a value
}

// next is the path of the value the level reads next (an object's value
// for its current key, an array's next element), and moves the level past
// it: an object then awaits a key, an array its next index.
func (l *nullLevel) next() string {
	if l.object {
		l.want = true
		if l.path == "" {
			return l.key
		}
		return l.path + "." + l.key
	}
	path := l.path + "[" + strconv.Itoa(l.index) + "]"
	l.index++
	return path
}

// skipValue reads the next value of dec whole, unlooked at, and reports
// whether it could.
func skipValue(dec *json.Decoder) bool {
	return dec.Decode(new(json.RawMessage)) == nil
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	default:
		return "a number"
	}
}

// page is the body of a list: one page of items (never null) and the cursor
// that reads the next, left out on the last page.
type page[T any] struct {
	Data       []T    `json:"data"`
	NextCursor string `json:"next_cursor,omitempty"`
}
