package dlq

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// Counters reads every tenant's DLQ depth counter.
type Counters interface {
	DLQDepths(ctx context.Context) (map[string]int, error)
}

// Reconciler recounts a tenant's DLQ depth from the dead index and corrects
// its counter.
type Reconciler interface {
	ReconcileDLQDepth(ctx context.Context, tenantID string) (store.DepthCheck, error)
}

var (
	_ Counters   = (*store.Store)(nil)
	_ Reconciler = (*store.Store)(nil)
)

// Depths publishes the tenants' DLQ depths as gauges and reconciles their
// counters with the dead index: the gauges and sweep_reconcile jobs.
type Depths struct {
	// Counters reads the depths. Nil: no gauges, no reconciliation.
	Counters Counters
	// Reconciler corrects a counter (store.ReconcileDLQDepth). Nil: no
	// reconciliation.
	Reconciler Reconciler
	// Metrics receives the TenantDLQDepth gauges, MaxTenantDLQDepth and
	// DLQDepthCorrections (EMF). Nil: none.
	Metrics *metrics.Writer
	Log     *slog.Logger
}

// Publish publishes every tenant's DLQ depth (or only tenant's, when
// not empty) as the TenantDLQDepth gauge, and the deepest of them as
// MaxTenantDLQDepth, which the per-tenant alarm watches: a value each
// minute, also when no depth changed.
func (w *Depths) Publish(ctx context.Context, tenant string) error {
	if w.Counters == nil {
		return nil
	}
	depths, err := w.Counters.DLQDepths(ctx)
	if err != nil {
		return err
	}
	deepest := 0
	for t, n := range depths {
		if tenant == "" || t == tenant {
			w.Metrics.Put(metrics.TenantDLQDepth, float64(max(n, 0)), map[string]string{metrics.DimensionTenant: t})
		}
		deepest = max(deepest, n)
	}
	if tenant == "" {
		// One figure for the per-tenant alarm, however many tenants there are.
		w.Metrics.Put(metrics.MaxTenantDLQ, float64(deepest), nil)
	}
	return nil
}

// Reconcile reconciles every tenant's DLQ depth counter with the dead
// index (store.ReconcileDLQDepth), for counters left off by earlier
// versions, which moved the counter in a write of its own (and folds the
// one-item counter of the versions before the shards into them, logged).
// Each correction
// is logged and published as DLQDepthCorrections, 1 per corrected tenant
// (TenantId) and so their total stack-wide; a run that corrects nothing
// publishes 0. A tenant that fails does not stop the others; the error
// names them.
func (w *Depths) Reconcile(ctx context.Context) error {
	if w.Counters == nil || w.Reconciler == nil {
		return nil
	}
	depths, err := w.Counters.DLQDepths(ctx)
	if err != nil {
		return err
	}
	corrected := 0
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(depths)) {
		c, err := w.Reconciler.ReconcileDLQDepth(ctx, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Migrated {
			w.Log.InfoContext(ctx, "tenant DLQ depth counter moved to its shards", "tenant_id", t, "counter", c.Counter, "indexed", c.Indexed)
		}
		if c.Corrected {
			corrected++
			w.Log.WarnContext(ctx, "tenant DLQ depth corrected", "tenant_id", t, "counter", c.Counter, "indexed", c.Indexed)
			w.Metrics.Put(metrics.DLQDepthCorrections, 1, map[string]string{metrics.DimensionTenant: t})
		}
	}
	if corrected == 0 {
		w.Metrics.Put(metrics.DLQDepthCorrections, 0, nil)
	}
	return errors.Join(errs...)
}
