package opevent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// SummaryWindows reads an endpoint's delivery.dead coalescing window, and
// whether its tenant is being erased (a *store.Store).
type SummaryWindows interface {
	DeadWindow(ctx context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error)
	Erased(ctx context.Context, tenantID string) (bool, error)
}

// Emitter writes operational events into the outbox (a *Writer).
type Emitter interface {
	Emit(ctx context.Context, ev Event) error
}

var (
	_ SummaryWindows = (*store.Store)(nil)
	_ Emitter        = (*Writer)(nil)
)

// DeadSummaries writes the delivery.dead summaries of the windows whose
// notices (DeadNotice) come in on the operations queue: the replay
// function's dead_notice job.
type DeadSummaries struct {
	Windows SummaryWindows
	// OpEvents receives the summaries. Nil: the notices are dropped.
	OpEvents Emitter
	Log      *slog.Logger
}

// Summarize writes the delivery.dead summary of the window n names: one
// event, whose id derives from the window, so a notice handled twice
// writes it once. A window with no record (expired, or never written) is
// nothing to sum up; a tenant being erased gets no summary.
func (s *DeadSummaries) Summarize(ctx context.Context, n DeadNotice) error {
	if s.OpEvents == nil || s.Windows == nil {
		s.Log.WarnContext(ctx, "delivery.dead notice dropped: no notices configured", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	win, err := s.Windows.DeadWindow(ctx, n.TenantID, n.EndpointID, n.WindowStart)
	if errors.Is(err, store.ErrNotFound) {
		s.Log.WarnContext(ctx, "delivery.dead notice of a window with no record", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the dead window of endpoint %s: %w", n.EndpointID, err)
	}
	ev, ok := DeadSummary(n, win)
	if !ok {
		return nil
	}
	// A tenant being erased gets no summary: written after the erasure
	// went through its outbox items, it would outlive it.
	erased, err := s.Windows.Erased(ctx, n.TenantID)
	if err != nil {
		return err
	}
	if erased {
		s.Log.InfoContext(ctx, "delivery.dead notice of a tenant being erased dropped", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID)
		return nil
	}
	if err := s.OpEvents.Emit(ctx, ev); err != nil {
		return err
	}
	s.Log.InfoContext(ctx, "delivery.dead raised", "tenant_id", n.TenantID, "endpoint_id", n.EndpointID, "count", win.Count, "op_event_id", ev.ID)
	return nil
}
