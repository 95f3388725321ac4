package deliver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/retry"
	"github.com/stretchr/testify/require"
)

// The fake SQS refuses what SQS refuses: a visibility ending more than 12 h
// after the receive, above 43200 s, on a message no longer in flight, and a
// delay above 900 s. Without this, the tests below could not fail.
func TestFakeQueueEnforcesSQSLimits(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		held    time.Duration // receive to call
		vis     int32
		refused string // "" when accepted
	}{
		{"12 h at the receive", 0, 43200, ""},
		{"0 at the end of the in-flight window", lastInFlight, 0, ""},
		{"the rest of 12 h, held 6 min", lastInFlight, 43200 - 360, ""},
		{"a second more than the rest of 12 h", lastInFlight, 43200 - 360 + 1, "past 12 h from the receive"},
		{"12 h a second after the receive", time.Second, 43200, "past 12 h from the receive"},
		{"above 43200", 0, 43201, "not in 0..43200"},
		{"negative", 0, -1, "not in 0..43200"},
		{"visible again at the visibility timeout", queueVisibility, 0, "MessageNotInflight"},
		{"no longer in flight", queueVisibility + time.Second, 0, "MessageNotInflight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newFakeQueue(func() time.Time { return now }, queueVisibility)
			q.receive(now.Add(-tt.held), events.SQSMessage{ReceiptHandle: "rh"})
			_, err := q.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{
				QueueUrl: strPtr("https://sqs.example/q"), ReceiptHandle: strPtr("rh"), VisibilityTimeout: tt.vis,
			})
			if tt.refused == "" {
				require.NoError(t, err)
				require.Empty(t, q.refusals())
				v, ok := q.visibilityOf("rh")
				require.True(t, ok)
				require.Equal(t, tt.vis, v)
				return
			}
			require.ErrorContains(t, err, tt.refused)
			require.Len(t, q.refusals(), 1)
			_, ok := q.visibilityOf("rh")
			require.False(t, ok, "a refused change changes nothing")
		})
	}
	t.Run("unknown receipt handle", func(t *testing.T) {
		q := newFakeQueue(func() time.Time { return now }, queueVisibility)
		_, err := q.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{
			QueueUrl: strPtr("https://sqs.example/q"), ReceiptHandle: strPtr("rh"), VisibilityTimeout: 0,
		})
		require.ErrorContains(t, err, "ReceiptHandleIsInvalid")
	})
	t.Run("delay above 900 s", func(t *testing.T) {
		q := newFakeQueue(func() time.Time { return now }, queueVisibility)
		body := "{}"
		_, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: strPtr("https://sqs.example/dlq"), MessageBody: &body, DelaySeconds: 901})
		require.ErrorContains(t, err, "DelaySeconds 901")
	})
}

func strPtr(s string) *string { return &s }

// A policy that believes the queue's visibility timeout shorter than it is
// asks for a visibility SQS refuses, and the fake catches it: the policy's
// VisibilityTimeout must be the queue's (the stack sets both from one
// value). A long wait is hidden in flight only when it cannot be sent
// again (SQS failing), so that is the path taken here.
func TestPolicyUnderstatingTheQueueVisibilityIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "46800")
		w.WriteHeader(429)
	})
	f.refusalsExpected = true
	f.queue.failRequeue = true
	f.h.Config.Policy.VisibilityTimeout = time.Minute // the queue's is 6 min
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	require.Equal(t, []string{m.MessageId}, f.run(t, m), "still comes back, after the queue's visibility timeout")
	require.Len(t, f.queue.refusals(), 1)
	require.Contains(t, f.queue.refusals()[0], "past 12 h from the receive")
	_, set := f.queue.visibilityOf(m.ReceiptHandle)
	require.False(t, set)
}

