package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
)

// SummarizeDeaths writes the delivery.dead summary of the window n names:
// one event, whose id derives from the window, so a notice handled twice
// writes it once. A window with no record (expired, or never written) is
// nothing to sum up.
func (w *Worker) SummarizeDeaths(ctx context.Context, n opevent.DeadNotice) error {
	if w.Notices == nil || w.Store.DeadWindows == nil {
		w.Log.WarnContext(ctx, "delivery.dead notice dropped: no notices configured", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	win, err := w.Store.DeadWindow(ctx, n.TenantID, n.EndpointID, n.WindowStart)
	if errors.Is(err, store.ErrNotFound) {
		w.Log.WarnContext(ctx, "delivery.dead notice of a window with no record", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the dead window of endpoint %s: %w", n.EndpointID, err)
	}
	ev, ok := opevent.DeadSummary(n, win)
	if !ok {
		return nil
	}
	// A tenant being erased gets no summary: written after the erasure
	// went through its outbox items, it would outlive it.
	erased, err := w.Store.Erased(ctx, n.TenantID)
	if err != nil {
		return err
	}
	if erased {
		w.Log.InfoContext(ctx, "delivery.dead notice of a tenant being erased dropped", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	if err := w.Notices.Emit(ctx, ev); err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "delivery.dead raised", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID, "count", win.Count, "op_event_id", ev.ID)
	return nil
}

// noteMissedDeath adds a death the sweep recorded (its attempt did not) to
// its endpoint's delivery.dead window, as deliver does for the deaths it
// records. A failure is logged: the death is recorded all the same.
func (w *Worker) noteMissedDeath(ctx context.Context, d domain.Delivery) {
	if w.Notices == nil || w.Store.DeadWindows == nil {
		return
	}
	window := w.cfg().DeadWindow
	death := domain.OpDeath{DeliveryID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, Reason: domain.ReasonAttemptsExhausted, Attempts: d.Attempts}
	if err := opevent.NoteDeath(ctx, w.Store.DeadWindows, w.Queue, w.starter().OpsQueue(), window, w.now(), d.TenantID, d.EndpointID, death); err != nil {
		w.Log.ErrorContext(ctx, "cannot note a missed death for delivery.dead", "delivery_id", d.DeliveryID, "error", err.Error())
	}
}
