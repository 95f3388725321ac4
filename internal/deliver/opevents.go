package deliver

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
)

// raiseEndpoint writes an endpoint.* operational event about the attempt's
// endpoint (episode names the transition, so the event is written once).
// A failure is logged: the transition is made, its notice lost.
func (h *Handler) raiseEndpoint(ctx context.Context, at *attempt, eventType, episode string, reason domain.DisableReason, failures int) {
	msg := at.in.Message
	p := endpointEvent(store.EndpointRef{TenantID: msg.TenantID, EndpointID: msg.EndpointID}, at.in.Endpoint, at.in.Started)
	p.ConsecutiveFailures, p.Reason = failures, reason
	if res := at.in.Result; res != nil && eventType != domain.OpEndpointRecovered {
		p.LastStatus, p.LastError = res.Status, res.Error
	}
	h.emitEndpoint(ctx, at.log, eventType, episode, p)
}

// endpointEvent is the part of an endpoint.* event's payload that names
// the endpoint ref, as ep (its record) describes it, at at.
func endpointEvent(ref store.EndpointRef, ep domain.Endpoint, at time.Time) domain.OpEndpointEvent {
	p := domain.OpEndpointEvent{TenantID: ref.TenantID, EndpointID: ref.EndpointID, URL: ep.URL, At: at.UTC()}
	if ep.Kind() != domain.TypeHTTP {
		p.Type, p.Target = ep.Kind(), ep.Target
	}
	return p
}

// emitEndpoint writes the endpoint.* event eventType of payload p, its id
// derived from the endpoint and episode (so it is written once), and logs
// it on log. A failure is logged: the transition is made, its notice lost.
func (h *Handler) emitEndpoint(ctx context.Context, log *slog.Logger, eventType, episode string, p domain.OpEndpointEvent) {
	if h.OpEvents == nil {
		return
	}
	ev := opevent.Event{
		ID:       opevent.ID(eventType, p.TenantID, p.EndpointID, episode),
		TenantID: p.TenantID, Type: eventType, Payload: p, At: p.At,
	}
	if err := h.OpEvents.Emit(ctx, ev); err != nil {
		log.ErrorContext(ctx, "cannot raise operational event", "op_event", eventType, "op_error", err.Error())
		return
	}
	log.InfoContext(ctx, "operational event raised", "op_event", eventType, "op_event_id", ev.ID)
}

// noteDeath adds the attempt's dead delivery to its endpoint's
// delivery.dead window (opevent.NoteDeath: the death that opens the window
// sends the window's notice, delayed until it ends; the death of an
// operational event's delivery is not noted). A failure is logged: the
// delivery is dead and parked all the same.
func (h *Handler) noteDeath(ctx context.Context, at *attempt, reason domain.DeadReason) {
	msg := at.in.Message
	if h.cfg.OpsQueueURL == "" {
		return
	}
	d := domain.OpDeath{DeliveryID: msg.DeliveryID, EventID: msg.EventID, EventType: msg.EventType, Reason: reason, Attempts: at.in.Delivery.Attempts}
	if at.in.Result != nil {
		d.Attempts++
	}
	if err := opevent.NoteDeath(ctx, h.Store, h.Queue, h.cfg.OpsQueueURL, h.cfg.DeadWindow, h.cfg.Now(), msg.TenantID, msg.EndpointID, d); err != nil {
		at.log.ErrorContext(ctx, "cannot note the death for delivery.dead", "op_error", err.Error())
	}
}