// setVisibility clamps what it is given to the longest delay, whoever asks.
func TestSetVisibilityStaysWithinTheLongestDelay(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{13 * time.Hour, 12 * time.Hour, time.Duration(math.MaxInt64), -time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			f := newFixture(t, func(http.ResponseWriter, *http.Request) {})
			m := events.SQSMessage{ReceiptHandle: "rh"}
			f.queue.receive(f.now.Add(-lastInFlight), m)
			f.h.setup()
			f.h.setVisibility(context.Background(), f.h.Log, m, d)
			v, ok := f.queue.visibilityOf("rh")
			require.True(t, ok)
			require.Equal(t, int32(min(max(d, 0), f.h.Config.Policy.LongestDelay())/time.Second), v)
		})
	}
}

// Property: over the default schedule, every jitter mode and draw, every
// attempt, Retry-After values around and past 12 h, and every time between
// the message's receive and the end of its in-flight window, no visibility
// the handler asks for is refused by (the fake) SQS; a Retry-After of 12 h
// or more is clamped to the longest delay SQS accepts, not dropped. Boundary
// values first, then a seeded random sweep.
func TestRequestedVisibilityAlwaysFitsSQS(t *testing.T) {
	t.Parallel()
	retryAfters := []string{"", "0", "43140" /* 11h59m */, "43200" /* 12h */, "46800" /* 13h */, "99999999999999999999"}
	held := []time.Duration{0, time.Second, 60 * time.Second /* the deliver function's timeout */, queueVisibility / 2, lastInFlight}
	draws := []float64{0, 0.5, math.Nextafter(1, 0)}
	modes := []retry.JitterMode{retry.JitterProportional, retry.JitterFull, retry.JitterNone}

	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			var retryAfter atomic.Value
			retryAfter.Store("")
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
				if v := retryAfter.Load().(string); v != "" {
					w.Header().Set("Retry-After", v)
				}
				w.WriteHeader(429)
			})
			f.h.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
			f.h.Config.Policy = retry.Policy{Mode: mode, VisibilityTimeout: queueVisibility}
			// Every attempt fails: keep the endpoint enabled, and its
			// breaker closed, throughout.
			f.h.Config.DisableAfter, f.h.Config.FailingAfter = -1, -1
			longest := f.h.Config.Policy.LongestDelay()
			// The draw is read through a variable: the Config is applied
			// at the first Handle, and a later change is not seen.
			var cur float64
			f.h.Config.Rand = func() float64 { return cur }
			n := 0
			try := func(t *testing.T, attempt int, age time.Duration, ra string, h time.Duration, draw float64) {
				t.Helper()
				n++
				id := "d" + strconv.Itoa(n)
				desc := fmt.Sprintf("attempt %d, age %s, Retry-After %q, held %s, draw %v", attempt, age, ra, h, draw)
				retryAfter.Store(ra)
				f.held = h
				cur = draw
				m := sqsMessage(t, id, strconv.Itoa(attempt), f.now.Add(-age))
				f.run(t, m)
				require.Empty(t, f.queue.refusals(), desc)
				v, set := f.queue.visibilityOf(m.ReceiptHandle)
				outs := f.store.outcomes[id]
				require.Len(t, outs, 1, desc)
				switch {
				case attempt >= f.h.Config.Policy.Attempts():
					require.False(t, set, "the last attempt is dead-lettered, its visibility left: %s", desc)
					require.Equal(t, domain.StateDead, outs[0].State, desc)
				case outs[0].State == domain.StatePending:
					wait := time.Duration(v) * time.Second
					if set {
						require.LessOrEqual(t, wait, DefaultHopAfter, "only a wait of HopAfter or less is hidden in flight: %s", desc)
					} else {
						next, err := message.Decode(f.queue.requeued[len(f.queue.requeued)-1])
						require.NoError(t, err, desc)
						require.Equal(t, id, next.DeliveryID, "a longer one is sent again: %s", desc)
						require.NotNil(t, next.NotBefore, desc)
						wait = next.NotBefore.Sub(f.now.Truncate(time.Second))
						require.Greater(t, wait, DefaultHopAfter, desc)
						require.LessOrEqual(t, f.queue.requeueDelay[len(f.queue.requeueDelay)-1], int32(900), "SQS delays 900 s at most: %s", desc)
					}
					require.LessOrEqual(t, wait, longest, desc)
					if secs, err := strconv.ParseFloat(ra, 64); err == nil && secs >= longest.Seconds() {
						require.Equal(t, longest, wait, "a Retry-After of 12 h or more waits the longest delay: %s", desc)
					}
				default:
					require.Equal(t, domain.ReasonMaxAgeExceeded, outs[0].DeadReason, desc)
					require.False(t, set, desc)
				}
			}

			for attempt := 1; attempt <= f.h.Config.Policy.Attempts(); attempt++ {
				for _, ra := range retryAfters {
					for _, h := range held {
						for _, draw := range draws {
							try(t, attempt, time.Minute, ra, h, draw)
						}
					}
				}
			}
			const seed = 12
			rng := rand.New(rand.NewPCG(seed, uint64(mode)))
			for range 200 {
				ra := ""
				switch rng.IntN(3) {
				case 0:
					ra = retryAfters[rng.IntN(len(retryAfters))]
				case 1:
					ra = strconv.Itoa(rng.IntN(14 * 3600))
				}
				try(t, 1+rng.IntN(f.h.Config.Policy.Attempts()), time.Duration(rng.Int64N(int64(24*time.Hour))), ra,
					time.Duration(rng.Int64N(int64(lastInFlight)+1)), rng.Float64())
			}
			t.Logf("%s: %d deliveries, every visibility accepted", mode, n)
		})
	}
}

