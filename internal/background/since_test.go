package background_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

// goneLog is the message log with some outbox items gone (expired by their
// TTL between the listing and the read).
type goneLog struct {
	*storefake.MessageLog
	gone map[string]bool
}

func (l goneLog) Event(ctx context.Context, tenantID, id string) (domain.Event, error) {
	if l.gone[id] {
		return domain.Event{}, fmt.Errorf("event %s: %w", id, store.ErrNotFound)
	}
	return l.MessageLog.Event(ctx, tenantID, id)
}

// event puts an event of tenant into the message log, occurred at.
func event(log *storefake.MessageLog, id, tenant, typ string, at time.Time) {
	log.Put(domain.Event{ID: id, TenantID: tenant, Type: typ, OccurredAt: at, Payload: json.RawMessage(`{"event":"` + id + `"}`)})
}

// delivery stores the delivery of event ev to endpoint in state, named as
// enqueue names it (by the event's time in the worker's message log).
func (e *env) delivery(ev, tenant, endpoint string, state domain.DeliveryState) string {
	return e.deliveryAs(e.deliveryID(ev, tenant, endpoint), ev, tenant, endpoint, state)
}

// deliveryID is the id enqueue gives the delivery of event ev (as the
// worker's message log holds it) to endpoint.
func (e *env) deliveryID(ev, tenant, endpoint string) string {
	var at time.Time
	log := e.w.MessageLog
	switch l := log.(type) {
	case goneLog:
		log = l.MessageLog // its gone events' deliveries were named before they went
	case *togetherLog:
		log = l.MessageLog // its reads wait for each other: not the job's
	}
	if log != nil {
		if got, err := log.Event(context.Background(), tenant, ev); err == nil {
			at = got.OccurredAt
		}
	}
	return domain.DeliveryID(tenant, ev, endpoint, at)
}

// deliveryAs is delivery under the id id (a legacy one, for example).
func (e *env) deliveryAs(id, ev, tenant, endpoint string, state domain.DeliveryState) string {
	d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: ev, EventType: "order.created", State: state,
		CreatedAt: e.t0.Add(-time.Hour), Attempts: 1}
	switch state {
	case domain.StateDelivered:
		d.DeliveredAt = timePtr(e.t0.Add(-time.Hour))
	case domain.StateDead:
		d.DeadAt, d.DeadReason = timePtr(e.t0.Add(-time.Hour)), "attempts_exhausted"
		d.Message = body(id, tenant, endpoint, "order.created")
	case domain.StateCancelled:
		d.CancelledAt, d.CancelledBy = timePtr(e.t0.Add(-time.Hour)), "rj_cancel"
	}
	e.st.put(d)
	return id
}

// sentMessages decodes the messages sent to the delivery queue, by
// delivery id.
func (e *env) sentMessages(t *testing.T) map[string][]message.Message {
	t.Helper()
	out := map[string][]message.Message{}
	for _, m := range e.q.sentTo(deliveryURL) {
		msg, err := message.Decode(m.Body)
		require.NoError(t, err)
		out[msg.DeliveryID] = append(out[msg.DeliveryID], msg)
	}
	return out
}

