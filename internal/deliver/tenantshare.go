package deliver

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// TenantRest is how long, relative to its hold, a slot of a tenant's gate
// rests after a batch whose requests to the tenant were slow: 1, as long
// as the batch held it, so that a slow tenant holds each of its
// TenantConcurrency slots at most half of the time. The bound is then on
// the tenant's time, not only on its concurrency: where invocations run
// one at a time (the local cloud's single poller), a tenant's hanging
// batches take at most half of the pool's time and the other tenants'
// messages go out in between.
const TenantRest = 1

// tenantGates are a batch's tenant gates, one per tenant: its first
// attempt to be admitted takes a slot of the tenant's gate (store.TenantGate)
// for the whole batch, and the batch gives it back at its end
// (releaseTenants): one TakeGate and one ReleaseGate per tenant and batch,
// none while the tenant is shown fast.
type tenantGates struct {
	mu sync.Mutex
	by map[string]*tenantGate
}

// tenantGate is one tenant's gate as a batch holds it.
type tenantGate struct {
	mu      sync.Mutex
	asked   bool        // the batch asked the gate (or found the tenant fast)
	hold    *store.Hold // held for the batch; nil: none
	taken   time.Time   // when the hold was taken
	open    bool        // the gate could not be read or written: admit all
	fast    bool        // the batch's read showed the tenant fast (no slot)
	refused bool        // no slot: the tenant's attempts wait
	slow    bool        // an admitted request to the tenant was slow
	// fastUntil is until when the batch's read showed the tenant fast.
	fastUntil time.Time
}

func (ts *tenantGates) gate(tenantID string) *tenantGate {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.by == nil {
		ts.by = map[string]*tenantGate{}
	}
	if ts.by[tenantID] == nil {
		ts.by[tenantID] = &tenantGate{}
	}
	return ts.by[tenantID]
}

// enterTenant admits the attempt through its tenant's gate, which the
// batch asks once (the first attempt to a tenant takes a slot for all
// the batch's attempts to it): true while the tenant is fast, holds a
// slot for the batch, or its gate cannot be read or written (counted,
// metrics.GateUnavailable, as an endpoint's); false when every slot is
// held (or resting): the tenant has its share of the pool.
func (h *Handler) enterTenant(ctx context.Context, at *attempt) bool {
	ep := at.in.Endpoint
	g := at.tgates.gate(ep.TenantID)
	at.tgate = g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.asked {
		return !g.refused
	}
	g.asked = true
	ref := store.TenantGate(ep.TenantID)
	if at.snap != nil {
		if until, ok := at.snap.FastUntil[ref]; ok && until.After(h.now()) {
			g.fast, g.fastUntil = true, until
			return true
		}
	}
	slots := h.tenantConcurrency()
	fast := max(h.FastConcurrency, slots)
	ask := store.GateAsk{Slots: slots, Fast: fast, Start: rand.IntN(fast), Now: h.now(), Until: h.holdUntil(ctx)}
	hold, ok, err := h.Store.TakeGate(ctx, ref.TenantID, ref.EndpointID, ask)
	switch {
	case err != nil:
		at.log.WarnContext(ctx, "cannot take the tenant's gate; sending without it", "error", err.Error())
		at.mb.Put(metrics.GateUnavailable, 1, nil)
		g.open = true
	case !ok:
		g.refused = true
	default:
		g.hold, g.taken = &hold, h.now()
	}
	return !g.refused
}

// tenantSlow marks the attempt's tenant gate slow: an admitted request
// took SlowAfter or longer (or timed out).
func (at *attempt) tenantSlow() {
	if g := at.tgate; g != nil {
		g.mu.Lock()
		g.slow = true
		g.mu.Unlock()
	}
}

// releaseTenants gives the batch's tenant slots back once its attempts are
// done: after a batch whose requests to the tenant were all fast, free at
// once and the tenant shown fast for FastFor (its later batches take no
// slot, and may use FastConcurrency of the pool); after a slow one,
// resting for TenantRest times as long as the batch held it. A tenant
// shown fast keeps (or, slow, loses) its mark as an endpoint does
// (markFast): one write at most per tenant and batch, none most batches.
func (h *Handler) releaseTenants(ctx context.Context, ts *tenantGates) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := h.now()
	for tenantID, g := range ts.by {
		g.mu.Lock()
		ref := store.TenantGate(tenantID)
		switch {
		case g.fast && g.slow:
			h.markTenant(ctx, ref, nil)
		case g.fast && g.fastUntil.Sub(now) < FastFor/2:
			t := now.Add(FastFor)
			h.markTenant(ctx, ref, &t)
		case g.hold != nil:
			hold := *g.hold
			var fastUntil *time.Time
			if g.slow {
				hold.RestUntil = now.Add(TenantRest * now.Sub(g.taken))
			} else {
				t := now.Add(FastFor)
				fastUntil = &t
			}
			if err := h.Store.ReleaseGate(ctx, ref.TenantID, ref.EndpointID, hold, fastUntil); err != nil {
				// Its hold runs out by itself at the invocation's deadline.
				h.Log.WarnContext(ctx, "cannot release the tenant's gate", "tenant_id", tenantID, "error", err.Error())
			}
			g.hold = nil
		}
		g.mu.Unlock()
	}
}

func (h *Handler) markTenant(ctx context.Context, ref store.EndpointRef, until *time.Time) {
	if err := h.Store.MarkGate(ctx, ref.TenantID, ref.EndpointID, until); err != nil {
		h.Log.WarnContext(ctx, "cannot mark the tenant's gate", "tenant_id", ref.TenantID, "error", err.Error())
	}
}

// tenantDelay is how long a message waits for a slot of its tenant's
// gate: half of 2^(deferrals+2) seconds and a random part of the other
// half (2 to 4 s at first), at most MaxDeferDelay: each wait about twice
// the last, and never shorter than half its span, so a message of a
// tenant that stays over its share comes back at most 8 times an hour
// once its span reaches 900 s (its 8th deferral, about 8.5 min of waits
// in).
func (h *Handler) tenantDelay(deferrals int) time.Duration {
	return spreadDelay(time.Duration(1<<min(max(deferrals, 0)+2, 10))*time.Second, h.rand())
}

// spreadDelay is span/2 and r (in [0, 1)) of the other half, in whole
// seconds, at most MaxDeferDelay (a span over 2*MaxDeferDelay still waits
// at least MaxDeferDelay/2).
func spreadDelay(span time.Duration, r float64) time.Duration {
	span = min(span, MaxDeferDelay)
	return wholeSeconds(span/2 + time.Duration(r*float64(span/2)))
}

func (h *Handler) tenantConcurrency() int {
	if h.TenantConcurrency <= 0 {
		return domain.DefaultTenantConcurrency
	}
	return h.TenantConcurrency
}