// A retry delay longer than SQS can delay a message for is waited out of
// flight: the message is sent again carrying the attempt made and its due
// time, delayed by 15 minutes, and this one deleted; each return before
// the due time is a hop that spends no attempt; once due, the next attempt
// is made with the right number.
func TestLongBackoffWaitsOutOfFlight(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(429)
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		if status.Load() == 429 {
			w.Header().Set("Retry-After", "3600")
		}
		w.WriteHeader(int(status.Load()))
	})
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	require.Empty(t, f.run(t, m), "the message is done with: a new one waits")
	_, set := f.queue.visibilityOf(m.ReceiptHandle)
	require.False(t, set, "nothing is hidden for an hour")
	require.Len(t, f.queue.requeued, 1)
	require.Equal(t, int32(900), f.queue.requeueDelay[0])
	next, err := message.Decode(f.queue.requeued[0])
	require.NoError(t, err)
	require.Equal(t, 1, next.Attempts, "the attempt made travels")
	require.NotNil(t, next.NotBefore)
	require.Equal(t, f.now.Add(time.Hour), *next.NotBefore)
	require.Equal(t, 1, int(f.hits.Load()))

	// Three hops of 15 minutes, no request.
	for hop := 1; hop <= 3; hop++ {
		f.now = f.now.Add(15 * time.Minute)
		again := f.requeuedMessage(t, len(f.queue.requeued)-1, "d1_hop"+strconv.Itoa(hop))
		require.Empty(t, f.run(t, again))
		require.Equal(t, 1, int(f.hits.Load()), "hop %d: no request", hop)
		last, err := message.Decode(f.queue.requeued[len(f.queue.requeued)-1])
		require.NoError(t, err)
		require.Equal(t, 1, last.Attempts, "hop %d spends no attempt", hop)
		require.Equal(t, int32(900), f.queue.requeueDelay[len(f.queue.requeueDelay)-1])
	}
	// Due: the second attempt, numbered so.
	f.now = f.now.Add(15 * time.Minute)
	status.Store(200)
	due := f.requeuedMessage(t, len(f.queue.requeued)-1, "d1_due")
	n := len(f.queue.requeued)
	require.Empty(t, f.run(t, due))
	require.Equal(t, 2, int(f.hits.Load()))
	require.Len(t, f.queue.requeued, n, "not sent again")
	got, err := f.store.Store.Delivery(context.Background(), "d1")
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Equal(t, 2, got.Attempts)
}

