package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
	"github.com/hookline/hookline/internal/trace"
	"github.com/stretchr/testify/require"
)

// The tests of whole jobs through the runner (crash and resume, fairness,
// redrives, sweeps) are internal/background's; these are of a replay's step
// alone.

const deliveryURL = "http://sqs.fake/deliveries"

type env struct {
	st  *storefake.Store
	q   *sqsfake.Queue
	clk *storetest.Clock
	r   *replay.Replayer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	st := storefake.New()
	st.Now = clk.Now
	q := sqsfake.New(sqsfake.Config{Now: clk.Now})
	e := &env{st: st, q: q, clk: clk, r: &replay.Replayer{Store: st, Queue: q, DeliveryQueueURL: deliveryURL,
		Config: jobs.Config{Rate: 2, StepSends: 3}, Now: clk.Now}}
	for _, ep := range []domain.Endpoint{{TenantID: "acme", EndpointID: "ep_1"}, {TenantID: "acme", EndpointID: "ep_off", Disabled: true}} {
		require.NoError(t, st.PutEndpoint(context.Background(), ep))
	}
	t.Cleanup(func() { require.Empty(t, q.Refusals(), "no request SQS would refuse") })
	return e
}

func (e *env) put(id, tenant, endpoint string, state domain.DeliveryState) {
	b, _ := json.Marshal(message.Message{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: "order.created",
		OccurredAt: e.clk.Now().Add(-time.Hour), Payload: json.RawMessage(`{}`)})
	dead := e.clk.Now().Add(-time.Minute)
	e.st.PutDelivery(domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, State: state, Message: string(b), DeadAt: &dead, DeadReason: domain.ReasonAttemptsExhausted})
}

// A step by ids replays the dead deliveries it may, skips the others with
// their reason, and reports when the next step may start (its paced sends'
// span); the last step reports done.
func TestReplayStepByIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"d1", "d2", "d3", "d4"} {
		e.put(id, "acme", "ep_1", domain.StateDead)
	}
	e.put("ok", "acme", "ep_1", domain.StateDelivered)
	e.put("other", "globex", "ep_1", domain.StateDead)
	e.put("off", "acme", "ep_off", domain.StateDead)
	j := &domain.Job{JobID: "rj_1", TenantID: "acme", Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"d1", "ok", "other", "d2", "off", "gone", "d3", "d4"}}}
	require.NoError(t, e.st.CreateJob(context.Background(), j, 3))

	var steps []time.Duration
	for done := false; !done; {
		var next time.Duration
		var err error
		done, next, err = e.r.Step(context.Background(), j)
		require.NoError(t, err)
		require.Empty(t, j.Pending, "a step leaves no pending ids")
		steps = append(steps, next)
	}
	// 8 ids, 3 a step: d1 is sent of the first three, d2 of the next, d3
	// and d4 of the last; one send at 2/s comes due 0.5 s after its step
	// began, when the next may start.
	require.Equal(t, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 0}, steps)
	require.Equal(t, 4, j.Replayed)
	require.Equal(t, map[string]int{"not_dead": 1, "not_found": 2, "endpoint_disabled": 1}, j.Skipped)
	require.Len(t, e.q.Bodies(deliveryURL), 4)
	for _, id := range []string{"d1", "d2", "d3", "d4"} {
		d, err := e.st.Delivery(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, domain.StatePending, d.State, "%s is back in flight", id)
		require.Equal(t, "rj_1", d.ReplayedBy)
		require.Empty(t, d.ReplayClaimedBy, "its claim is released")
	}
}

// failingBatches fails every SendMessageBatch.
type failingBatches struct{ *sqsfake.Queue }

func (failingBatches) SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	return nil, errors.New("injected")
}

