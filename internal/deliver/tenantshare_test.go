package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// tenantMessage is a fresh message of id to tenant's endpoint, received once.
func tenantMessage(t *testing.T, id, tenant, endpoint string, occurred time.Time) events.SQSMessage {
	t.Helper()
	body, err := json.Marshal(message.Message{
		DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: "order.created",
		OccurredAt: occurred, Payload: json.RawMessage(`{"n":1}`),
	})
	require.NoError(t, err)
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
}

// noisyTenant gives tenant "noisy" n endpoints at a receiver that answers
// 503 after wait (a failing, slow host), and returns how many requests it
// got and the most it had at once.
func noisyTenant(t *testing.T, f *fixture, n int, wait time.Duration) (hits, most *atomic.Int32) {
	hits, most = &atomic.Int32{}, &atomic.Int32{}
	var inFlight atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		time.Sleep(wait)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	for i := range n {
		id := fmt.Sprintf("ep_n%d", i)
		f.store.setEndpoint(domain.Endpoint{TenantID: "noisy", EndpointID: id, URL: srv.URL, SealedSecrets: []string{f.seal(t, "noisy", id, f.secret)}})
	}
	return hits, most
}

// A tenant with a backlog spread over many endpoints of a slow, failing
// host is sent to by at most TenantConcurrency invocations at once,
// whatever its endpoints' own gates would allow; the quiet tenant's
// messages in the same batches, and in the batches that follow while the
// noisy tenant's slots rest, are all sent at once. The noisy tenant's
// messages over its share wait as new messages, no attempt spent.
func TestANoisyTenantDoesNotHoldAQuietOnesDeliveries(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	const wait = 300 * time.Millisecond
	noisyHits, noisyMost := noisyTenant(t, f, 40, wait)
	f.h.Config.TenantConcurrency, f.h.Config.EndpointConcurrency, f.h.Config.FastConcurrency = 2, 3, 8
	f.h.Config.SlowAfter = 100 * time.Millisecond
	f.h.Config.FailingAfter = -1 // the breaker apart: the tenant's gate alone bounds it
	// Real time: the gates' holds and rests are read against it.
	f.now = time.Now()
	f.h.Config.Now, f.store.Now = time.Now, time.Now

	// round runs invocations batches at once, each of nine messages to the
	// noisy tenant's endpoints (spread over them) and one to the quiet
	// tenant's, and returns the messages sent again to wait.
	// The quiet tenant shows itself fast (a batch answered within
	// SlowAfter): its later batches take no slot of its gate.
	require.Empty(t, f.run(t, tenantMessage(t, "warm", "t1", "ep_1", f.now)))
	f.hits.Store(0)

	var seq atomic.Int32
	var delays []int32 // the delays of round's waits
	var waits []message.Message
	round := func(invocations int) []message.Message {
		from := len(f.queue.requeued)
		var wg sync.WaitGroup
		for range invocations {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var msgs []events.SQSMessage
				for range 9 {
					n := seq.Add(1)
					msgs = append(msgs, tenantMessage(t, fmt.Sprintf("n%d", n), "noisy", fmt.Sprintf("ep_n%d", n%40), time.Now()))
				}
				msgs = append(msgs, tenantMessage(t, fmt.Sprintf("q%d", seq.Add(1)), "t1", "ep_1", time.Now()))
				f.queue.receive(time.Now(), msgs...)
				resp, err := f.h.Handle(context.Background(), events.SQSEvent{Records: msgs})
				require.NoError(t, err)
				var failed []string
				for _, fi := range resp.BatchItemFailures {
					failed = append(failed, fi.ItemIdentifier)
				}
				f.queue.done(msgs, failed)
			}()
		}
		wg.Wait()
		// The noisy tenant's failed attempts' retries are sent again too
		// (they carry their attempt); the waits carry none.
		waits, delays = nil, nil
		for i, m := range f.requeuedSince(t, from) {
			if m.Attempts == 0 {
				waits, delays = append(waits, m), append(delays, f.queue.requeueDelay[from+i])
			}
		}
		return waits
	}

	waited := round(6)
	require.EqualValues(t, 6, f.hits.Load(), "every quiet message of the six batches sent")
	require.EqualValues(t, 18, noisyHits.Load(), "the noisy tenant's nine of two invocations only (its share), though its endpoints' gates had room for all six")
	require.LessOrEqual(t, noisyMost.Load(), int32(18))
	require.Len(t, waited, 36, "the other four invocations' noisy messages wait")
	for _, m := range waited {
		require.Equal(t, "noisy", m.TenantID)
		require.Zero(t, m.Attempts, "waiting for the tenant's share spends no attempt")
		require.Equal(t, 1, m.Deferrals)
	}
	require.Len(t, delays, len(waited))
	for _, d := range delays {
		require.GreaterOrEqual(t, d, int32(2), "half of its first span (4 s) at least")
		require.LessOrEqual(t, d, int32(4))
	}

	// The noisy tenant's slots rest as long as its slow batches held them:
	// the next batches send the quiet tenant's messages and none of its.
	waited = round(4)
	require.EqualValues(t, 10, f.hits.Load(), "the quiet messages of the next batches sent at once")
	require.EqualValues(t, 18, noisyHits.Load(), "the noisy tenant's slots rest")
	require.Len(t, waited, 36)

	// Rested, the noisy tenant has its share again, and no more.
	time.Sleep(wait + 100*time.Millisecond)
	round(4)
	require.EqualValues(t, 14, f.hits.Load())
	require.EqualValues(t, 36, noisyHits.Load(), "two invocations' worth again")
}