// A busy receiver that answers a fifth of its requests 429 with an hour's
// Retry-After cannot fill the queue's in-flight quota: the fake SQS stops
// receiving past it, as SQS does, and the waits are out of flight.
func TestLongWaitsStayOutOfTheInFlightCount(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1)%5 == 0 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(200)
	})
	f.held = 0
	f.queue.withInFlightLimit(20)
	f.h.Config.DisableAfter = -1
	for batch := range 50 {
		var msgs []events.SQSMessage
		for i := range 10 {
			msgs = append(msgs, sqsMessage(t, fmt.Sprintf("d%d_%d", batch, i), "1", f.now))
		}
		f.run(t, msgs...)
		f.now = f.now.Add(time.Second)
		require.Less(t, f.queue.inFlight(), 20, "batch %d: in flight only what is being worked on", batch)
	}
	require.Equal(t, 100, len(f.queue.requeued), "every 429 waits as a new, delayed message")
	require.Empty(t, f.queue.refusals())
}

// Issue 35's receiver: it takes 1,000 deliveries a second and answers a
// fifth of them 429 with Retry-After: 600. Each wait over HopAfter is sent
// again as a delayed message, so the queue's in-flight messages are only
// the batch being worked, however long the load lasts. Kept in the
// received messages' visibility (HopAfter 900 s: the behaviour before),
// the same load adds a fifth of its deliveries to the in-flight count for
// ten minutes: 120,000 at 1,000 a second, SQS's quota for a standard
// queue, past which nothing is received, for any tenant. The load here is
// 2.5 s of it on the fake's clock (2,500 deliveries, a batch of ten every
// 10 ms), against the quota scaled by the same 300 (600 s to 2 s):
// 120,000 / 300 = 400, which the visibility reaches after 2,000.
func TestRetryAfter600UnderLoadStaysOutOfFlight(t *testing.T) {
	t.Parallel()
	const quota = sqsfake.DefaultInFlightLimit / 300
	// run plays the poller: ten messages a batch, a batch every 10 ms on
	// the fake's clock, each handed to the handler if SQS received it,
	// until 2,500 are sent or SQS receives none. It returns the most
	// messages in flight between batches and the requests the receiver
	// got.
	run := func(t *testing.T, hopAfter time.Duration) (f *fixture, most int, sent int) {
		var n atomic.Int32
		f = newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
			if n.Add(1)%5 == 0 {
				w.Header().Set("Retry-After", "600")
				w.WriteHeader(429)
				return
			}
			w.WriteHeader(200)
		})
		f.h.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
		f.h.Config.HopAfter = hopAfter
		f.h.Config.DisableAfter, f.h.Config.FailingAfter = -1, -1 // not consecutive: the breaker never opens
		f.queue.withInFlightLimit(quota)
		for batch := 0; n.Load() < 2500; batch++ {
			var msgs []events.SQSMessage
			for i := range 10 {
				msgs = append(msgs, sqsMessage(t, fmt.Sprintf("d%d_%d", batch, i), "1", f.now))
			}
			f.queue.receive(f.now, msgs...)
			msgs = slices.DeleteFunc(msgs, func(m events.SQSMessage) bool { return !f.queue.received(m.ReceiptHandle) })
			if len(msgs) == 0 {
				break
			}
			resp, err := f.h.Handle(context.Background(), events.SQSEvent{Records: msgs})
			require.NoError(t, err)
			var failed []string
			for _, fi := range resp.BatchItemFailures {
				failed = append(failed, fi.ItemIdentifier)
			}
			f.queue.done(msgs, failed)
			most = max(most, f.queue.inFlight())
			f.now = f.now.Add(10 * time.Millisecond)
		}
		return f, most, int(n.Load())
	}

	f, most, sent := run(t, 0)
	require.Equal(t, 2500, sent, "every message received and sent")
	require.Zero(t, most, "in flight only while worked: none between batches")
	require.Empty(t, f.queue.refusals(), "every receive answered")
	require.Len(t, f.queue.requeued, 500, "every 429 waits as a new, delayed message")
	for i, b := range f.queue.requeued {
		m, err := message.Decode(b)
		require.NoError(t, err)
		require.Equal(t, 1, m.Attempts, "the attempt made travels")
		require.Equal(t, int32(600), f.queue.requeueDelay[i], "delayed by the Retry-After")
		require.Equal(t, "t1#wait", f.queue.requeueGroup[i], "in the tenant's wait group")
	}

	f, most, sent = run(t, MaxDeferDelay)
	f.refusalsExpected = true
	require.Equal(t, quota, most, "kept in flight, the waits fill the quota")
	require.Equal(t, quota*5, sent, "a wait every fifth delivery: full after %d, nothing received after", quota*5)
	require.Empty(t, f.queue.requeued)
	require.NotEmpty(t, f.queue.refusals())
	for _, r := range f.queue.refusals() {
		require.Contains(t, r, "OverLimit", "past the quota SQS receives nothing, whoever the message is for")
	}
	t.Logf("a fifth 429 Retry-After 600: hopping, 0 in flight between batches after 2,500 deliveries; kept in visibility, %d (the scaled quota) after %d, then nothing received", most, sent)
}

