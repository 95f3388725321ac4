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

// Gates bounds how many invocations send to one endpoint at once
// (store.TakeGate), and holds the circuit breaker's one probe.
type Gates interface {
	TakeGate(ctx context.Context, tenantID, endpointID string, a store.GateAsk) (store.Hold, bool, error)
	ReleaseGate(ctx context.Context, tenantID, endpointID string, h store.Hold, fastUntil *time.Time) error
	MarkGate(ctx context.Context, tenantID, endpointID string, fastUntil *time.Time) error
}

// FastFor is how long one fast batch keeps an endpoint fast (its fast
// slots open): an endpoint that turns slow holds the pool's larger share
// for at most this long and one request, then is back to
// EndpointConcurrency.
const FastFor = 5 * time.Second

// endpointGates are a batch's endpoint gates, one per endpoint, made when
// the batch's first attempt to it is admitted.
type endpointGates struct {
	mu sync.Mutex
	by map[store.EndpointRef]*endpointGate
}

// endpointGate admits a batch's attempts to one endpoint: the first takes
// a slot of the endpoint's gate for the batch (or the probe's slot, which
// admits one attempt), the others share it, and the last one done gives
// it back, saying whether every request was fast.
type endpointGate struct {
	mu    sync.Mutex
	hold  *store.Hold // held for the batch; nil: none (yet, or any more)
	probe bool        // the hold is the probe's: it admitted its one attempt
	open  bool        // the gate could not be read or written: admit all
	// fast says the batch's read showed the endpoint fast until fastUntil:
	// its attempts go without a slot (the fast path), and the last one
	// done keeps the mark fresh, or clears it if a request was slow.
	fast      bool
	fastUntil time.Time
	refused   bool // no slot: later attempts are refused at once
	users     int  // attempts admitted and not done
	slow      bool // an admitted request was slow
}

func (gs *endpointGates) gate(ref store.EndpointRef) *endpointGate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.by == nil {
		gs.by = map[store.EndpointRef]*endpointGate{}
	}
	if gs.by[ref] == nil {
		gs.by[ref] = &endpointGate{}
	}
	return gs.by[ref]
}

// admit is the last step of an attempt's preparation: the endpoint's
// circuit breaker and gate let it through, or say what it waits for. An
// open breaker defers it until the probe's time; a half-open one lets one
// attempt through as the probe (the rest of the batch, and of other
// invocations, wait); a closed one lets the attempt through while the
// tenant's gate (enterTenant) and then the endpoint's have a slot for the
// batch.
func (h *Handler) admit(ctx context.Context, at *attempt) {
	ep, now := at.in.Endpoint, at.in.Started
	state := ep.Breaker(now)
	if state == domain.BreakerOpen {
		at.in.Hitch = HitchBreakerOpen
		at.deferDelay = h.breakerDelay(ep, ep.BreakerUntil.Sub(now), at.in.Message.Deferrals)
		return
	}
	if !h.enterTenant(ctx, at) {
		at.in.Hitch = HitchTenantBusy
		at.deferDelay = h.tenantDelay(at.in.Message.Deferrals)
		return
	}
	at.gate = at.egates.gate(store.EndpointRef{TenantID: ep.TenantID, EndpointID: ep.EndpointID})
	admitted, probe := h.enter(ctx, at, state == domain.BreakerHalfOpen)
	switch {
	case !admitted && state == domain.BreakerHalfOpen:
		at.in.Hitch = HitchBreakerOpen
		at.deferDelay = h.breakerDelay(ep, h.attemptTimeout(ep), at.in.Message.Deferrals)
	case !admitted:
		at.in.Hitch = HitchEndpointBusy
		at.deferDelay = h.busyDelay(at.in.Message.Deferrals)
	default:
		at.admitted, at.probe = true, probe
	}
	if !admitted {
		at.gate = nil
	}
}

// enter admits the attempt through its batch's gate, taking the gate's
// slot (or, probe, the probe's) for the batch when it holds none. A gate
// that cannot be read or written admits every attempt of the batch,
// counted (metrics.GateUnavailable): it guards isolation, not delivery.
func (h *Handler) enter(ctx context.Context, at *attempt, probe bool) (admitted, isProbe bool) {
	g := at.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	ep := at.in.Endpoint
	if at.snap != nil && !probe && !g.fast && g.hold == nil && !g.refused {
		// Fast: every invocation may send to it (FastConcurrency is the
		// pool), so no slot is taken and none given back.
		if until, ok := at.snap.FastUntil[store.EndpointRef{TenantID: ep.TenantID, EndpointID: ep.EndpointID}]; ok && until.After(h.cfg.Now()) {
			g.fast, g.fastUntil = true, until
		}
	}
	switch {
	case g.open || g.fast:
		g.users++
		return true, false
	case g.refused || g.probe:
		return false, false
	case g.hold != nil:
		g.users++
		return true, false
	}
	slots := h.cfg.EndpointConcurrency
	ask := store.GateAsk{Slots: slots, Fast: max(h.cfg.FastConcurrency, slots), Probe: probe, Start: rand.IntN(max(h.cfg.FastConcurrency, slots)), Now: h.cfg.Now(), Until: h.holdUntil(ctx)}
	hold, ok, err := h.Store.TakeGate(ctx, ep.TenantID, ep.EndpointID, ask)
	switch {
	case err != nil:
		at.log.WarnContext(ctx, "cannot take the endpoint's gate; sending without it", "error", err.Error())
		at.mb.Put(metrics.GateUnavailable, 1, nil)
		g.open, g.users = true, g.users+1
		return true, false
	case !ok:
		g.refused = true
		return false, false
	}
	g.hold, g.probe, g.users, g.slow = &hold, probe, 1, false
	return true, probe
}

