package replay

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
)

// SummarizeDeaths writes the delivery.dead summary of the window n names
// (opevent.DeadSummaries).
func (w *Worker) SummarizeDeaths(ctx context.Context, n opevent.DeadNotice) error {
	s := opevent.DeadSummaries{Windows: w.Store, Notices: w.Notices, Log: w.Log}
	return s.Summarize(ctx, n)
}

// noteMissedDeath adds a death the sweep recorded (its attempt did not) to
// its endpoint's delivery.dead window, as deliver does for the deaths it
// records. A failure is logged: the death is recorded all the same.
func (w *Worker) noteMissedDeath(ctx context.Context, d domain.Delivery) {
	if w.Notices == nil || w.Store == nil {
		return
	}
	window := w.cfg().DeadWindow
	death := domain.OpDeath{DeliveryID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, Reason: domain.ReasonAttemptsExhausted, Attempts: d.Attempts}
	if err := opevent.NoteDeath(ctx, w.Store, w.Queue, w.starter().OpsQueue(), window, w.now(), d.TenantID, d.EndpointID, death); err != nil {
		w.Log.ErrorContext(ctx, "cannot note a missed death for delivery.dead", "delivery_id", d.DeliveryID, "error", err.Error())
	}
}
