package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"

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

// EventTypesView answers GET /v1/event-types: the catalog's types sorted
// by name, and whether the stack has a catalog at all (without one, data
// is [] and any event type may be subscribed to).
type EventTypesView struct {
	Data    []EventTypeView `json:"data"`
	Catalog bool            `json:"catalog"`
}

// listEventTypes answers the stack's catalog, the same for every tenant.
func (s *Server) listEventTypes(w http.ResponseWriter, _ *http.Request, _ string) *Problem {
	v := EventTypesView{Data: []EventTypeView{}, Catalog: s.EventTypes != nil}
	for _, t := range s.EventTypes.Types() {
		v.Data = append(v.Data, EventTypeView{Name: t.Name, Description: t.Description, Schema: t.Schema, Example: t.Example,
			Deprecated: t.Deprecated, Validation: t.Validation})
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
