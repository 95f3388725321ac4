package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/hookline/hookline/internal/eventtypes"
)

// EventTypeView is one type of the stack's event-type catalog, as
// tenants read it (GET /v1/event-types).
type EventTypeView struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Example     json.RawMessage `json:"example"`
	// Deprecated types may still be subscribed to; producers should stop
	// sending them.
	Deprecated bool `json:"deprecated"`
	// Validation is what enqueue does with a payload of the type that
	// does not match its schema: off, warn (delivered, counted) or reject
	// (rejected, schema_mismatch).
	Validation eventtypes.Validation `json:"validation"`
}

// EventTypesView answers GET /v1/event-types: a page of the catalog's
// types sorted by name, and whether the stack has a catalog at all
// (without one, data is [] and any event type may be subscribed to).
// NextCursor, when set, asks for the next page.
type EventTypesView struct {
	Data       []EventTypeView `json:"data"`
	Catalog    bool            `json:"catalog"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// listEventTypes answers the stack's catalog, the same for every tenant,
// a page at a time: limit (1 to 100, default 50) types after cursor (the
// name the last page ended with). A page is at most 100 types of a
// catalog of at most eventtypes.MaxCatalogBytes.
func (s *Server) listEventTypes(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	limit, cursor, errs := pageParams(r)
	if cursor != "" && !eventtypes.ValidName(cursor) { // every cursor is a type's name
		errs = append(errs, FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	types := s.EventTypes.Types()
	from, _ := slices.BinarySearchFunc(types, cursor, func(t eventtypes.Type, name string) int { return strings.Compare(t.Name, name) })
	if from < len(types) && cursor != "" && types[from].Name == cursor {
		from++
	}
	v := EventTypesView{Data: []EventTypeView{}, Catalog: s.EventTypes != nil}
	for _, t := range types[from:min(from+limit, len(types))] {
		v.Data = append(v.Data, EventTypeView{Name: t.Name, Description: t.Description, Schema: t.Schema, Example: t.Example,
			Deprecated: t.Deprecated, Validation: t.Validation})
	}
	if from+limit < len(types) {
		v.NextCursor = types[from+limit-1].Name
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// testEventInput is the optional body of POST /v1/endpoints/{id}/test.
type testEventInput struct {
	// EventType, when set, sends that catalog type's example instead of a
	// hookline.test event.
	EventType *string `json:"event_type"`
}

// testEventType reads the test route's optional body: nil, nil when it
// is empty (a hookline.test event), else the catalog type it names.
func (s *Server) testEventType(w http.ResponseWriter, r *http.Request) (*eventtypes.Type, *Problem) {
	body := bufio.NewReader(r.Body)
	if _, err := body.Peek(1); err == io.EOF {
		return nil, nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{body, r.Body}
	var in testEventInput
	if p := decode(w, r, &in); p != nil {
		return nil, p
	}
	if in.EventType == nil {
		return nil, nil
	}
	if s.EventTypes == nil {
		return nil, invalid(FieldError{Field: "event_type", Message: "this stack has no event-type catalog (GET /v1/event-types): leave event_type out to send a hookline.test event"})
	}
	t, ok := s.EventTypes.Lookup(*in.EventType)
	if !ok {
		return nil, invalid(FieldError{Field: "event_type", Message: "is not a type of this stack's event-type catalog (GET /v1/event-types)"})
	}
	return &t, nil
}
