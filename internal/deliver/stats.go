package deliver

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/store"
)

// Counters keeps the endpoints' hourly attempt counters: one write per
// endpoint and hour per batch (store.Store.AddEndpointStats), and one per
// endpoint, hour and event type (store.Store.AddEndpointTypeStats).
type Counters interface {
	AddEndpointStats(ctx context.Context, tenantID, endpointID string, hour time.Time, st domain.AttemptStats) error
	AddEndpointTypeStats(ctx context.Context, tenantID, endpointID, eventType string, hour time.Time, st domain.AttemptStats) error
}

// Classify is the class of a sent attempt's result, as an endpoint's
// counters keep it: delivered; refused (the SSRF guard kept the request
// from leaving); timeout or network (no answer); or the answer's class.
func Classify(res sender.Result) domain.AttemptClass {
	switch {
	case res.Outcome == sender.Delivered:
		return domain.ClassDelivered
	case res.Error == "forbidden_address":
		return domain.ClassRefused
	case res.Status == 0 && res.Error == "timeout":
		return domain.ClassTimeout
	case res.Status == 0:
		return domain.ClassNetwork
	case res.Status == 429:
		return domain.ClassHTTP429
	case res.Status >= 500:
		return domain.ClassHTTP5xx
	case res.Status >= 400:
		return domain.ClassHTTP4xx
	}
	return domain.ClassHTTPOther
}

// statsKey is one write of a batch's counters: an endpoint's hour, or
// (eventType set) an endpoint's hour of one event type.
type statsKey struct {
	tenant, endpoint, eventType string
	hour                        time.Time
}

// batchStats gathers a batch's attempts per endpoint and hour, and per
// endpoint, hour and event type, to be written once at the batch's end;
// and the endpoints with a failure-rate alert they went to (watch), to be
// weighed after. Safe for concurrent use.
type batchStats struct {
	mu      sync.Mutex
	by      map[statsKey]*domain.AttemptStats
	byType  map[statsKey]*domain.AttemptStats
	watched map[store.EndpointRef]domain.Endpoint
}

// add counts one sent attempt, made at, of the endpoint's, for an event of
// eventType.
func (b *batchStats) add(tenantID, endpointID, eventType string, at time.Time, res sender.Result) {
	if b == nil {
		return
	}
	k := statsKey{tenant: tenantID, endpoint: endpointID, hour: domain.StatsHour(at)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by, b.byType = map[statsKey]*domain.AttemptStats{}, map[statsKey]*domain.AttemptStats{}
	}
	kt := k
	kt.eventType = eventType
	for _, c := range []struct {
		m map[statsKey]*domain.AttemptStats
		k statsKey
	}{{b.by, k}, {b.byType, kt}} {
		st := c.m[c.k]
		if st == nil {
			st = &domain.AttemptStats{}
			c.m[c.k] = st
		}
		st.Count(Classify(res), res.Latency, at.UTC(), res.Status, res.Error)
	}
}

// StatsWriteReserve is how long before the invocation's deadline the
// counters' writes give up: they must never make the invocation time out.
const StatsWriteReserve = 500 * time.Millisecond

// flushStats writes the batch's counters, one write per endpoint and hour
// and one per endpoint, hour and event type, all at once, within the
// invocation's deadline less StatsWriteReserve. A write that fails is
// logged and counted (metrics.StatsWriteFailed); it changes nothing of the
// batch's messages, all handled by now.
func (h *Handler) flushStats(ctx context.Context, b *batchStats, mb *metrics.Batch) {
	if len(b.by) == 0 {
		return
	}
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-StatsWriteReserve))
		defer cancel()
	}
	var wg sync.WaitGroup
	write := func(k statsKey, err error) {
		if err != nil {
			h.Log.WarnContext(ctx, "cannot write the endpoint's attempt counters", "tenant_id", k.tenant, "endpoint_id", k.endpoint, "by_type", k.eventType != "", "stats_error", err.Error())
			mb.Put(metrics.StatsWriteFailed, 1, nil)
		}
	}
	for k, st := range b.by {
		wg.Go(func() { write(k, h.Store.AddEndpointStats(ctx, k.tenant, k.endpoint, k.hour, *st)) })
	}
	for k, st := range b.byType {
		wg.Go(func() { write(k, h.Store.AddEndpointTypeStats(ctx, k.tenant, k.endpoint, k.eventType, k.hour, *st)) })
	}
	wg.Wait()
}

// statsBuffer is an instance's endpoint counters not yet written, and
// when it last wrote them. Safe for concurrent use.
type statsBuffer struct {
	mu      sync.Mutex
	pending *batchStats
	written time.Time
}

// keep merges b in and returns what is due for writing: everything kept,
// when the last write was at least every ago (or never), else nil.
func (s *statsBuffer) keep(b *batchStats, now time.Time, every time.Duration) *batchStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = &batchStats{}
	}
	s.pending.merge(b)
	if now.Sub(s.written) < every {
		return nil
	}
	due := s.pending
	s.pending, s.written = nil, now
	return due
}

// take returns everything kept, and keeps nothing.
func (s *statsBuffer) take() *batchStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := s.pending
	s.pending = nil
	return due
}

// merge adds o's counters to b's.
func (b *batchStats) merge(o *batchStats) {
	if o == nil || len(o.by) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by, b.byType = map[statsKey]*domain.AttemptStats{}, map[statsKey]*domain.AttemptStats{}
	}
	for _, m := range []struct {
		dst, src map[statsKey]*domain.AttemptStats
	}{{b.by, o.by}, {b.byType, o.byType}} {
		for k, st := range m.src {
			if have := m.dst[k]; have != nil {
				have.Merge(*st)
				continue
			}
			c := *st
			c.Failures = maps.Clone(st.Failures)
			m.dst[k] = &c
		}
	}
	if len(o.watched) > 0 && b.watched == nil {
		b.watched = map[store.EndpointRef]domain.Endpoint{}
	}
	maps.Copy(b.watched, o.watched) // the newer copies
}

// keepStats keeps a batch's counters in the instance's buffer and writes
// what is due (statsBuffer.keep): with StatsFlushEvery, an instance
// writes an endpoint's counters once per interval however many batches it
// works, where it wrote them once per batch (issue 37: two write units a
// batch, at batches of one a fifth of the cost). The first batch after a
// quiet interval is written at once. Once written, the failure-rate
// alerts of the endpoints they count are weighed (weighFailureRates).
func (h *Handler) keepStats(ctx context.Context, b *batchStats, mb *metrics.Batch) {
	if due := h.stats.keep(b, h.cfg.Now(), h.cfg.StatsFlushEvery); due != nil {
		h.flushStats(ctx, due, mb)
		h.weighFailureRates(ctx, due)
	}
}

// FlushStats writes the counters the instance kept (keepStats), within
// ctx: the function calls it on SIGTERM, when Lambda shuts the instance
// down. What a crash or a timeout ends first is lost: at most
// StatsFlushEvery of one instance's counters.
func (h *Handler) FlushStats(ctx context.Context) {
	h.setup()
	due := h.stats.take()
	if due == nil {
		return
	}
	mb := h.Metrics.Batch()
	h.flushStats(ctx, due, mb)
	mb.Flush()
}
