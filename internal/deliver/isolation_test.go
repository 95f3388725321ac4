package deliver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// batchOf is n fresh messages to t1/ep_1, ids prefixed.
func batchOf(t *testing.T, f *fixture, prefix string, n int) []events.SQSMessage {
	var msgs []events.SQSMessage
	for i := range n {
		msgs = append(msgs, sqsMessage(t, pid(fmt.Sprintf("%s%d", prefix, i)), "1", f.now.Add(-time.Minute)))
	}
	return msgs
}

// requeuedSince decodes the messages sent back to the delivery queue from
// the from-th on.
func (f *fixture) requeuedSince(t *testing.T, from int) []message.Message {
	t.Helper()
	var out []message.Message
	for _, b := range f.queue.requeued[from:] {
		m, err := message.Decode(b)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// An endpoint that fails opens its breaker at the failing threshold: its
// deliveries then wait (sent again, delayed past the probe's time, no
// attempt spent, no request), one probe goes out at a time once the
// cooldown has run out, a failed probe doubles the cooldown, and a
// successful one closes the breaker: the backlog is sent, and the
// endpoint.failing and endpoint.recovered events follow the breaker.
func TestBreakerHoldsBackAFailingEndpoint(t *testing.T) {
	var status atomic.Int32
	status.Store(503)
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	n := f.withNotices()
	f.h.Config.FailingAfter = 3
	f.h.Config.Breaker = domain.Breaker{Cooldown: 10 * time.Second, MaxCooldown: time.Minute}

	f.run(t, batchOf(t, f, "a", 3)...)
	require.EqualValues(t, 3, f.hits.Load())
	ep := f.store.endpoint("t1/ep_1")
	require.Equal(t, domain.BreakerOpen, ep.Breaker(f.now), "opened at the failing threshold")
	require.Equal(t, []string{domain.OpEndpointFailing}, n.types())

	// Open: nothing is sent; every message waits past the probe's time.
	from := len(f.queue.requeued)
	require.Empty(t, f.run(t, batchOf(t, f, "b", 10)...), "all done with here: each waits as a new message")
	require.EqualValues(t, 3, f.hits.Load(), "no request while open")
	for _, m := range f.requeuedSince(t, from) {
		require.Zero(t, m.Attempts, "no attempt spent")
		require.Equal(t, 1, m.Deferrals)
	}
	for _, d := range f.queue.requeueDelay[from:] {
		require.GreaterOrEqual(t, time.Duration(d)*time.Second, 10*time.Second, "back no earlier than the probe")
	}

	// Half open: one probe; it fails and the cooldown doubles.
	f.now = f.now.Add(11 * time.Second)
	from = len(f.queue.requeued)
	f.run(t, batchOf(t, f, "c", 5)...)
	require.EqualValues(t, 4, f.hits.Load(), "one probe of five")
	waits, retries := 0, 0
	for _, m := range f.requeuedSince(t, from) {
		if m.Attempts > 0 {
			retries++
		} else {
			waits++
		}
	}
	require.Equal(t, 4, waits, "the rest wait")
	require.Equal(t, 1, retries, "the failed probe's retry waits as a new message too")
	ep = f.store.endpoint("t1/ep_1")
	require.Equal(t, 1, ep.BreakerTrips)
	require.Equal(t, f.now.Add(20*time.Second), *ep.BreakerUntil, "a failed probe doubles the cooldown")
	f.run(t, batchOf(t, f, "d", 5)...)
	require.EqualValues(t, 4, f.hits.Load(), "open again: no request")

	// The receiver is back: the next probe closes the breaker.
	status.Store(200)
	f.now = f.now.Add(21 * time.Second)
	f.run(t, batchOf(t, f, "e", 5)...)
	require.EqualValues(t, 5, f.hits.Load(), "one probe")
	ep = f.store.endpoint("t1/ep_1")
	require.Equal(t, domain.BreakerClosed, ep.Breaker(f.now))
	require.Nil(t, ep.FailingSince)
	require.Equal(t, []string{domain.OpEndpointFailing, domain.OpEndpointRecovered}, n.types())
	require.False(t, ep.Disabled)

	// Closed: the backlog goes out.
	from = len(f.queue.requeued)
	f.run(t, batchOf(t, f, "f", 10)...)
	require.EqualValues(t, 15, f.hits.Load())
	require.Empty(t, f.queue.requeued[from:])
	require.Empty(t, f.queue.dlq, "nothing died")
}

// A slow endpoint is sent to by at most EndpointConcurrency invocations at
// once: the attempts of the others wait, sent again delayed, no attempt
// spent. An endpoint that answers fast gets the larger share, and one that
// turns slow loses it.
func TestSlowEndpointHoldsABoundedShare(t *testing.T) {
	var delay atomic.Int64
	delay.Store(int64(300 * time.Millisecond))
	var inFlight, most atomic.Int32
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		time.Sleep(time.Duration(delay.Load()))
		w.WriteHeader(200)
	})
	f.h.Config.EndpointConcurrency, f.h.Config.FastConcurrency = 2, 4
	f.h.Config.SlowAfter = 200 * time.Millisecond
	// Real time here: the gate's holds and fast marks are read against it.
	f.now = time.Now()
	f.h.Config.Now, f.store.Now = time.Now, time.Now
	concurrently := func(prefix string, batches int) {
		var wg sync.WaitGroup
		for b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msgs := batchOf(t, f, fmt.Sprintf("%s%d_", prefix, b), 10)
				f.queue.receive(time.Now(), msgs...)
				resp, err := f.h.Handle(context.Background(), events.SQSEvent{Records: msgs})
				require.NoError(t, err)
				require.Empty(t, resp.BatchItemFailures)
			}()
		}
		wg.Wait()
	}

	concurrently("slow", 4)
	require.EqualValues(t, 20, f.hits.Load(), "two invocations of four sent")
	require.LessOrEqual(t, most.Load(), int32(20))
	waited := f.requeuedSince(t, 0)
	require.Len(t, waited, 20, "the other two invocations' attempts wait")
	for _, m := range waited {
		require.Zero(t, m.Attempts)
		require.Equal(t, 1, m.Deferrals)
	}

	// Fast answers open the fast slots: four invocations at once.
	delay.Store(0)
	concurrently("warm", 1)
	most.Store(0)
	before := f.hits.Load()
	from := len(f.queue.requeued)
	delay.Store(int64(50 * time.Millisecond))
	concurrently("fast", 4)
	require.Equal(t, int32(40), f.hits.Load()-before, "fast: all four invocations sent")
	require.Empty(t, f.queue.requeued[from:])

	// Slow again: after one slow batch, back to two.
	delay.Store(int64(300 * time.Millisecond))
	concurrently("turn", 1)
	before, from = f.hits.Load(), len(f.queue.requeued)
	concurrently("slow2_", 4)
	require.Equal(t, int32(20), f.hits.Load()-before, "slow again: two of four")
	require.Len(t, f.queue.requeued[from:], 20)
}

