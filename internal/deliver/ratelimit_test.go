package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// fakeClock is one handler's clock: its SleepUntil moves it on to the time
// slept until, as time would.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) SleepUntil(_ context.Context, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// countingLimiter counts the limiter's writes.
type countingLimiter struct {
	Limiter
	mu    sync.Mutex
	takes int
}

func (l *countingLimiter) TakeSlots(ctx context.Context, tenantID, endpointID string, window time.Time, n, limit int) (store.Slots, error) {
	l.mu.Lock()
	l.takes++
	l.mu.Unlock()
	return l.Limiter.TakeSlots(ctx, tenantID, endpointID, window, n, limit)
}

func (l *countingLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takes
}

// clockSender answers every request with status, recording when (on its
// handler's clock) each was sent.
type clockSender struct {
	clock  *fakeClock
	status int
	mu     sync.Mutex
	sent   []time.Time
	ids    []string
}

func (s *clockSender) Send(_ context.Context, r sender.Request) sender.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, s.clock.Now())
	s.ids = append(s.ids, r.DeliveryID)
	if s.status/100 == 2 {
		return sender.Result{Outcome: sender.Delivered, Status: s.status}
	}
	return sender.Result{Outcome: sender.Retry, Status: s.status, Error: fmt.Sprintf("http_%d", s.status)}
}

// rateFixture is handlers sharing one store, hence one limiter, each with
// its own clock (as Lambda instances have), queue and sender.
type rateFixture struct {
	store   *testStore
	limiter *countingLimiter
}

var rateEndpoint = domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://hooks.example.com/x", Secrets: []string{"whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI="}, RateLimit: 5}

func newRateFixture(ep domain.Endpoint) *rateFixture {
	st := newFakeStore(ep)
	return &rateFixture{store: st, limiter: &countingLimiter{Limiter: st.Store}}
}

func (f *rateFixture) handler(start time.Time, status int) (*Handler, *fakeClock, *clockSender, *fakeQueue) {
	clock := &fakeClock{t: start}
	snd := &clockSender{clock: clock, status: status}
	q := newFakeQueue(clock.Now, queueVisibility)
	ports := f.store.ports()
	ports.Limiter = f.limiter
	return &Handler{
		Store: ports, Queue: q, Sender: snd,
		Config: Config{
			QueueURL: "https://sqs.example/q", DLQURL: "https://sqs.example/dlq",
			Policy: retry.Policy{Schedule: []time.Duration{0, 10 * time.Second, 60 * time.Second}, Mode: retry.JitterNone, VisibilityTimeout: queueVisibility},
			Now:    clock.Now, SleepUntil: clock.SleepUntil,
		},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}, clock, snd, q
}

func rateMessage(t *testing.T, id, receiveCount string, carried int, occurred time.Time) events.SQSMessage {
	t.Helper()
	m := sqsMessage(t, id, receiveCount, occurred)
	if carried > 0 {
		msg, err := message.Decode(m.Body)
		require.NoError(t, err)
		msg.Attempts = carried
		body, err := message.Encode(msg)
		require.NoError(t, err)
		m.Body = string(body)
	}
	return m
}

// requeued are the messages a handler sent back to the delivery queue to
// wait for the rate limit, decoded, with their delays.
func requeued(t *testing.T, q *fakeQueue) ([]message.Message, []int32) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []message.Message
	for _, b := range q.requeued {
		m, err := message.Decode(b)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out, q.requeueDelay
}

// Three handlers, each with a batch of ten to one endpoint limited to 5
// requests per second, run at once against one limiter: no second sees
// more than 5 requests begin, whichever handler sent them; every message
// is either sent or sent back delayed (none failed, none lost); and the
// limiter is written once per handler and window, not once per message.
func TestRateLimitHoldsAcrossConcurrentHandlers(t *testing.T) {
	t.Parallel()
	f := newRateFixture(rateEndpoint)
	start := time.Date(2026, 11, 30, 12, 0, 0, 300e6, time.UTC)
	type run struct {
		snd    *clockSender
		q      *fakeQueue
		failed []events.SQSBatchItemFailure
	}
	runs := make([]run, 3)
	var wg sync.WaitGroup
	for i := range runs {
		// Each handler's clock a little apart, as instances' clocks are.
		h, _, snd, q := f.handler(start.Add(time.Duration(i)*7*time.Millisecond), 200)
		h.Config.Concurrency = 1 + i*4 // 1, 5 and 9 attempts in flight
		var msgs []events.SQSMessage
		for j := range 10 {
			msgs = append(msgs, rateMessage(t, fmt.Sprintf("d%d_%d", i, j), "2", 0, start.Add(-time.Minute)))
		}
		q.receive(start, msgs...)
		runs[i] = run{snd: snd, q: q}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: msgs})
			require.NoError(t, err)
			runs[i].failed = resp.BatchItemFailures
		}()
	}
	wg.Wait()

	perSecond := map[time.Time]int{}
	sent, deferred := 0, 0
	for _, r := range runs {
		require.Empty(t, r.failed, "waiting for the limit is no failure")
		for _, at := range r.snd.sent {
			perSecond[at.Truncate(time.Second)]++
		}
		sent += len(r.snd.sent)
		back, delays := requeued(t, r.q)
		deferred += len(back)
		for i, m := range back {
			require.Equal(t, 1, m.Attempts, "a message received twice carries the one attempt made")
			require.Equal(t, 1, m.Deferrals)
			require.GreaterOrEqual(t, delays[i], int32(1))
			require.LessOrEqual(t, delays[i], int32(900))
		}
		require.Empty(t, r.q.refusals())
	}
	for sec, n := range perSecond {
		require.LessOrEqual(t, n, 5, "requests begun in the second at %s", sec.Format(time.RFC3339))
	}
	t.Logf("sent %d, deferred %d, limiter writes %d, per second %v", sent, deferred, f.limiter.count(), perSecond)
	require.Equal(t, 30, sent+deferred, "every message sent or sent back")
	require.GreaterOrEqual(t, sent, 10, "the wait (2 s) lets at least two windows' worth through")
	require.Less(t, f.limiter.count(), 30, "slots are taken for a batch at once, not per message")
}

