package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// DeliveryListView is a delivery as the delivery log lists it
// (GET /v1/deliveries): its state and last answer, without its attempt
// log (read the delivery for it).
type DeliveryListView struct {
	ID         string               `json:"id"`
	EventID    string               `json:"event_id"`
	EventType  string               `json:"event_type"`
	EndpointID string               `json:"endpoint_id"`
	State      domain.DeliveryState `json:"state"`
	Attempts   int                  `json:"attempts"`
	LastStatus int                  `json:"last_status,omitempty"`
	LastError  string               `json:"last_error,omitempty"`
	DeadReason domain.DeadReason    `json:"dead_reason,omitempty"`
	CreatedAt  time.Time            `json:"created_at"`
}

func deliveryListView(d domain.Delivery) DeliveryListView {
	return DeliveryListView{ID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID, State: d.State,
		Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, DeadReason: d.DeadReason, CreatedAt: d.CreatedAt}
}

// deliveryFilter reads the delivery log's filter from the query string.
func deliveryFilter(q map[string]string) (domain.DeliveryFilter, []FieldError) {
	f := domain.DeliveryFilter{EndpointID: q["endpoint_id"], EventType: q["event_type"], State: domain.DeliveryState(q["state"]), Class: domain.StatusClass(q["status_class"])}
	var errs []FieldError
	f.Since, f.Until = timeParam("since", q["since"], &errs), timeParam("until", q["until"], &errs)
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		errs = append(errs, FieldError{Field: "until", Message: "is before since"})
	}
	for _, p := range []struct{ field, v string }{{"endpoint_id", f.EndpointID}, {"event_type", f.EventType}} {
		if len(p.v) > 256 {
			errs = append(errs, FieldError{Field: p.field, Message: "is over 256 bytes"})
		}
	}
	if f.State != "" && !validState(f.State) {
		errs = append(errs, FieldError{Field: "state", Message: "must be one of " + joinStates()})
	}
	if f.Class != "" && !f.Class.Valid() {
		errs = append(errs, FieldError{Field: "status_class", Message: "must be one of " + joinClasses()})
	}
	if v := q["status"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			errs = append(errs, FieldError{Field: "status", Message: "must be an HTTP status, a whole number from 100 to 599"})
		}
		f.Status = n
	}
	return f, errs
}

func validState(s domain.DeliveryState) bool {
	for _, k := range domain.DeliveryStates {
		if s == k {
			return true
		}
	}
	return false
}

func joinStates() string {
	out := make([]string, len(domain.DeliveryStates))
	for i, s := range domain.DeliveryStates {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

func joinClasses() string {
	out := make([]string, len(domain.StatusClasses))
	for i, c := range domain.StatusClasses {
		out[i] = string(c)
	}
	return strings.Join(out, ", ")
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	f, limit, cursor, p := listRequest(r, deliveryFilter, "endpoint_id", "event_type", "state", "status", "status_class", "since", "until")
	if p != nil {
		return p
	}
	ds, next, err := s.Store.ListDeliveries(r.Context(), tenant, f, limit, cursor)
	if p := s.listingError(r, err); p != nil {
		return p
	}
	out := page[DeliveryListView]{Data: make([]DeliveryListView, 0, len(ds)), NextCursor: next}
	for _, d := range ds {
		out.Data = append(out.Data, deliveryListView(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
