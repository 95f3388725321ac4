package deliver

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

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
// attempt that needs one takes a slot of the tenant's gate
// (store.TenantGate) for the whole batch, and the batch gives it back at
// its end (releaseTenants): one TakeGate and one ReleaseGate per tenant
// and batch, and none for a batch whose attempts to the tenant all go to
// endpoints shown fast.
type tenantGates struct {
	mu sync.Mutex
	by map[string]*tenantGate
}

// tenantGate is one tenant's gate as a batch holds it.
type tenantGate struct {
	mu      sync.Mutex
	asked   bool        // the batch asked the gate
	hold    *store.Hold // held for the batch; nil: none
	taken   time.Time   // when the hold was taken
	refused bool        // no slot: the tenant's attempts to slow endpoints wait
	slow    bool        // an admitted request through the slot was slow
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

// enterTenant admits the attempt through its tenant's share of the pool.
// An attempt to an endpoint shown fast (the batch's read of its gate:
// its batches' requests all answered within SlowAfter, FastFor ago at
// most) needs no slot: it holds an invocation for less than SlowAfter,
// and an endpoint turning slow loses its mark after one batch, as the
// endpoint's own gate counts it. Any other attempt needs the tenant's
// slot for the batch, which the batch asks once (the first such attempt
// takes it for all the batch's attempts to the tenant): true while the
// batch holds it, or the gate cannot be read or written (counted,
// metrics.GateUnavailable, as an endpoint's); false when every slot is
// held (or resting): the tenant has its share of the pool.
func (h *Handler) enterTenant(ctx context.Context, at *attempt) bool {
	ep := at.in.Endpoint
	if at.snap != nil {
		if until, ok := at.snap.FastUntil[store.EndpointRef{TenantID: ep.TenantID, EndpointID: ep.EndpointID}]; ok && until.After(h.cfg.Now()) {
			return true
		}
	}
	g := at.tgates.gate(ep.TenantID)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.asked {
		g.asked = true
		ref := store.TenantGate(ep.TenantID)
		slots := h.cfg.TenantConcurrency
		ask := store.GateAsk{Slots: slots, Start: rand.IntN(slots), Now: h.cfg.Now(), Until: h.holdUntil(ctx)}
		hold, ok, err := h.Store.TakeGate(ctx, ref.TenantID, ref.EndpointID, ask)
		switch {
		case err != nil:
			at.log.WarnContext(ctx, "cannot take the tenant's gate; sending without it", "error", err.Error())
			at.mb.Put(metrics.GateUnavailable, 1, nil)
		case !ok:
			g.refused = true
		default:
			g.hold, g.taken = &hold, h.cfg.Now()
		}
	}
	if g.refused {
		return false
	}
	at.tgate = g
	return true
}

// tenantSlow marks the attempt's tenant slot slow: an admitted request
// took SlowAfter or longer (or timed out).
func (at *attempt) tenantSlow() {
	if g := at.tgate; g != nil {
		g.mu.Lock()
		g.slow = true
		g.mu.Unlock()
	}
}

// releaseTenants gives the batch's tenant slots back once its attempts are
// done: free at once after a batch whose requests through the slot were
// all fast; after a slow one, resting TenantRest times as long as the
// batch held it.
func (h *Handler) releaseTenants(ctx context.Context, ts *tenantGates) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := h.cfg.Now()
	for tenantID, g := range ts.by {
		g.mu.Lock()
		if g.hold != nil {
			hold := *g.hold
			if g.slow {
				hold.RestUntil = now.Add(TenantRest * now.Sub(g.taken))
			}
			if err := h.Store.ReleaseGate(ctx, tenantID, store.TenantGateID, hold, nil); err != nil {
				// Its hold runs out by itself at the invocation's deadline.
				h.Log.WarnContext(ctx, "cannot release the tenant's gate", "tenant_id", tenantID, "error", err.Error())
			}
			g.hold = nil
		}
		g.mu.Unlock()
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
	return spreadDelay(time.Duration(1<<min(max(deferrals, 0)+2, 10))*time.Second, draw(h.cfg.Rand))
}

// spreadDelay is span/2 and r (in [0, 1)) of the other half, in whole
// seconds, at most MaxDeferDelay (a span over 2*MaxDeferDelay still waits
// at least MaxDeferDelay/2).
func spreadDelay(span time.Duration, r float64) time.Duration {
	span = min(span, MaxDeferDelay)
	return wholeSeconds(span/2 + time.Duration(r*float64(span/2)))
}
