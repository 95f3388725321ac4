package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Problem is an RFC 9457 problem document.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
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
func decode(w http.ResponseWriter, r *http.Request, v any) *Problem {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return problem(http.StatusUnsupportedMediaType, "send the body as application/json, not %q", ct)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		return problem(http.StatusBadRequest, "the request body is empty: send a JSON object")
	case errors.As(err, &tooBig):
		return problem(http.StatusRequestEntityTooLarge, "the request body is over %d bytes", MaxBodyBytes)
	case errors.As(err, &syntax):
		return problem(http.StatusBadRequest, "the request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return problem(http.StatusBadRequest, "the request body must be a JSON object")
		}
		return invalid(FieldError{Field: field, Message: "must be " + jsonKind(typ.Type.Kind().String())})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalid(FieldError{Field: name, Message: "is not a known field"})
	default:
		return problem(http.StatusBadRequest, "the request body cannot be read as JSON: %s", err.Error())
	}
	if dec.More() {
		return problem(http.StatusBadRequest, "the request body has data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		if errors.As(err, &tooBig) { // only white space after the object, but too much of it
			return problem(http.StatusRequestEntityTooLarge, "the request body is over %d bytes", MaxBodyBytes)
		}
		return problem(http.StatusBadRequest, "the request body has data after the JSON object")
	}
	return nil
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
