package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// MessageLog reads a tenant's message log: the events the outbox table holds
// (package messagelog; on a fake outbox table in the tests, storefake).
// ListEvents lists newest first without payloads; Event reads one with its
// payload, store.ErrNotFound when it is missing or another tenant's.
type MessageLog interface {
	ListEvents(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error)
	Event(ctx context.Context, tenantID, id string) (domain.Event, error)
}

// DefaultPayloadRetention is how long after its occurred_at an event's
// payload is served (Server.PayloadRetention): 15 days, a day less than the
// outbox items' physical expiry (outbox.DefaultRetention, 16 days), so that
// what is served does not depend on when DynamoDB's TTL gets to an item.
const DefaultPayloadRetention = domain.DefaultPayloadRetention

// EventDeliveryView is one delivery of an event, as the message log shows
// it: read the delivery itself for its attempt log.
type EventDeliveryView struct {
	ID         string               `json:"id"`
	EndpointID string               `json:"endpoint_id"`
	State      domain.DeliveryState `json:"state"`
	Attempts   int                  `json:"attempts"`
	LastStatus int                  `json:"last_status,omitempty"`
}

// EventView is an event as the message log shows it: the event resource
// (PublishedEventView) with its deliveries. Payload is only in the answer
// for one event, and only while the event is within the payload retention.
type EventView struct {
	PublishedEventView
	Deliveries []EventDeliveryView `json:"deliveries"`
}

func eventView(e domain.Event, ds []domain.Delivery) EventView {
	v := EventView{
		PublishedEventView: PublishedEventView{ID: e.ID, Type: e.Type, OccurredAt: e.OccurredAt, EndpointID: e.EndpointID, Sequence: e.Sequence, Payload: e.Payload},
		Deliveries:         make([]EventDeliveryView, 0, len(ds))}
	for _, d := range ds {
		v.Deliveries = append(v.Deliveries, EventDeliveryView{ID: d.DeliveryID, EndpointID: d.EndpointID, State: d.State, Attempts: d.Attempts, LastStatus: d.LastStatus})
	}
	return v
}

func (s *Server) payloadRetention() time.Duration {
	if s.PayloadRetention > 0 {
		return s.PayloadRetention
	}
	return DefaultPayloadRetention
}

// payloadExpired reports whether the payload of an event that occurred at
// is past the retention at now.
func (s *Server) payloadExpired(at time.Time) bool {
	return s.now().Sub(at) > s.payloadRetention()
}

// eventFilter reads the message log's filter from the query string.
func eventFilter(q map[string]string) (domain.EventFilter, []FieldError) {
	f := domain.EventFilter{Type: q["type"]}
	var errs []FieldError
	f.Since, f.Until = timeParam("since", q["since"], &errs), timeParam("until", q["until"], &errs)
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		errs = append(errs, FieldError{Field: "until", Message: "is before since"})
	}
	if len(f.Type) > 256 {
		errs = append(errs, FieldError{Field: "type", Message: "is over 256 bytes"})
	}
	return f, errs
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	if s.MessageLog == nil {
		return problem(http.StatusServiceUnavailable, "the message log is not configured in this deployment")
	}
	f, limit, cursor, p := listRequest(r, eventFilter, "type", "since", "until")
	if p != nil {
		return p
	}
	es, next, err := s.MessageLog.ListEvents(r.Context(), tenant, f, limit, cursor)
	if ce := cursorError(err); ce != nil {
		return invalid(*ce)
	}
	if err != nil {
		return s.internal(r, err)
	}
	ds, err := s.Store.DeliveriesOfEvents(r.Context(), tenant, es)
	if err != nil {
		return s.internal(r, err)
	}
	out := page[EventView]{Data: make([]EventView, 0, len(es)), NextCursor: next}
	for _, e := range es {
		out.Data = append(out.Data, eventView(e, ds[e.ID]))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pathEvent is the tenant's event the path's event_id names, read from the
// message log: 404 when the outbox does not hold it for the tenant, 503 in
// a deployment without the message log.
func (s *Server) pathEvent(r *http.Request, tenant string) (domain.Event, *Problem) {
	if s.MessageLog == nil {
		return domain.Event{}, problem(http.StatusServiceUnavailable, "the message log is not configured in this deployment")
	}
	id := r.PathValue("event_id")
	e, err := s.MessageLog.Event(r.Context(), tenant, id)
	if err != nil {
		return domain.Event{}, s.found(r, "event "+strconv.Quote(id), err)
	}
	return e, nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	e, p := s.pathEvent(r, tenant)
	if p != nil {
		return p
	}
	routing, err := s.routing(r.Context(), tenant, e)
	if err != nil {
		return s.internal(r, err)
	}
	if s.payloadExpired(e.OccurredAt) {
		e.Payload = nil // kept by the table a while longer, no longer served
	}
	ds, err := s.Store.DeliveriesOfEvent(r.Context(), tenant, e)
	if err != nil {
		return s.internal(r, err)
	}
	writeJSON(w, http.StatusOK, struct {
		EventView
		EventRouting
	}{eventView(e, ds), routing})
	return nil
}