// requeuedMessage is the i-th message sent back to the delivery queue as
// the poller would hand it over: its first receive.
func (f *fixture) requeuedMessage(t *testing.T, i int, id string) events.SQSMessage {
	t.Helper()
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: f.queue.requeued[i], Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
}

// dueRetry is the last message sent back to the delivery queue, as the
// poller hands it over when it is due: the fixture's clock moved to its
// due time (message.Message.NotBefore), its first receive.
func (f *fixture) dueRetry(t *testing.T, id string) events.SQSMessage {
	t.Helper()
	require.NotEmpty(t, f.queue.requeued, "a message was sent again")
	m := f.requeuedMessage(t, len(f.queue.requeued)-1, id)
	next, err := message.Decode(m.Body)
	require.NoError(t, err)
	if next.NotBefore != nil && next.NotBefore.After(f.now) {
		f.now = *next.NotBefore
	}
	return m
}

// requeuedFor is the last message of delivery id sent back to the
// delivery queue, and its delay; ok is false when none was.
func (q *fakeQueue) requeuedFor(t *testing.T, id string) (m message.Message, delay int32, ok bool) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := len(q.requeued) - 1; i >= 0; i-- {
		next, err := message.Decode(q.requeued[i])
		require.NoError(t, err)
		if next.DeliveryID == id {
			return next, q.requeueDelay[i], true
		}
	}
	return m, 0, false
}

// retryDelay is the delay of the last retry of delivery id: sent again
// (a hop) or hidden in the received message's visibility (a wait of
// HopAfter or less), and whether it hopped.
func (f *fixture) retryDelay(t *testing.T, id string) (delay int32, hopped bool) {
	t.Helper()
	if _, d, ok := f.queue.requeuedFor(t, id); ok {
		return d, true
	}
	v, ok := f.queue.visibilityOf("rh_" + id)
	require.True(t, ok, "delivery %s neither sent again nor hidden", id)
	return v, false
}

// A retry over HopAfter is sent again, delayed, and the received message
// deleted; the chain keeps the attempt count: each hop carries the
// attempts made, the receiver sees 1, 2, 3, and the last failed attempt
// of a message that carries attempts (SQS's redrive counts receives, not
// them) is dead-lettered here, explicitly. No visibility is changed on
// the way: nothing waits in flight.
func TestRetriesHopUntilDeadLettered(t *testing.T) {
	t.Parallel()
	var seen []string
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Attempt"))
		w.WriteHeader(503)
	})
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	require.Empty(t, f.run(t, m))
	for i, want := range []int32{10, 60} {
		next, d, ok := f.queue.requeuedFor(t, "d1")
		require.True(t, ok)
		require.Equal(t, want, d, "the schedule's step %d", i+2)
		require.Equal(t, i+1, next.Attempts)
		require.Equal(t, f.now.Add(time.Duration(want)*time.Second), *next.NotBefore)
		m = f.dueRetry(t, fmt.Sprintf("d1_%d", i+2))
		require.Empty(t, f.run(t, m), "attempt %d", i+2)
	}
	require.Equal(t, []string{"1", "2", "3"}, seen)
	require.Len(t, f.queue.requeued, 2, "the last failure is not sent again")
	require.Equal(t, []domain.DeadReason{domain.ReasonAttemptsExhausted}, f.queue.dlqReason)
	got := mustDelivery(t, f, "d1")
	require.Equal(t, domain.StateDead, got.State)
	require.Equal(t, 3, got.Attempts)
	f.queue.mu.Lock()
	defer f.queue.mu.Unlock()
	require.Empty(t, f.queue.visibility, "no wait in flight")
}

