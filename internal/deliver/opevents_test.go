package deliver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/stretchr/testify/require"
)

// notices records the operational events the handler raises, as the
// outbox would: one per id.
type notices struct {
	mu     sync.Mutex
	events []opevent.Event
	ids    map[string]bool
}

func (n *notices) Emit(_ context.Context, ev opevent.Event) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, err := opevent.Item(ev); err != nil {
		return err
	}
	if n.ids == nil {
		n.ids = map[string]bool{}
	}
	if !n.ids[ev.ID] {
		n.ids[ev.ID] = true
		n.events = append(n.events, ev)
	}
	return nil
}

func (n *notices) types() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, ev := range n.events {
		out = append(out, ev.Type)
	}
	return out
}

// withNotices wires the fixture's handler to raise operational events.
func (f *fixture) withNotices() *notices {
	n := &notices{}
	f.h.OpEvents, f.h.Config.OpsQueueURL = n, "https://sqs.example/ops"
	return n
}

// opMessage is a delivery message of an event of type eventType.
func opMessage(t *testing.T, id, eventType, receiveCount string, occurred time.Time) events.SQSMessage {
	t.Helper()
	m := sqsMessage(t, id, receiveCount, occurred)
	msg, err := message.Decode(m.Body)
	require.NoError(t, err)
	msg.EventType = eventType
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	m.Body = string(body)
	return m
}

// An endpoint that fails, is disabled, is enabled and succeeds raises
// endpoint.failing, endpoint.disabled and endpoint.recovered, each once.
func TestEndpointTransitionsRaiseEachEventOnce(t *testing.T) {
	t.Parallel()
	status := 500
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
	n := f.withNotices()
	f.h.Config.FailingAfter, f.h.Config.DisableAfter, f.h.Config.DisableAfterFor = 2, 4, 2*time.Second
	// The failing endpoint's breaker is half open again by the next run, a
	// second later: each run's delivery is sent, as its probe.
	f.h.Config.Breaker = domain.Breaker{Cooldown: time.Millisecond, MaxCooldown: time.Millisecond}
	for i := range 6 {
		f.now = f.now.Add(time.Second)
		f.run(t, sqsMessage(t, "d"+strconv.Itoa(i), "1", f.now))
	}
	require.Equal(t, []string{domain.OpEndpointFailing, domain.OpEndpointDisabled}, n.types())
	var disabled domain.OpEndpointEvent
	raw, _ := json.Marshal(n.events[1].Payload)
	require.NoError(t, json.Unmarshal(raw, &disabled))
	require.Equal(t, domain.DisabledConsecutiveFailures, disabled.Reason)
	require.Equal(t, 500, disabled.LastStatus)
	require.Equal(t, 4, disabled.ConsecutiveFailures)
	require.Equal(t, "ep_1", disabled.EndpointID)

	_, err := f.store.SetEndpointEnabled(context.Background(), "t1", "ep_1", true)
	require.NoError(t, err)
	status = 200
	f.run(t, sqsMessage(t, "d_ok1", "1", f.now))
	f.run(t, sqsMessage(t, "d_ok2", "1", f.now))
	require.Equal(t, []string{domain.OpEndpointFailing, domain.OpEndpointDisabled, domain.OpEndpointRecovered}, n.types())
	require.Nil(t, f.store.endpoint("t1/ep_1").FailingSince)
	for _, ev := range n.events {
		require.Equal(t, "t1", ev.TenantID)
	}
}

func TestGoneRaisesDisabledWithItsReason(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(410) })
	n := f.withNotices()
	f.run(t, sqsMessage(t, "d1", "1", f.now))
	f.run(t, sqsMessage(t, "d2", "1", f.now)) // disabled: dead untried, no second event
	require.Equal(t, []string{domain.OpEndpointDisabled}, n.types())
	p := n.events[0].Payload.(domain.OpEndpointEvent)
	require.Equal(t, domain.DisabledEndpointGone, p.Reason)
	require.Equal(t, 410, p.LastStatus)
}