// The gate's store failing does not stop deliveries: they go out without
// it, counted.
func TestGateUnavailableSendsAnyway(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	f.withPorts(func(p *testPorts) { p.Gates = failingGates{} })
	require.Empty(t, f.run(t, batchOf(t, f, "g", 3)...))
	require.EqualValues(t, 3, f.hits.Load())
}

type failingGates struct{}

func (failingGates) TakeGate(context.Context, string, string, store.GateAsk) (store.Hold, bool, error) {
	return store.Hold{}, false, errBoom
}

func (failingGates) ReleaseGate(context.Context, string, string, store.Hold, *time.Time) error {
	return errBoom
}

func (failingGates) MarkGate(context.Context, string, string, *time.Time) error { return errBoom }

// countingGates counts the endpoint gate writes a handler makes, and its
// tenant gate writes (store.TenantGate) apart.
type countingGates struct {
	Gates
	takes, releases, marks      atomic.Int32
	tenantTakes, tenantReleases atomic.Int32
	tenantMarks                 atomic.Int32
}

func (c *countingGates) TakeGate(ctx context.Context, t, e string, a store.GateAsk) (store.Hold, bool, error) {
	c.count(e, &c.takes, &c.tenantTakes)
	return c.Gates.TakeGate(ctx, t, e, a)
}

func (c *countingGates) ReleaseGate(ctx context.Context, t, e string, h store.Hold, f *time.Time) error {
	c.count(e, &c.releases, &c.tenantReleases)
	return c.Gates.ReleaseGate(ctx, t, e, h, f)
}

func (c *countingGates) MarkGate(ctx context.Context, t, e string, f *time.Time) error {
	c.count(e, &c.marks, &c.tenantMarks)
	return c.Gates.MarkGate(ctx, t, e, f)
}

func (c *countingGates) count(endpointID string, endpoint, tenant *atomic.Int32) {
	if endpointID == store.TenantGateID {
		tenant.Add(1)
		return
	}
	endpoint.Add(1)
}

// An endpoint shown fast is sent to without a slot: the batch's read of
// its gate says so, and no gate write is made but a renewal of the mark
// when it runs low; a slow batch clears the mark, and the next batch takes
// a slot again.
func TestFastEndpointTakesNoSlot(t *testing.T) {
	var slow atomic.Bool
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		if slow.Load() {
			time.Sleep(60 * time.Millisecond)
		}
		w.WriteHeader(200)
	})
	gates := &countingGates{Gates: f.store}
	f.withPorts(func(p *testPorts) { p.Gates = gates })
	f.h.Config.SlowAfter = 50 * time.Millisecond

	f.run(t, batchOf(t, f, "first", 10)...)
	// Not yet shown fast: a slot (or a few, should the batch's attempts
	// not overlap: each that finds the hold given back takes another).
	first := gates.takes.Load()
	require.GreaterOrEqual(t, first, int32(1), "not yet shown fast: a slot")
	require.Equal(t, first, gates.releases.Load(), "each given back, marking it fast")
	for i := range 5 {
		f.run(t, batchOf(t, f, fmt.Sprintf("fast%d_", i), 10)...)
	}
	require.Equal(t, first, gates.takes.Load(), "fast: no slot taken")
	require.Zero(t, gates.marks.Load(), "the mark has time left: no write")
	f.now = f.now.Add(3 * time.Second)
	f.run(t, batchOf(t, f, "renew", 10)...)
	require.EqualValues(t, 1, gates.marks.Load(), "renewed once when less than half is left")

	slow.Store(true)
	f.run(t, batchOf(t, f, "slow", 10)...)
	require.GreaterOrEqual(t, gates.marks.Load(), int32(2), "a slow batch clears the mark")
	before := gates.takes.Load()
	f.run(t, batchOf(t, f, "after", 10)...)
	require.Greater(t, gates.takes.Load(), before, "then slots again")
	require.EqualValues(t, 90, f.hits.Load(), "every message of the nine batches sent")
}
