package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// AttemptView is one attempt of a delivery.
type AttemptView struct {
	Number    int       `json:"attempt"`
	At        time.Time `json:"at"`
	Status    int       `json:"status,omitempty"`
	Error     string    `json:"error,omitempty"`
	LatencyMS int64     `json:"latency_ms"`
	Response  string    `json:"response,omitempty"`
	// Resend marks an attempt of a resend of the delivery once delivered.
	Resend bool `json:"resend,omitempty"`
}

// DeliveryView is a delivery as the API shows it.
type DeliveryView struct {
	ID          string               `json:"id"`
	EventID     string               `json:"event_id"`
	EventType   string               `json:"event_type"`
	EndpointID  string               `json:"endpoint_id"`
	State       domain.DeliveryState `json:"state"`
	Attempts    int                  `json:"attempts"`
	LastStatus  int                  `json:"last_status,omitempty"`
	LastError   string               `json:"last_error,omitempty"`
	DeadReason  domain.DeadReason    `json:"dead_reason,omitempty"`
	CreatedAt   time.Time            `json:"created_at"`
	DeliveredAt *time.Time           `json:"delivered_at,omitempty"`
	DeadAt      *time.Time           `json:"dead_at,omitempty"`
	ReplayedAt  *time.Time           `json:"replayed_at,omitempty"`
	CancelledAt *time.Time           `json:"cancelled_at,omitempty"`
	AttemptLog  []AttemptView        `json:"attempt_log"`
}

func deliveryView(d domain.Delivery) DeliveryView {
	v := DeliveryView{
		ID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID, State: d.State,
		Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, DeadReason: d.DeadReason,
		CreatedAt: d.CreatedAt, DeliveredAt: d.DeliveredAt, DeadAt: d.DeadAt, ReplayedAt: d.ReplayedAt, CancelledAt: d.CancelledAt,
		AttemptLog: make([]AttemptView, 0, len(d.AttemptLog)),
	}
	for _, a := range d.AttemptLog {
		v.AttemptLog = append(v.AttemptLog, AttemptView{Number: a.Number, At: a.At, Status: a.Status, Error: a.Error, LatencyMS: a.LatencyMS, Response: a.Excerpt, Resend: a.Resend})
	}
	return v
}

func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("delivery_id")
	d, err := s.Store.Delivery(r.Context(), id)
	if err == nil && d.TenantID != tenant {
		err = store.ErrNotFound // another tenant's delivery is as good as missing
	}
	if err != nil {
		return s.found(r, "delivery "+strconv.Quote(id), err)
	}
	writeJSON(w, http.StatusOK, deliveryView(d))
	return nil
}

// eventDeliveries lists an event's deliveries, which it names by the
// event's id and time (domain.DeliveryID): it reads the event first, so an
// event the outbox no longer holds (expired or erased) is not found, and a
// deployment without the message log cannot list them.
func (s *Server) eventDeliveries(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	e, p := s.pathEvent(r, tenant)
	if p != nil {
		return p
	}
	ds, err := s.Store.DeliveriesOfEvent(r.Context(), tenant, e)
	if err != nil {
		return s.internal(r, err)
	}
	out := struct {
		Data []DeliveryView `json:"data"`
	}{Data: make([]DeliveryView, 0, len(ds))}
	for _, d := range ds {
		out.Data = append(out.Data, deliveryView(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