// A healthy endpoint's success writes nothing to it: the success path
// stays one write.
func TestSuccessOfAHealthyEndpointRaisesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	n := f.withNotices()
	f.run(t, sqsMessage(t, "d1", "1", f.now))
	require.Zero(t, f.store.resets)
	require.Empty(t, n.types())
	require.Empty(t, f.queue.ops)
}

// Every death of a window adds to it; the one that opens it sends the one
// notice, delayed until the window ends (and SQS's 900 s at most).
func TestDeathsAreCoalescedPerWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) })
	f.withNotices()
	f.h.Config.DeadWindow = 5 * time.Minute
	f.h.Config.DisableAfter = -1
	f.now = time.Date(2026, 11, 30, 12, 1, 0, 0, time.UTC)
	for i := range 30 {
		f.run(t, sqsMessage(t, "d"+strconv.Itoa(i), "1", f.now))
	}
	require.Len(t, f.queue.ops, 1, "one notice for the window")
	require.Equal(t, int32(4*60+2), f.queue.opsDelay[0], "until the window ends, and the grace")
	var body struct {
		DeadNotice opevent.DeadNotice `json:"dead_notice"`
	}
	require.NoError(t, json.Unmarshal([]byte(f.queue.ops[0]), &body))
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	require.True(t, start.Equal(body.DeadNotice.WindowStart))
	w, err := f.store.DeadWindow(context.Background(), "t1", "ep_1", start)
	require.NoError(t, err)
	require.Equal(t, 30, w.Count)
	require.Equal(t, map[domain.DeadReason]int{"rejected_400": 30}, w.Reasons)
	require.Equal(t, "order.created", w.Deaths[0].EventType)
	require.Equal(t, 1, w.Deaths[0].Attempts)

	f.now = f.now.Add(5 * time.Minute)
	f.run(t, sqsMessage(t, "d_next", "1", f.now))
	require.Len(t, f.queue.ops, 2, "the next window has its own notice")
}

// Every way a delivery dies is noted: dead at once, exhausted, and dead
// untried (the endpoint disabled, the event too old).
func TestEveryDeathIsNoted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
	f.withNotices()
	f.run(t, sqsMessage(t, "d_exhausted", "3", f.now.Add(-time.Minute)))
	f.run(t, sqsMessage(t, "d_old", "1", f.now.Add(-48*time.Hour)))
	e := f.store.endpoint("t1/ep_1")
	e.Disabled = true
	f.store.setEndpoint(e)
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL) // the instance's copy of the endpoint has run out
	f.run(t, sqsMessage(t, "d_disabled", "1", f.now))
	start, _ := opevent.Window(f.now, DefaultDeadWindow)
	w, err := f.store.DeadWindow(context.Background(), "t1", "ep_1", start)
	require.NoError(t, err)
	require.Equal(t, 3, w.Count)
	require.Equal(t, map[domain.DeadReason]int{domain.ReasonAttemptsExhausted: 1, domain.ReasonMaxAgeExceeded: 1, domain.ReasonEndpointDisabled: 1}, w.Reasons)
	require.Len(t, f.queue.ops, 1)
}

// No loop: the death of an operational event's delivery raises no
// delivery.dead, though its failures count toward the endpoint's health,
// whose transitions are raised once each.
func TestAnOperationalEventDyingRaisesNoOperationalEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) })
	n := f.withNotices()
	f.h.Config.FailingAfter, f.h.Config.DisableAfter = 100, -1
	for i, typ := range domain.OpEventTypes {
		f.run(t, opMessage(t, "op"+strconv.Itoa(i), typ, "1", f.now))
	}
	require.Empty(t, f.queue.ops, "no delivery.dead notice")
	require.Empty(t, n.types())
	_, err := f.store.DeadWindow(context.Background(), "t1", "ep_1", f.now.Truncate(DefaultDeadWindow))
	require.Error(t, err, "not even counted in a window")
	require.Equal(t, len(domain.OpEventTypes), f.store.endpoint("t1/ep_1").ConsecutiveFailures, "the attempts count toward the endpoint's health")
	require.Len(t, f.queue.dlq, len(domain.OpEventTypes), "dead-lettered like any delivery, so replayable")
}
