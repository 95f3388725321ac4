package deliver

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
)

// FailureRates reads an endpoint's hourly counters over its failure-rate
// alert's window and moves its degraded mark (store.MarkEndpointDegraded,
// once per episode). Asked only for an endpoint with an alert.
type FailureRates interface {
	EndpointStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error)
	MarkEndpointDegraded(ctx context.Context, tenantID, endpointID string, degraded bool) (store.DegradedEffect, error)
}

// RateCheckEvery is the least time between two evaluations of one
// endpoint's failure-rate alert by one instance: an endpoint's window is
// read at most once a minute per deliver instance, however many batches
// and flushes of its counters the instance makes.
const RateCheckEvery = time.Minute

// MaxRateChecksPerFlush bounds the alerts one flush of the counters
// evaluates (the longest unevaluated first): the flush's extra time is
// one evaluation's whatever the instance's endpoints, and an endpoint left
// out is evaluated at a later flush of its counters.
const MaxRateChecksPerFlush = 10

// watch keeps ep, the record of an endpoint with a failure-rate alert
// that one of the batch's sent attempts went to (the newest copy wins),
// for the alert's evaluation once the counters are written. An endpoint
// without an alert is never kept: nothing of this reaches its path.
func (b *batchStats) watch(ref store.EndpointRef, ep domain.Endpoint) {
	if b == nil || ep.FailureRateAlert == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.watched == nil {
		b.watched = map[store.EndpointRef]domain.Endpoint{}
	}
	b.watched[ref] = ep
}

// rateChecks is when the instance last evaluated each endpoint's alert,
// for those evaluated within RateCheckEvery (older ones are forgotten: as
// good as never). Safe for concurrent use.
type rateChecks struct {
	mu sync.Mutex
	at map[store.EndpointRef]*rateCheck
}

// rateCheck is one endpoint's last evaluation: when, and how many
// attempts its window lacked of the alert's min_attempts then, less those
// this instance has flushed since. An endpoint whose window lacked
// attempts is evaluated again, within RateCheckEvery, once this instance
// alone has sent what it lacked (the others' count too: it may be due
// sooner, and is at the latest a minute on): its first evaluation, on its
// first attempts, does not hold its verdict back a minute.
type rateCheck struct {
	at      time.Time
	lacking int64
}

// due picks, of the endpoints watched, those not evaluated within
// RateCheckEvery of now, or whose window lacked attempts that this
// flush's (flushed, by endpoint) made up, the longest unevaluated first
// (then by id), at most MaxRateChecksPerFlush, and notes them evaluated
// now.
func (c *rateChecks) due(watched map[store.EndpointRef]domain.Endpoint, flushed map[store.EndpointRef]int64, now time.Time) []store.EndpointRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[store.EndpointRef]*rateCheck{}
	}
	maps.DeleteFunc(c.at, func(_ store.EndpointRef, rc *rateCheck) bool { return now.Sub(rc.at) >= RateCheckEvery })
	var refs []store.EndpointRef
	for ref := range watched {
		rc, recent := c.at[ref]
		if recent && rc.lacking > 0 {
			rc.lacking -= flushed[ref]
			recent = rc.lacking > 0 // what it lacked has come
		}
		if !recent {
			refs = append(refs, ref)
		}
	}
	when := func(ref store.EndpointRef) time.Time {
		if rc, ok := c.at[ref]; ok {
			return rc.at
		}
		return time.Time{}
	}
	slices.SortFunc(refs, func(a, b store.EndpointRef) int {
		return cmp.Or(when(a).Compare(when(b)), cmp.Compare(a.TenantID, b.TenantID), cmp.Compare(a.EndpointID, b.EndpointID))
	})
	refs = refs[:min(len(refs), MaxRateChecksPerFlush)]
	for _, ref := range refs {
		c.at[ref] = &rateCheck{at: now}
	}
	return refs
}

// lacked notes that ref's window, just evaluated, lacked n attempts of
// its alert's min_attempts.
func (c *rateChecks) lacked(ref store.EndpointRef, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc, ok := c.at[ref]; ok && n > 0 {
		rc.lacking = n
	}
}

// weighFailureRates evaluates the failure-rate alerts of the endpoints
// whose counters b held, just written: those due (rateChecks.due), each
// at once, within the invocation's deadline less StatsWriteReserve. A
// flush without an endpoint with an alert returns at once.
func (h *Handler) weighFailureRates(ctx context.Context, b *batchStats) {
	if len(b.watched) == 0 {
		return
	}
	flushed := map[store.EndpointRef]int64{}
	for k, st := range b.by {
		flushed[store.EndpointRef{TenantID: k.tenant, EndpointID: k.endpoint}] += st.Attempts
	}
	refs := h.rates.due(b.watched, flushed, h.cfg.Now())
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-StatsWriteReserve))
		defer cancel()
	}
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Go(func() { h.weighFailureRate(ctx, ref, b.watched[ref]) })
	}
	wg.Wait()
}

