package deliver

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store"
)

// Limiter takes a rate-limited endpoint's request slots, per one-second
// window, shared by every invocation (store.TakeSlots).
type Limiter interface {
	TakeSlots(ctx context.Context, tenantID, endpointID string, window time.Time, n, limit int) (store.Slots, error)
}

// MaxDeferDelay is the longest a message sent again to wait is delayed:
// SQS's most DelaySeconds, 900 s.
const MaxDeferDelay = 900 * time.Second

// rateGates are a batch's gates, one per rate-limited endpoint, made when
// its first attempt asks for a slot: a batch of unlimited endpoints makes
// none.
type rateGates struct {
	msgs []message.Message // the batch's messages (zero where undecodable)
	mu   sync.Mutex
	by   map[store.EndpointRef]*gate
}

// gate hands a batch's attempts to one endpoint their request slots: it
// takes them from the Limiter for all the batch's messages to the
// endpoint at once (one write per window, not one per message), and hands
// them out one by one.
type gate struct {
	mu    sync.Mutex
	ref   store.EndpointRef
	want  int         // the batch's messages to the endpoint not yet given a slot or turned away
	slots []time.Time // slots taken and not handed out yet: when each may be sent
	shut  bool        // no slot within the wait: later askers are turned away at once
}

func (gs *rateGates) gate(ref store.EndpointRef) *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if g := gs.by[ref]; g != nil {
		return g
	}
	g := &gate{ref: ref}
	for _, m := range gs.msgs {
		if m.TenantID == ref.TenantID && m.EndpointID == ref.EndpointID {
			g.want++
		}
	}
	if gs.by == nil {
		gs.by = map[store.EndpointRef]*gate{}
	}
	gs.by[ref] = g
	return g
}

// waitForSlot holds a prepared attempt to a rate-limited endpoint until it
// has a request slot and the slot's time has come, and answers Send; or,
// when no slot comes within the wait the invocation can afford
// (waitable), sets HitchRateLimited and answers Defer, with the delay to
// send the message again after.
func (h *Handler) waitForSlot(ctx context.Context, at *attempt, dec Decision) Decision {
	msg := at.in.Message
	g := at.gates.gate(store.EndpointRef{TenantID: msg.TenantID, EndpointID: msg.EndpointID})
	limit := at.in.Endpoint.RateLimit
	for {
		sendAt, ok := h.takeSlot(ctx, at, g, limit)
		if !ok {
			at.in.Hitch = HitchRateLimited
			return decideBefore(at.in, h.policy(at.in.Endpoint))
		}
		h.cfg.SleepUntil(ctx, sendAt)
		// The slot counts in its own 1/limit of its second only: a holder
		// woken late (past it: a process the machine did not schedule in
		// time) takes another, so that late holders are not sent together
		// beside the next slots' (its second's count holds either way).
		if now := h.cfg.Now(); now.Before(sendAt.Add(time.Second / time.Duration(limit))) {
			at.in.Started = now
			return dec
		}
	}
}

// takeSlot hands the attempt a slot of g, taking the batch's from the
// Limiter when none is left, waiting for the next window while the
// invocation can afford it. ok is false when no slot comes in time; the
// attempt's deferDelay is then set.
func (h *Handler) takeSlot(ctx context.Context, at *attempt, g *gate, limit int) (sendAt time.Time, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.shut {
		if len(g.slots) > 0 {
			sendAt, g.slots = g.slots[0], g.slots[1:]
			g.want--
			return sendAt, true
		}
		now := h.cfg.Now()
		got, err := h.Store.TakeSlots(ctx, g.ref.TenantID, g.ref.EndpointID, now, max(g.want, 1), limit)
		if err != nil {
			at.log.WarnContext(ctx, "cannot take a rate slot; message sent again delayed", "error", err.Error())
			break
		}
		window := now.Truncate(time.Second)
		for i := range got.Granted {
			g.slots = append(g.slots, window.Add(time.Duration(got.Slot(i))*time.Second/time.Duration(limit)))
		}
		if got.Granted > 0 {
			continue
		}
		next := window.Add(time.Second)
		if !h.mayWait(ctx, at.in.Started, now, next, h.attemptTimeout(at.in.Endpoint)) {
			g.shut = true
			break
		}
		h.cfg.SleepUntil(ctx, next)
	}
	at.deferDelay = h.deferDelay(g.want, limit, at.in.Message.Deferrals)
	g.want--
	return time.Time{}, false
}

// mayWait reports whether an attempt that began at started may wait from
// now until until: at most RateWait from its start, and leaving it Reserve
// and its request timeout (the endpoint's, or RequestTimeout) before the
// invocation's deadline.
func (h *Handler) mayWait(ctx context.Context, started, now, until time.Time, timeout time.Duration) bool {
	if until.Sub(started) > h.cfg.RateWait {
		return false
	}
	deadline, has := ctx.Deadline()
	if !has {
		return true
	}
	return time.Until(deadline)-until.Sub(now) >= h.cfg.Reserve+timeout
}

// deferDelay is how long a message turned away by its endpoint's rate
// limit waits before it comes back: a second, plus a time drawn at random
// ("full jitter") up to the time the batch's backlog (messages still
// waiting for the endpoint) takes at the limit, plus a second, doubled
// for each time the message was turned away before (deferrals, up to
// 2^8). The doubling finds a backlog longer than the batch (which no
// invocation sees) in a few re-sends; the full jitter spreads the
// messages over the whole span, so the endpoint's seconds stay used
// while they wait. Whole seconds, at most MaxDeferDelay.
func (h *Handler) deferDelay(backlog, limit, deferrals int) time.Duration {
	span := (1 + math.Ceil(float64(max(backlog, 1))/float64(limit))) * math.Pow(2, float64(min(max(deferrals, 0), 8)))
	secs := 1 + math.Floor(span*draw(h.cfg.Rand))
	return min(time.Duration(secs)*time.Second, MaxDeferDelay)
}