// A message turned away by the rate limit on its last receive makes no
// attempt and costs none: it is sent back delayed carrying the attempts
// made, and deleted. Received again (a fresh receive count), its attempt
// number is the carried attempts plus the receive count; its last attempt
// failing is dead-lettered explicitly (SQS's redrive, counting receives,
// would not), without the death recorded first.
func TestRateLimitWaitBurnsNoAttempt(t *testing.T) {
	t.Parallel()
	ep := rateEndpoint
	ep.RateLimit = 1
	f := newRateFixture(ep)
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	_, err := f.store.TakeSlots(context.Background(), "t1", "ep_1", start, 1, 1) // the window is full
	require.NoError(t, err)

	h, clock, snd, q := f.handler(start, 500)
	h.Config.RateWait = time.Millisecond // no wait affordable
	h.Config.Rand = func() float64 { return 0.99 }
	msg := rateMessage(t, "d1", "3", 0, start.Add(-time.Minute)) // the last of 3 attempts
	q.receive(start, msg)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "deleted: it lives on as the new message")
	require.Empty(t, snd.sent, "no request")
	require.Empty(t, f.store.attempts["d1"], "no attempt recorded")
	require.False(t, f.store.isMarked("d1"))
	back, delays := requeued(t, q)
	require.Len(t, back, 1)
	require.Equal(t, 2, back[0].Attempts, "the two attempts made before this receive")
	require.Equal(t, 1, back[0].Deferrals)
	require.Equal(t, int32(2), delays[0], "1 s + up to (1 s + the backlog at the limit, 1 s)")
	require.Empty(t, q.dlq)

	// It comes back as a new message: receive count 1, attempt 3.
	clock.SleepUntil(context.Background(), start.Add(3*time.Second))
	body, err := message.Encode(back[0])
	require.NoError(t, err)
	again := events.SQSMessage{MessageId: "m_d1b", ReceiptHandle: "rh_d1b", Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	q.receive(clock.Now(), again)
	resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{again}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "dead-lettered explicitly and deleted")
	require.Len(t, snd.sent, 1)
	require.Equal(t, []int{3}, attemptNumbers(f.store.attempts["d1"]))
	require.Equal(t, []domain.DeadReason{domain.ReasonAttemptsExhausted}, q.dlqReason)
	require.False(t, f.store.isMarked("d1"), "no death recorded first: SQS's redrive is not what ends it")
	d, err := f.store.Store.Delivery(context.Background(), "d1")
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, d.State)
}

func attemptNumbers(as []domain.Attempt) []int {
	var out []int
	for _, a := range as {
		out = append(out, a.Number)
	}
	return out
}

// A message that carries attempts and fails before its last is retried
// as any other (sent again, delayed), its attempt number counting the
// carried ones; one that comes back past the schedule (its last
// attempt's outcome lost) goes dead untried.
func TestCarriedAttemptsCount(t *testing.T) {
	t.Parallel()
	f := newRateFixture(rateEndpoint)
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h, _, snd, q := f.handler(start, 500)
	m := rateMessage(t, "d1", "1", 1, start.Add(-time.Minute))
	q.receive(start, m)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, []int32{60}, q.requeueDelay, "attempt 2 failed: the third step's delay")
	next, err := message.Decode(q.requeued[0])
	require.NoError(t, err)
	require.Equal(t, 2, next.Attempts, "the attempts made travel")
	require.Equal(t, []int{2}, attemptNumbers(f.store.attempts["d1"]))

	late := rateMessage(t, "d2", "2", 2, start.Add(-time.Minute)) // attempt 4 of 3
	q.receive(start, late)
	resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{late}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, snd.sent, 1, "not attempted")
	require.Equal(t, []domain.DeadReason{domain.ReasonAttemptsExhausted}, q.dlqReason)
}