// A receiver lost its data: a replay since a time sends every delivery of
// the range again, whatever its state, with its id (webhook-id): delivered
// ones rebuilt from the outbox as resends, pending and cancelled ones
// rebuilt as replays, dead ones claimed as a replay by filter claims them.
// What cannot be rebuilt (the payload past the retention, the outbox item
// gone) is counted with its reason; another tenant's deliveries, the
// events outside the range and a disabled endpoint's are left alone.
func TestReplaySinceEveryState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := storefake.NewMessageLog()
	e.w.MessageLog, e.w.PayloadRetention = goneLog{log, map[string]bool{"evt_gone": true}}, 48*time.Hour
	in := e.t0.Add(-time.Hour)
	for _, ev := range []string{"evt_del", "evt_dead", "evt_pend", "evt_canc", "evt_gone", "evt_off", "evt_legacy"} {
		event(log, ev, tenantA, "order.created", in)
	}
	event(log, "evt_old", tenantA, "order.created", e.t0.Add(-72*time.Hour)) // in range, past the payload retention
	event(log, "evt_before", tenantA, "order.created", e.t0.Add(-200*time.Hour))
	event(log, "evt_b", tenantB, "order.created", in)
	want := map[string]bool{ // delivery id: sent as a resend
		e.delivery("evt_del", tenantA, "ep_1", domain.StateDelivered):  true,
		e.delivery("evt_dead", tenantA, "ep_2", domain.StateDead):      false,
		e.delivery("evt_pend", tenantA, "ep_1", domain.StatePending):   false,
		e.delivery("evt_canc", tenantA, "ep_2", domain.StateCancelled): false,
		// Made before delivery ids carried the time: found, and sent
		// again, under its own id.
		e.deliveryAs(domain.LegacyDeliveryID("evt_legacy", "ep_1"), "evt_legacy", tenantA, "ep_1", domain.StateDelivered): true,
	}
	old := e.delivery("evt_old", tenantA, "ep_1", domain.StateDelivered)
	gone := e.delivery("evt_gone", tenantA, "ep_1", domain.StateDelivered)
	off := e.delivery("evt_off", tenantA, "ep_off", domain.StateDelivered)
	before := e.delivery("evt_before", tenantA, "ep_1", domain.StateDelivered)
	other := e.delivery("evt_b", tenantB, "ep_1", domain.StateDelivered)

	id := e.start(t, domain.Job{JobID: "rj_since", TenantID: tenantA, Kind: domain.KindSince, Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-100 * time.Hour)}}})
	e.run(t, e.w, id)

	sent := e.sentMessages(t)
	require.Len(t, sent, len(want), "each delivery of the range once: %v", sent)
	for did, resend := range want {
		require.Len(t, sent[did], 1, did)
		m := sent[did][0]
		require.Equal(t, resend, m.Resend, did)
		require.NotNil(t, m.ReplayedAt, did)
		require.Equal(t, tenantA, m.TenantID)
		if did != e.deliveryID("evt_dead", tenantA, "ep_2") { // the dead one's is its stored message
			require.JSONEq(t, `{"event":"`+m.EventID+`"}`, string(m.Payload), "the event's payload")
		}
	}
	for _, did := range []string{old, gone, off, before, other} {
		require.Empty(t, sent[did], did)
	}
	j := e.st.job(id)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Equal(t, 5, j.Replayed)
	require.Equal(t, 2, argsOf[replay.Since](t, j).NotRebuilt)
	require.Equal(t, map[string]int{domain.SkipPayloadExpired: 1, domain.SkipEventGone: 1, domain.SkipEndpointDisabled: 1}, j.Skipped)
	require.Equal(t, domain.SkipPayloadExpired, j.SkippedIDs[old])
	require.Equal(t, domain.SkipEventGone, j.SkippedIDs[gone])
	dead, _ := e.st.get(e.deliveryID("evt_dead", tenantA, "ep_2"))
	require.Equal(t, domain.StatePending, dead.State, "claimed and released, as every replay of the dead")
	require.Equal(t, id, dead.ReplayedBy)
	canc, _ := e.st.get(e.deliveryID("evt_canc", tenantA, "ep_2"))
	require.True(t, canc.Revives(sent[canc.DeliveryID][0].ReplayedAt), "deliver attempts the cancelled delivery's replay")
	require.False(t, e.t0.After(argsOf[replay.Since](t, j).Range.Until), "until: the job's start")
}

// The states asked for alone are replayed, and an event type and an
// endpoint narrow the range.
func TestReplaySinceSelects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := storefake.NewMessageLog()
	e.w.MessageLog = log
	in := e.t0.Add(-time.Hour)
	event(log, "evt_1", tenantA, "order.created", in)
	event(log, "evt_2", tenantA, "order.paid", in)
	d1 := e.delivery("evt_1", tenantA, "ep_1", domain.StateDelivered)
	e.delivery("evt_1", tenantA, "ep_2", domain.StatePending)
	e.delivery("evt_2", tenantA, "ep_1", domain.StateDelivered)

	id := e.start(t, domain.Job{JobID: "rj_sel", TenantID: tenantA, Kind: domain.KindSince,
		Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-2 * time.Hour), EndpointID: "ep_1", EventType: "order.created", States: []domain.DeliveryState{domain.StateDelivered}}}})
	e.run(t, e.w, id)
	sent := e.sentMessages(t)
	require.Len(t, sent, 1)
	require.Len(t, sent[d1], 1)
	require.Equal(t, 1, e.st.job(id).Replayed)
}