// Without a tenant's gate (a share as large as the pool) the same batches
// send the noisy tenant's messages from every invocation: the gate, not
// its endpoints', is what bounds it.
func TestTenantShareIsWhatBoundsAManyEndpointTenant(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	noisyHits, _ := noisyTenant(t, f, 54, 50*time.Millisecond)
	f.h.Config.TenantConcurrency, f.h.Config.EndpointConcurrency, f.h.Config.FastConcurrency = 8, 3, 8
	f.h.Config.FailingAfter = -1
	f.now = time.Now()
	f.h.Config.Now, f.store.Now = time.Now, time.Now
	var wg sync.WaitGroup
	for b := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var msgs []events.SQSMessage
			for i := range 9 {
				msgs = append(msgs, tenantMessage(t, fmt.Sprintf("n%d_%d", b, i), "noisy", fmt.Sprintf("ep_n%d", b*9+i), time.Now()))
			}
			f.queue.receive(time.Now(), msgs...)
			_, err := f.h.Handle(context.Background(), events.SQSEvent{Records: msgs})
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 54, noisyHits.Load(), "each endpoint's gate alone lets every invocation through")
}

// A tenant's gate is asked once per batch, however many of its endpoints
// and messages the batch holds: one TakeGate and one ReleaseGate, and none
// once its endpoints are shown fast (a batch to fast endpoints costs no
// write more than before).
func TestTenantGateIsOneTakePerBatch(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	for i := range 5 {
		id := fmt.Sprintf("ep_%d", i+2)
		f.store.setEndpoint(domain.Endpoint{TenantID: "t1", EndpointID: id, URL: f.store.endpoint("t1/ep_1").URL, SealedSecrets: []string{f.seal(t, "t1", id, f.secret)}})
	}
	gates := &countingGates{Gates: f.store}
	f.withPorts(func(p *testPorts) { p.Gates = gates })
	batch := func(prefix string) []events.SQSMessage {
		var msgs []events.SQSMessage
		for i := range 10 {
			msgs = append(msgs, tenantMessage(t, fmt.Sprintf("%s%d", prefix, i), "t1", fmt.Sprintf("ep_%d", i%6+1), f.now))
		}
		return msgs
	}
	require.Empty(t, f.run(t, batch("a")...))
	require.EqualValues(t, 1, gates.tenantTakes.Load(), "one slot of the tenant's gate for the batch's ten messages to six endpoints")
	require.EqualValues(t, 1, gates.tenantReleases.Load())
	require.Empty(t, f.run(t, batch("b")...))
	require.EqualValues(t, 1, gates.tenantTakes.Load(), "its endpoints shown fast by the first batch: no slot taken")
	require.EqualValues(t, 1, gates.tenantReleases.Load())
	require.Zero(t, gates.tenantMarks.Load(), "a tenant's gate has no fast mark")
	require.EqualValues(t, 20, f.hits.Load())
}