// A step checkpoints the ids it selected before it sends any: a step whose
// sends fail leaves them pending in the job, and the step that resumes it
// sends those same ids (the delivery claimed by the job included) and
// moves on.
func TestReplayStepCheckpointsBeforeItSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"d1", "d2", "d3", "d4"} {
		e.put(id, "acme", "ep_1", domain.StateDead)
	}
	j := &domain.Job{JobID: "rj_1", TenantID: "acme", Kind: domain.KindFilter, Args: &replay.Filter{Filter: domain.DeadFilter{Until: e.clk.Now()}}}
	require.NoError(t, e.st.CreateJob(context.Background(), j, 3))
	fails := *e.r
	fails.Queue = failingBatches{e.q}
	_, _, err := fails.Step(context.Background(), j)
	require.Error(t, err)
	saved, err := e.st.Job(context.Background(), "rj_1")
	require.NoError(t, err)
	require.Len(t, saved.Pending, 3, "the step's ids are saved before any send")
	require.Equal(t, domain.StatusRunning, saved.Status)

	done, _, err := e.r.Step(context.Background(), &saved)
	require.NoError(t, err)
	require.False(t, done, "a fourth is left")
	require.Len(t, e.q.Bodies(deliveryURL), 3, "the pending ids, sent once")
	done, _, err = e.r.Step(context.Background(), &saved)
	require.NoError(t, err)
	require.True(t, done)
	require.Len(t, e.q.Bodies(deliveryURL), 4)
	require.Equal(t, 4, saved.Replayed)
}

// A replayed message stays in its event's trace: its new context is the
// replay's send span, a child of the context the dead message carried,
// mirrored in its attribute; each step is a span of the job's own trace.
func TestReplayKeepsTheEventsTrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var buf bytes.Buffer
	e.r.Tracer = &trace.Tracer{Service: "replay", Out: &buf}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	b, _ := json.Marshal(message.Message{DeliveryID: "d1", TenantID: "acme", EndpointID: "ep_1", EventID: "evt_d1", EventType: "order.created",
		OccurredAt: e.clk.Now().Add(-time.Hour), Payload: json.RawMessage(`{}`), TraceParent: tp})
	dead := e.clk.Now().Add(-time.Minute)
	e.st.PutDelivery(domain.Delivery{DeliveryID: "d1", TenantID: "acme", EndpointID: "ep_1", State: domain.StateDead, Message: string(b), DeadAt: &dead, DeadReason: domain.ReasonAttemptsExhausted})
	e.put("d2", "acme", "ep_1", domain.StateDead) // of an earlier version: no context
	j := &domain.Job{JobID: "rj_t", TenantID: "acme", Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"d1", "d2"}}, CreatedAt: e.clk.Now()}
	require.NoError(t, e.st.CreateJob(context.Background(), j, 3))
	done, _, err := e.r.Step(context.Background(), j)
	require.NoError(t, err)
	require.True(t, done)

	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		attrs := m["attributes"].(map[string]any)
		lines[m["name"].(string)+"/"+fmt.Sprint(attrs["delivery_id"])] = m
	}
	step := lines["replay.step/<nil>"]
	require.NotNil(t, step, buf.String())
	require.Equal(t, 2.0, step["attributes"].(map[string]any)["replayed"])
	require.NotEqual(t, "4bf92f3577b34da6a3ce929d0e0e4736", step["trace_id"], "the job's own trace")

	msgs := e.q.Messages(deliveryURL)
	require.Len(t, msgs, 2)
	for _, m := range msgs {
		body, err := message.Decode(m.Body)
		require.NoError(t, err)
		send := lines["replay.send/"+body.DeliveryID]
		c, ok := trace.Parse(body.TraceParent)
		require.True(t, ok)
		require.Equal(t, send["trace_id"], c.TraceIDHex())
		require.Equal(t, send["span_id"], c.SpanIDHex(), "the next attempt's parent is the replay's send")
		require.Equal(t, body.TraceParent, aws.ToString(m.Attributes[message.TraceAttribute].StringValue))
		if body.DeliveryID == "d1" {
			require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", c.TraceIDHex())
			require.Equal(t, "00f067aa0ba902b7", send["parent_span_id"])
		} else {
			require.Equal(t, trace.Derive(trace.EventKey("acme", "evt_d2"), body.OccurredAt).TraceIDHex(), c.TraceIDHex(), "the trace enqueue derived")
		}
	}
}