// leave is an admitted attempt done with its gate: slow says its request
// took SlowAfter or longer (or timed out). The last one gives the batch's
// hold back, the endpoint shown fast for FastFor when no request was slow.
func (h *Handler) leave(ctx context.Context, at *attempt, slow bool) {
	g := at.gate
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.users--
	g.slow = g.slow || slow
	if g.users > 0 {
		return
	}
	ep := at.in.Endpoint
	if g.fast {
		h.markFast(ctx, at, g)
		return
	}
	if g.hold == nil {
		return
	}
	var fastUntil *time.Time
	if !g.slow {
		t := h.cfg.Now().Add(FastFor)
		fastUntil = &t
	}
	if err := h.Store.ReleaseGate(ctx, ep.TenantID, ep.EndpointID, *g.hold, fastUntil); err != nil {
		// Its hold runs out by itself at the invocation's deadline.
		at.log.WarnContext(ctx, "cannot release the endpoint's gate", "error", err.Error())
	}
	if !g.probe {
		g.hold = nil
	}
}

// markFast keeps a fast-path batch's mark: cleared when a request was
// slow (the next batches take slots again), renewed for FastFor when it
// has less than half of that left, else left as it is (no write).
func (h *Handler) markFast(ctx context.Context, at *attempt, g *endpointGate) {
	now := h.cfg.Now()
	var until *time.Time
	switch {
	case g.slow:
	case g.fastUntil.Sub(now) < FastFor/2:
		t := now.Add(FastFor)
		until, g.fastUntil = &t, t
	default:
		return
	}
	ep := at.in.Endpoint
	if err := h.Store.MarkGate(ctx, ep.TenantID, ep.EndpointID, until); err != nil {
		at.log.WarnContext(ctx, "cannot mark the endpoint's gate", "error", err.Error())
	}
	if g.slow {
		g.fast = false
	}
}

// holdUntil is how long a gate's hold lasts should its holder never give
// it back (a crash): the invocation's deadline, or without one the
// request timeout and twice the reserve from now.
func (h *Handler) holdUntil(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return h.cfg.Now().Add(h.cfg.RequestTimeout + 2*h.cfg.Reserve)
}

// breakerDelay is how long a message waits for the endpoint's breaker:
// until (at least a second, and at least half of 2^deferrals seconds),
// then a random part of the longer of the current open period and
// 2^deferrals seconds (at most MaxDeferDelay in all), so that the backlog
// neither comes back all at once at the probe's time nor cycles through
// the queue at every probe: each wait of a message is about twice its
// last, and the first success of a probe finds the backlog coming back
// spread over its current waits. The floor bounds what a breaker open for
// hours costs: from its 10th deferral (about 8.5 min of waits in) a
// message waits at least 512 s, so it comes back at most 8 times an hour
// (BreakerReceivesPerHour), whatever the probe's time.
func (h *Handler) breakerDelay(ep domain.Endpoint, until time.Duration, deferrals int) time.Duration {
	grown := time.Duration(1<<min(max(deferrals, 0), 10)) * time.Second
	spread := max(h.cfg.Breaker.Open(ep.BreakerTrips), grown)
	return wholeSeconds(max(until, time.Second, grown/2) + time.Duration(draw(h.cfg.Rand)*float64(spread)))
}

// BreakerReceivesPerHour bounds how often a message deferred for an open
// breaker comes back once its waits have grown (breakerDelay: at least
// 512 s each from its 10th deferral): 3600/512, rounded up. A tenant-busy
// wait (tenantDelay, at least 450 s from its 8th) has the same bound.
const BreakerReceivesPerHour = 8

// busyDelay is how long a message waits for a slot of its endpoint's
// gate: a second, plus a random part of 2^(deferrals+2) seconds (4 s at
// first, at most 256 s), so a long backlog comes back a few times, spread
// out, rather than cycling through the queue.
func (h *Handler) busyDelay(deferrals int) time.Duration {
	span := time.Duration(1<<min(max(deferrals, 0)+2, 8)) * time.Second
	return wholeSeconds(time.Second + time.Duration(draw(h.cfg.Rand)*float64(span)))
}

// hitchDelay is how long a message waits after hookline's own dependency
// failed before its attempt: 5 s doubled for each hitch before (at most
// MaxDeferDelay), less up to half at random.
func (h *Handler) hitchDelay(hitches int) time.Duration {
	d := min(5*time.Second<<min(max(hitches, 0), 8), MaxDeferDelay)
	return wholeSeconds(d - time.Duration(draw(h.cfg.Rand)*float64(d/2)))
}

// wholeSeconds is d in whole seconds (SQS's unit), at least 1 and at most
// MaxDeferDelay.
func wholeSeconds(d time.Duration) time.Duration {
	return min(max(d.Truncate(time.Second), time.Second), MaxDeferDelay)
}