// A tenant's gate that cannot be asked admits its attempts (counted):
// it guards isolation, not delivery.
func TestTenantGateUnavailableSendsAnyway(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	f.withPorts(func(p *testPorts) { p.Gates = tenantGateFails{Gates: f.store} })
	require.Empty(t, f.run(t, batchOf(t, f, "g", 3)...))
	require.EqualValues(t, 3, f.hits.Load())
}

type tenantGateFails struct{ Gates }

func (g tenantGateFails) TakeGate(ctx context.Context, t, e string, a store.GateAsk) (store.Hold, bool, error) {
	if e == store.TenantGateID {
		return store.Hold{}, false, errBoom
	}
	return g.Gates.TakeGate(ctx, t, e, a)
}

// The waits for a tenant's share and for an open breaker have a floor
// that grows with the message's deferrals, so a message that keeps
// waiting comes back at most BreakerReceivesPerHour times an hour, even
// at the jitter's least (0).
func TestLongWaitsAreBoundedPerHour(t *testing.T) {
	h := configured(Config{Rand: func() float64 { return 0 }, Breaker: domain.Breaker{}.WithDefaults()})
	ep := domain.Endpoint{BreakerTrips: 0}
	count := func(next func(deferrals int) time.Duration) (first, steady int) {
		var at time.Duration
		for d := 0; at < 2*time.Hour; d++ {
			at += next(d)
			switch {
			case at <= time.Hour:
				first++
			case at <= 2*time.Hour:
				steady++
			}
		}
		return first, steady
	}
	for name, next := range map[string]func(int) time.Duration{
		"breaker": func(d int) time.Duration { return h.breakerDelay(ep, time.Second, d) },
		"tenant":  h.tenantDelay,
	} {
		first, steady := count(next)
		require.LessOrEqual(t, steady, BreakerReceivesPerHour, "%s: the second hour", name)
		require.LessOrEqual(t, first, 2*BreakerReceivesPerHour, "%s: the first hour, its waits growing", name)
	}
	require.Equal(t, 512*time.Second, h.breakerDelay(ep, time.Second, 30), "the floor, at the jitter's least")
	require.Equal(t, 450*time.Second, h.tenantDelay(30))
	h = configured(Config{Rand: func() float64 { return 0.999 }})
	require.Equal(t, MaxDeferDelay, h.breakerDelay(ep, time.Second, 30), "never past what SQS delays a message for")
	require.Equal(t, MaxDeferDelay-time.Second, h.tenantDelay(30))
}