// An endpoint without a rate limit costs the limiter nothing: no read, no
// write, no wait.
func TestUnlimitedEndpointTakesNoSlots(t *testing.T) {
	t.Parallel()
	ep := rateEndpoint
	ep.RateLimit = 0
	f := newRateFixture(ep)
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h, clock, snd, q := f.handler(start, 200)
	var msgs []events.SQSMessage
	for j := range 10 {
		msgs = append(msgs, rateMessage(t, fmt.Sprintf("d%d", j), "1", 0, start))
	}
	q.receive(start, msgs...)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: msgs})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, snd.sent, 10)
	require.Zero(t, f.limiter.count())
	require.Equal(t, start, clock.Now(), "no wait")
}

// The delay of a message sent back to wait is within SQS's 900 s whatever
// the backlog (the fake queue refuses more, as SQS does).
func TestDeferDelayBound(t *testing.T) {
	t.Parallel()
	h := configured(Config{Rand: func() float64 { return 0.999 }})
	require.Equal(t, MaxDeferDelay, h.deferDelay(1_000_000, 1, 0))
	require.Equal(t, MaxDeferDelay, h.deferDelay(100, 10, 1000))
	require.Equal(t, time.Second, configured(Config{}).deferDelay(1, 10, 0), "a second at least")
	require.Equal(t, 2*time.Second, h.deferDelay(1, 10, 0), "1 s + up to (1 s + the backlog at the limit)")
	require.Equal(t, 8*time.Second, h.deferDelay(10, 10, 2), "1 s + up to that doubled for each deferral before")
	require.Equal(t, 4*time.Second, configured(Config{Rand: func() float64 { return 0.4 }}).deferDelay(10, 10, 2))
	q := newFakeQueue(time.Now, queueVisibility)
	body, _ := json.Marshal(message.Message{DeliveryID: "d"})
	_, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String("https://sqs.example/q"), MessageBody: aws.String(string(body)), DelaySeconds: 901})
	require.ErrorContains(t, err, "DelaySeconds 901")
}

// A batch to an endpoint with a large limit (80: a window of 8 shards of
// 10 slots) takes one shard's slots in one write, every 8th slot of the
// window: its requests begin 8/80 s apart, all in the window.
func TestRateLimitPacesAShardsSlots(t *testing.T) {
	t.Parallel()
	ep := rateEndpoint
	ep.RateLimit = 80
	f := newRateFixture(ep)
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h, _, snd, q := f.handler(start, 200)
	h.Config.Concurrency = 10
	var msgs []events.SQSMessage
	for j := range 10 {
		msgs = append(msgs, rateMessage(t, fmt.Sprintf("d_%d", j), "1", 0, start.Add(-time.Minute)))
	}
	q.receive(start, msgs...)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: msgs})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, snd.sent, 10)
	require.Equal(t, 1, f.limiter.count(), "one write for the batch")
	sent := append([]time.Time(nil), snd.sent...)
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(sent); i++ {
		require.GreaterOrEqual(t, sent[i].Sub(sent[i-1]), 100*time.Millisecond-time.Nanosecond, "request %d", i)
	}
	require.Equal(t, start, sent[len(sent)-1].Truncate(time.Second), "all in the window")
}

// configured is a handler with c applied, for the tests that call its
// parts without a Handle.
func configured(c Config) *Handler {
	h := &Handler{Config: c}
	h.setup()
	return h
}

// lateClock is a fakeClock whose first sleep wakes late, as a process the
// machine did not schedule in time does.
type lateClock struct {
	fakeClock
	late time.Duration
	once sync.Once
}

func (c *lateClock) SleepUntil(ctx context.Context, t time.Time) {
	c.once.Do(func() { t = t.Add(c.late) })
	c.fakeClock.SleepUntil(ctx, t)
}

// A holder woken past its slot's share of the second (1/limit) takes
// another slot instead of sending late, beside the next slots' requests:
// within its second, a late holder would otherwise bunch with them.
func TestALateHolderTakesAnotherSlot(t *testing.T) {
	t.Parallel()
	f := newRateFixture(rateEndpoint) // 5 a second: a slot is 200 ms
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h, _, snd, q := f.handler(start, 200)
	clock := &lateClock{fakeClock: fakeClock{t: start}, late: 300 * time.Millisecond}
	h.Config.Now, h.Config.SleepUntil = clock.Now, clock.SleepUntil
	snd.clock = &clock.fakeClock
	m := rateMessage(t, "d_late", "2", 0, start.Add(-time.Minute))
	q.receive(start, m)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, snd.sent, 1)
	require.Equal(t, 2, f.limiter.count(), "the slot woken past (12:00:00.0 + 200 ms) given up, another taken")
	require.Equal(t, start.Add(300*time.Millisecond), snd.sent[0], "sent within the slot taken second (200-400 ms), not in the one it woke past")
}