// The new message is sent before the received one is deleted. A crash
// between the two (the event source mapping never deletes it) leaves both:
// the received one comes back after the visibility timeout and is
// attempted again, with the same webhook-id; the hop, when it comes, finds
// the delivery delivered and is dropped unsent. A duplicate at worst,
// absorbed by the idempotency key; never a loss.
func TestCrashBetweenResendAndDeleteMakesADuplicateNotALoss(t *testing.T) {
	t.Parallel()
	var ids []string
	codes := []int{503, 200}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		ids = append(ids, r.Header.Get("webhook-id"))
		w.WriteHeader(codes[0])
		codes = codes[1:]
	})
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	f.queue.receive(f.now.Add(-f.held), m)
	resp, err := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "done with: the mapping would delete it")
	require.Len(t, f.queue.requeued, 1, "sent again first")
	// The crash: no delete. The received message comes back.
	f.now = f.now.Add(queueVisibility)
	m.Attributes["ApproximateReceiveCount"] = "2"
	require.Empty(t, f.run(t, m))
	require.Equal(t, domain.StateDelivered, mustDelivery(t, f, "d1").State)
	require.Empty(t, f.run(t, f.dueRetry(t, "d1_hop")), "the hop is dropped")
	require.Equal(t, []string{"d1", "d1"}, ids, "two requests, one webhook-id")
	require.Empty(t, f.queue.dlq)
}

// A re-send SQS refuses loses nothing: the received message is kept,
// hidden for the retry's delay, and reported as a batch item failure.
func TestRefusedResendKeepsTheMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	f.queue.failRequeue = true
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	require.Equal(t, []string{m.MessageId}, f.run(t, m))
	v, ok := f.queue.visibilityOf(m.ReceiptHandle)
	require.True(t, ok)
	require.Equal(t, int32(10), v, "back after the retry's delay")
	require.Equal(t, domain.StatePending, mustDelivery(t, f, "d1").State)
}

// What the hops cost SQS, per batch: a batch of ten retried deliveries
// makes one SendMessageBatch (the ten re-sent together, in one round trip
// at the batch's end) and no ChangeMessageVisibility, where it made ten
// ChangeMessageVisibility calls; the received messages go with the
// mapping's DeleteMessageBatch. The DynamoDB writes are the same.
func TestRetriesOfABatchAreOneRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	var msgs []events.SQSMessage
	for i := range 10 {
		msgs = append(msgs, sqsMessage(t, fmt.Sprintf("d%d", i), "1", f.now.Add(-time.Minute)))
	}
	require.Empty(t, f.run(t, msgs...))
	require.Equal(t, 1, f.queue.sqs.Answered("SendMessageBatch", queueURL))
	require.Zero(t, f.queue.sqs.Answered("ChangeMessageVisibility", queueURL))
	require.Len(t, f.queue.requeued, 10)

	// The behaviour before (every wait up to 15 min in the visibility),
	// in the same run: ten calls.
	g := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	g.h.Config.HopAfter = MaxDeferDelay
	require.Len(t, g.run(t, msgs...), 10)
	require.Equal(t, 10, g.queue.sqs.Answered("ChangeMessageVisibility", queueURL))
	require.Zero(t, g.queue.sqs.Answered("SendMessageBatch", queueURL))
}
