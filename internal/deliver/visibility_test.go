package deliver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
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
	f.h.Policy.VisibilityTimeout = time.Minute // the queue's is 6 min
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
			f.h.setVisibility(context.Background(), f.h.Log, m, d)
			v, ok := f.queue.visibilityOf("rh")
			require.True(t, ok)
			require.Equal(t, int32(min(max(d, 0), f.h.Policy.LongestDelay())/time.Second), v)
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
			f.h.Policy = retry.Policy{Mode: mode, VisibilityTimeout: queueVisibility}
			// Every attempt fails: keep the endpoint enabled, and its
			// breaker closed, throughout.
			f.h.DisableAfter, f.h.FailingAfter = -1, -1
			longest := f.h.Policy.LongestDelay()
			n := 0
			try := func(t *testing.T, attempt int, age time.Duration, ra string, h time.Duration, draw float64) {
				t.Helper()
				n++
				id := "d" + strconv.Itoa(n)
				desc := fmt.Sprintf("attempt %d, age %s, Retry-After %q, held %s, draw %v", attempt, age, ra, h, draw)
				retryAfter.Store(ra)
				f.held = h
				f.h.Rand = func() float64 { return draw }
				m := sqsMessage(t, id, strconv.Itoa(attempt), f.now.Add(-age))
				f.run(t, m)
				require.Empty(t, f.queue.refusals(), desc)
				v, set := f.queue.visibilityOf(m.ReceiptHandle)
				outs := f.store.outcomes[id]
				require.Len(t, outs, 1, desc)
				switch {
				case attempt >= f.h.Policy.Attempts():
					require.True(t, set, desc)
					require.Zero(t, v, "the last attempt hands over to the redrive policy: %s", desc)
				case outs[0].State == domain.StatePending:
					wait := time.Duration(v) * time.Second
					if set {
						require.LessOrEqual(t, wait, MaxDeferDelay, "only a wait of 15 min or less is hidden in flight: %s", desc)
					} else {
						next, err := message.Decode(f.queue.requeued[len(f.queue.requeued)-1])
						require.NoError(t, err, desc)
						require.Equal(t, id, next.DeliveryID, "a longer one is sent again: %s", desc)
						require.NotNil(t, next.NotBefore, desc)
						wait = next.NotBefore.Sub(f.now.Truncate(time.Second))
						require.Greater(t, wait, MaxDeferDelay, desc)
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

			for attempt := 1; attempt <= f.h.Policy.Attempts(); attempt++ {
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
				try(t, 1+rng.IntN(f.h.Policy.Attempts()), time.Duration(rng.Int64N(int64(24*time.Hour))), ra,
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
	f.h.DisableAfter = -1
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

// requeuedMessage is the i-th message sent back to the delivery queue as
// the poller would hand it over: its first receive.
func (f *fixture) requeuedMessage(t *testing.T, i int, id string) events.SQSMessage {
	t.Helper()
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: f.queue.requeued[i], Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
}
