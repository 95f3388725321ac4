package background_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/stretchr/testify/require"
)

// outboxNotices is the outbox as the worker's notices see it: one event
// per id.
type outboxNotices struct {
	mu     sync.Mutex
	events map[string]opevent.Event
}

func (o *outboxNotices) Emit(_ context.Context, ev opevent.Event) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := opevent.Item(ev); err != nil {
		return err
	}
	if _, ok := o.events[ev.ID]; !ok {
		o.events[ev.ID] = ev
	}
	return nil
}

// A window's notice, handled (twice, as SQS may deliver it), writes one
// delivery.dead summing the window up.
func TestDeadNoticeWritesOneSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := &outboxNotices{events: map[string]opevent.Event{}}
	e.w.OpEvents = out
	ctx := context.Background()
	start, end := opevent.Window(e.t0, 5*time.Minute)
	for i := range 25 {
		_, err := e.st.AddDeath(ctx, tenantA, "ep_1", start, end, domain.OpDeath{DeliveryID: "d" + string(rune('a'+i)), EventType: "order.created", Reason: domain.ReasonAttemptsExhausted, Attempts: 4})
		require.NoError(t, err)
	}
	body, err := opevent.NoticeBody(opevent.DeadNotice{TenantID: tenantA, EndpointID: "ep_1", WindowStart: start, WindowEnd: end})
	require.NoError(t, err)
	for range 2 {
		resp, err := e.w.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: body}}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
	}
	require.Len(t, out.events, 1)
	for _, ev := range out.events {
		require.Equal(t, domain.OpDeliveryDead, ev.Type)
		require.Equal(t, tenantA, ev.TenantID)
		raw, err := json.Marshal(ev.Payload)
		require.NoError(t, err)
		var p domain.OpDeliveryDeadEvent
		require.NoError(t, json.Unmarshal(raw, &p))
		require.Equal(t, 25, p.Count)
		require.Equal(t, "ep_1", p.EndpointID)
		require.Len(t, p.Deaths, domain.OpDeadSample)
		require.Equal(t, map[domain.DeadReason]int{domain.ReasonAttemptsExhausted: 25}, p.Reasons)
		require.True(t, end.Equal(p.WindowEnd))
	}

	// A window with no record: nothing to sum up, and not a failure.
	body, err = opevent.NoticeBody(opevent.DeadNotice{TenantID: tenantA, EndpointID: "ep_2", WindowStart: start, WindowEnd: end})
	require.NoError(t, err)
	resp, err := e.w.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m2", Body: body}}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, out.events, 1)
}

// A dead notice whose window cannot be read (a null, or not a window) is
// dropped with its reason, not failed: SQS would give it back until the
// queue parks it, and nothing could read it then either.
func TestUnreadableDeadNoticeIsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := &outboxNotices{events: map[string]opevent.Event{}}
	e.w.OpEvents = out
	for i, body := range []string{`{"kind":"dead_notice","dead_notice":null}`, `{"kind":"dead_notice","dead_notice":"not a window"}`, `{"kind":"dead_notice"}`} {
		resp, err := e.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprintf("m%d", i), Body: body}}})
		require.NoError(t, err, body)
		require.Empty(t, resp.BatchItemFailures, body)
	}
	require.Empty(t, out.events)
}