// rateWindow is an alert's window as read: its counters summed, and the
// start of its oldest hour.
type rateWindow struct {
	domain.AttemptStats
	start time.Time
}

// failed is the window's failed attempts: every attempt sent (or refused
// by the SSRF guard) that was not delivered.
func (w rateWindow) failed() int64 { return w.Attempts - w.Delivered }

// weighFailureRate reads the window of ep's alert (store.EndpointStats:
// StatsShards+1 Queries, 9) and applies its verdict (domain.Judge):
// degraded marks an endpoint whose copy shows no mark (one conditional
// UpdateItem) and raises endpoint.degraded if this call marked it (one
// PutItem into the outbox); healthy clears a mark the copy shows (one
// conditional UpdateItem), raising nothing; undecided does nothing. A
// failure is logged: the next evaluation tries again.
func (h *Handler) weighFailureRate(ctx context.Context, ref store.EndpointRef, ep domain.Endpoint) {
	log := h.Log.With("tenant_id", ref.TenantID, "endpoint_id", ref.EndpointID)
	alert := ep.FailureRateAlert.WithDefaults()
	since, until := alert.Window(h.cfg.Now())
	buckets, err := h.Store.EndpointStats(ctx, ref.TenantID, ref.EndpointID, since, until)
	if err != nil {
		log.WarnContext(ctx, "cannot read the endpoint's failure rate", "rate_error", err.Error())
		return
	}
	w := rateWindow{start: since}
	for _, b := range buckets {
		w.Merge(b.AttemptStats)
	}
	if lacking := int64(alert.MinAttempts) - w.Attempts; lacking > 0 {
		h.rates.lacked(ref, lacking)
	}
	switch alert.Judge(w.Attempts, w.failed()) {
	case domain.RateDegraded:
		if ep.DegradedSince == nil {
			h.markDegraded(ctx, log, ref, ep, w)
		}
	case domain.RateHealthy:
		if ep.DegradedSince != nil {
			h.clearDegraded(ctx, log, ref, w)
		}
	}
}

// markDegraded marks the endpoint degraded and, if this call marked it
// (the episode's start), raises its endpoint.degraded.
func (h *Handler) markDegraded(ctx context.Context, log *slog.Logger, ref store.EndpointRef, ep domain.Endpoint, w rateWindow) {
	fx, ok := h.moveDegraded(ctx, log, ref, true)
	if !ok {
		return
	}
	alert := ep.FailureRateAlert.WithDefaults()
	percent := domain.FailurePercent(w.Attempts, w.failed())
	log.WarnContext(ctx, "endpoint degraded: failure rate at or above its alert's threshold",
		"failure_percent", percent, "threshold_percent", alert.ThresholdPercent, "attempts", w.Attempts, "window_hours", alert.WindowHours)
	p := endpointEvent(ref, ep, fx.Since)
	p.ConsecutiveFailures = ep.ConsecutiveFailures
	p.FailurePercent, p.ThresholdPercent, p.WindowHours = percent, alert.ThresholdPercent, alert.WindowHours
	p.WindowStart, p.Attempts, p.Failed = &w.start, w.Attempts, w.failed()
	if f := w.LastFailure; f != nil {
		p.LastStatus, p.LastError = f.Status, f.Error
	}
	h.emitEndpoint(ctx, log, domain.OpEndpointDegraded, opevent.Episode(fx.Since), p)
}

// clearDegraded ends the endpoint's degraded episode: no event (the
// episode's end is no recovery from failing: endpoint.recovered keeps its
// meaning), a log line.
func (h *Handler) clearDegraded(ctx context.Context, log *slog.Logger, ref store.EndpointRef, w rateWindow) {
	if fx, ok := h.moveDegraded(ctx, log, ref, false); ok {
		log.InfoContext(ctx, "endpoint no longer degraded: failure rate below its alert's threshold",
			"failure_percent", domain.FailurePercent(w.Attempts, w.failed()), "attempts", w.Attempts, "degraded_since", fx.Since)
	}
}

// moveDegraded sets or clears the endpoint's degraded mark and reports
// whether this call moved it. The instance's copy of the endpoint is
// patched with a move, else forgotten (another instance moved it, or the
// endpoint is gone: the next batch reads it again).
func (h *Handler) moveDegraded(ctx context.Context, log *slog.Logger, ref store.EndpointRef, degraded bool) (store.DegradedEffect, bool) {
	fx, err := h.Store.MarkEndpointDegraded(ctx, ref.TenantID, ref.EndpointID, degraded)
	h.keepWritten(ref, err == nil && fx.Moved, func(ep *domain.Endpoint) {
		ep.DegradedSince = nil
		if degraded {
			ep.DegradedSince = &fx.Since
		}
	})
	if err != nil {
		log.ErrorContext(ctx, "cannot mark the endpoint's degraded episode", "degraded", degraded, "rate_error", err.Error())
	}
	return fx, err == nil && fx.Moved
}