// A message over its tenant's share waits without spending an attempt:
// one on its third receive is sent again carrying the two attempts made
// before it (none for this receive), one deferral more, and is done with
// here; the batch's other tenant's message is sent.
func TestOverShareWaitKeepsTheAttemptCount(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	noisyHits, _ := noisyTenant(t, f, 2, 0)
	f.h.Config.TenantConcurrency = 1
	// The tenant's one slot is held by another invocation.
	_, ok, err := f.store.TakeGate(context.Background(), "noisy", store.TenantGateID, store.GateAsk{Slots: 1, Now: f.now, Until: f.now.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, ok)

	over := tenantMessage(t, "over", "noisy", "ep_n0", f.now)
	over.Attributes["ApproximateReceiveCount"] = "3"
	quiet := tenantMessage(t, "quiet", "t1", "ep_1", f.now)
	require.Empty(t, f.run(t, over, quiet), "both done with here: the waiting one as a new message")
	require.EqualValues(t, 1, f.hits.Load(), "the other tenant's message sent")
	require.Zero(t, noisyHits.Load())
	back := f.requeuedSince(t, 0)
	require.Len(t, back, 1)
	require.Equal(t, "over", back[0].DeliveryID)
	require.Equal(t, 2, back[0].Attempts, "the two attempts before this receive, and none for it")
	require.Equal(t, 1, back[0].Deferrals)
	_, err = f.store.Delivery(context.Background(), "over")
	require.ErrorIs(t, err, store.ErrNotFound, "no attempt written: the delivery has no record yet")
}

// fromLane is m as the lane's mapping hands it over.
func fromLane(m events.SQSMessage) events.SQSMessage {
	m.EventSourceARN = laneARN
	return m
}

// laned decodes the messages sent to the tenant lane since from.
func (f *fixture) lanedSince(t *testing.T, from int) []message.Message {
	t.Helper()
	f.queue.mu.Lock()
	defer f.queue.mu.Unlock()
	var out []message.Message
	for _, b := range f.queue.laned[from:] {
		m, err := message.Decode(b)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// With a tenant lane, a message whose tenant is over its share moves from
// the delivery queue to the lane, and one received from the lane waits in
// the lane whatever it waits for (a retry too): a tenant over its share
// no longer cycles through the queue every other tenant's deliveries come
// through. Another wait of a delivery-queue message stays in the delivery
// queue.
func TestOverShareMovesToTheLane(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	f.h.Config.LaneQueueURL = laneURL
	noisyHits, _ := noisyTenant(t, f, 2, 0)
	f.h.Config.TenantConcurrency = 1
	f.h.Config.FailingAfter = -1
	_, ok, err := f.store.TakeGate(context.Background(), "noisy", store.TenantGateID, store.GateAsk{Slots: 1, Now: f.now, Until: f.now.Add(time.Hour)})
	require.NoError(t, err)
	require.True(t, ok)

	over := tenantMessage(t, "over", "noisy", "ep_n0", f.now)
	quiet := tenantMessage(t, "quiet", "t1", "ep_1", f.now)
	require.Empty(t, f.run(t, over, quiet))
	require.EqualValues(t, 1, f.hits.Load(), "the quiet tenant's message sent")
	require.Empty(t, f.requeuedSince(t, 0), "nothing waits in the delivery queue")
	moved := f.lanedSince(t, 0)
	require.Len(t, moved, 1)
	require.Equal(t, "over", moved[0].DeliveryID)
	require.Equal(t, 1, moved[0].Deferrals)
	require.Zero(t, moved[0].Attempts)

	// Received from the lane while the tenant is still over its share: it
	// waits in the lane again.
	again := fromLane(tenantMessage(t, "over", "noisy", "ep_n0", f.now))
	again.MessageId, again.ReceiptHandle, again.Body = "m_over2", "rh_over2", f.queue.laned[0]
	require.Empty(t, f.run(t, again))
	back := f.lanedSince(t, 1)
	require.Len(t, back, 1)
	require.Equal(t, 2, back[0].Deferrals)
	require.Empty(t, f.requeuedSince(t, 0))
	require.LessOrEqual(t, f.queue.lanedDelay[0], int32(4), "the first wait: 2 to 4 s")
	require.GreaterOrEqual(t, f.queue.lanedDelay[1], int32(4), "the second, doubled: 4 to 8 s")

	// Its share free again, a lane message's failed attempt retries in the
	// lane (the hop of a wait over HopAfter), and a delivery-queue
	// message's in the delivery queue.
	require.NoError(t, f.store.ReleaseGate(context.Background(), "noisy", store.TenantGateID, store.Hold{Slot: 0, Until: f.now.Add(time.Hour)}, nil))
	f.h.Config.TenantConcurrency = 6
	l := fromLane(tenantMessage(t, "l1", "noisy", "ep_n1", f.now))
	d := tenantMessage(t, "d1", "noisy", "ep_n0", f.now)
	require.Empty(t, f.run(t, l, d))
	require.EqualValues(t, 2, noisyHits.Load())
	lane, queue := f.lanedSince(t, 2), f.requeuedSince(t, 0)
	require.Len(t, lane, 1)
	require.Equal(t, "l1", lane[0].DeliveryID)
	require.Equal(t, 1, lane[0].Attempts, "a retry carries its attempt")
	require.Len(t, queue, 1)
	require.Equal(t, "d1", queue[0].DeliveryID)
}

// A lane message's visibility is changed on the lane (its receipt handle
// is the lane's): a retry short enough to wait in flight (an endpoint's
// own 2 s step) hides it there.
func TestLaneMessageVisibilityIsTheLanes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
	f.h.Config.LaneQueueURL = laneURL
	own := f.store.endpoint("t1/ep_1")
	own.EndpointID, own.RetrySchedule = "ep_2", []int{2}
	own.SealedSecrets = []string{f.seal(t, "t1", "ep_2", f.secret)}
	f.store.setEndpoint(own)
	m := fromLane(endpointMessage(t, "short", "ep_2", "1", f.now.Add(-time.Minute)))
	require.Equal(t, []string{"m_short"}, f.run(t, m), "it comes back after its wait")
	v, ok := f.queue.visibilityOf("rh_short")
	require.True(t, ok, "its visibility set, on the lane (the fake refuses a handle on the wrong queue)")
	require.Equal(t, int32(2), v)
}
