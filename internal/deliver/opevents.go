package deliver

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
)

// raiseEndpoint writes an endpoint.* operational event about the attempt's
// endpoint (episode names the transition, so the event is written once).
// A failure is logged: the transition is made, its notice lost.
func (h *Handler) raiseEndpoint(ctx context.Context, at *attempt, eventType, episode string, reason domain.DisableReason, failures int) {
	if h.OpEvents == nil {
		return
	}
	ep, msg := at.in.Endpoint, at.in.Message
	p := domain.OpEndpointEvent{
		TenantID: msg.TenantID, EndpointID: msg.EndpointID, URL: ep.URL,
		ConsecutiveFailures: failures, Reason: reason, At: at.in.Started.UTC(),
	}
	if ep.Kind() != domain.TypeHTTP {
		p.Type, p.Target = ep.Kind(), ep.Target
	}
	if res := at.in.Result; res != nil && eventType != domain.OpEndpointRecovered {
		p.LastStatus, p.LastError = res.Status, res.Error
	}
	ev := opevent.Event{
		ID:       opevent.ID(eventType, msg.TenantID, msg.EndpointID, episode),
		TenantID: msg.TenantID, Type: eventType, Payload: p, At: p.At,
	}
	if err := h.OpEvents.Emit(ctx, ev); err != nil {
		at.log.ErrorContext(ctx, "cannot raise operational event", "op_event", eventType, "op_error", err.Error())
		return
	}
	at.log.InfoContext(ctx, "operational event raised", "op_event", eventType, "op_event_id", ev.ID)
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