// A large range runs in steps, each bounded; a step that fails halfway is
// resumed from its checkpoint and every delivery is sent, the rebuilt ones
// at least once (with the same webhook-id), the dead ones once.
func TestReplaySinceStepsAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := storefake.NewMessageLog()
	e.w.MessageLog, e.w.StepSends = log, 20
	var ids []string
	for i := range 50 {
		ev := fmt.Sprintf("evt_%02d", i)
		event(log, ev, tenantA, "order.created", e.t0.Add(-time.Duration(i+1)*time.Minute))
		state := domain.StateDelivered
		if i%5 == 0 {
			state = domain.StateDead
		}
		ids = append(ids, e.delivery(ev, tenantA, "ep_1", state))
	}
	e.q.fail(fault{method: "SendMessageBatch", call: 3})
	id := e.start(t, domain.Job{JobID: "rj_big", TenantID: tenantA, Kind: domain.KindSince, Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-2 * time.Hour)}}})
	ctx := context.Background()
	failures := 0
	for n := 0; n < 100 && e.st.job(id).Status != domain.StatusCompleted; n++ {
		if err := e.w.Step(ctx, id); err != nil {
			failures++
		}
	}
	require.Equal(t, 1, failures)
	j := e.st.job(id)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Greater(t, j.Steps, 2, "in steps")
	sent := e.sentMessages(t)
	for i, did := range ids {
		require.NotEmpty(t, sent[did], did)
		if i%5 == 0 {
			require.Len(t, sent[did], 1, "a dead one is claimed: sent once")
		}
	}
}

// togetherLog is the message log whose reads of one event wait (up to
// 10 s) until n are under way together, and remember the most that were.
type togetherLog struct {
	*storefake.MessageLog
	n        int
	mu       sync.Mutex
	inFlight int
	peak     int
	all      chan struct{}
	once     sync.Once
}

func (l *togetherLog) Event(ctx context.Context, tenantID, id string) (domain.Event, error) {
	l.mu.Lock()
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	if l.inFlight == l.n {
		l.once.Do(func() { close(l.all) })
	}
	l.mu.Unlock()
	select {
	case <-l.all:
	case <-time.After(10 * time.Second):
	}
	l.mu.Lock()
	l.inFlight--
	l.mu.Unlock()
	return l.MessageLog.Event(ctx, tenantID, id)
}

// A replay since a time reads the events of a chunk's deliveries to
// rebuild at once, not one after another (issue 37: one outbox read per
// delivery, each waiting for the one before, held a replay since a time
// well under its rate): here each read waits until ten are under way,
// which reads made one by one never are.
func TestReplaySinceReadsAChunksEventsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := &togetherLog{MessageLog: storefake.NewMessageLog(), n: 10, all: make(chan struct{})}
	e.w.MessageLog = log
	var ids []string
	for i := range 20 {
		ev := fmt.Sprintf("evt_%02d", i)
		event(log.MessageLog, ev, tenantA, "order.created", e.t0.Add(-time.Duration(i+1)*time.Minute))
		ids = append(ids, e.delivery(ev, tenantA, "ep_1", domain.StateDelivered))
	}
	id := e.start(t, domain.Job{JobID: "rj_reads", TenantID: tenantA, Kind: domain.KindSince, Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-2 * time.Hour)}}})
	e.run(t, e.w, id)
	log.mu.Lock()
	peak := log.peak
	log.mu.Unlock()
	require.Equal(t, 10, peak, "a chunk's ten reads under way together")
	sent := e.sentMessages(t)
	for _, did := range ids {
		require.Len(t, sent[did], 1, did)
		require.True(t, sent[did][0].Resend, "a delivered one, rebuilt as a resend")
	}
	require.Equal(t, 20, e.st.job(id).Replayed)
}

// A replay since a time of events addressed each to one of a tenant's many
// endpoints takes a step's worth of deliveries a step (issue 37: a page
// sized as if each event named every endpoint took 24 events a step from a
// tenant of 25 endpoints, 17 sends a second at a rate of 200): the page
// lists again while its candidates fall short.
func TestReplaySinceOfAddressedEventsFillsItsSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.Config.Rate, e.w.Config.StepSends = 200, 100
	log := storefake.NewMessageLog()
	e.w.MessageLog = log
	for i := range 22 {
		e.st.putEndpoint(domain.Endpoint{TenantID: tenantA, EndpointID: fmt.Sprintf("ep_x%02d", i)})
	}
	var ids []string
	for i := range 200 {
		ev := fmt.Sprintf("evt_%03d", i)
		ep := fmt.Sprintf("ep_x%02d", i%22)
		log.Put(domain.Event{ID: ev, TenantID: tenantA, Type: "order.created", EndpointID: ep, OccurredAt: e.t0.Add(-time.Duration(i+1) * time.Second),
			Payload: json.RawMessage(`{"event":"` + ev + `"}`)})
		ids = append(ids, e.delivery(ev, tenantA, ep, domain.StateDelivered))
	}
	id := e.start(t, domain.Job{JobID: "rj_addressed", TenantID: tenantA, Kind: domain.KindSince, Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-time.Hour)}}})
	e.run(t, e.w, id)
	j := e.st.job(id)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Equal(t, 200, j.Replayed)
	require.LessOrEqual(t, j.Steps, 3, "100 sends a step: two steps, and at most one to find the range's end")
	sent := e.sentMessages(t)
	for _, did := range ids {
		require.Len(t, sent[did], 1, did)
	}
}
