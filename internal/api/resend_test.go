package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/stretchr/testify/require"
)

// fakeDeliveryQueue records the messages the API sends to the delivery
// queue, and refuses one over SQS's 256 KiB or outside its tenant's
// message group (message.CheckGroupID).
type fakeDeliveryQueue struct {
	mu     sync.Mutex
	sent   []string
	groups []string // the MessageGroupId of each of sent
}

func (q *fakeDeliveryQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(aws.ToString(in.MessageBody)) > 256<<10 || aws.ToString(in.QueueUrl) == "" {
		return nil, errTableDown
	}
	if err := message.CheckGroupID(aws.ToString(in.MessageBody), in.MessageGroupId); err != nil {
		return nil, err
	}
	q.sent = append(q.sent, aws.ToString(in.MessageBody))
	q.groups = append(q.groups, aws.ToString(in.MessageGroupId))
	return &sqs.SendMessageOutput{}, nil
}

func resendEnv(t *testing.T) (*env, *fakeDeliveryQueue, string, api.EndpointView) {
	e := newEnv(t)
	q := &fakeDeliveryQueue{}
	e.srv.DeliveryQueue, e.srv.DeliveryQueueURL = q, "https://sqs.example/delivery"
	e.h = e.srv.Handler()
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	return e, q, key, ep
}

func (e *env) putDeliveryOf(ep api.EndpointView, event string, state domain.DeliveryState) string {
	id := domain.DeliveryID("acme", event, ep.ID, t0)
	e.store.putDelivery(domain.Delivery{DeliveryID: id, TenantID: "acme", EndpointID: ep.ID, EventID: event, EventType: "order.created",
		State: state, CreatedAt: t0, Attempts: 1, Message: `{"delivery_id":"` + id + `"}`})
	return id
}

func TestResendADeliveredDelivery(t *testing.T) {
	t.Parallel()
	e, q, key, ep := resendEnv(t)
	seq := int64(3)
	e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0.Add(-time.Hour), Sequence: &seq, Payload: json.RawMessage(`{"order":1}`)})
	id := e.putDeliveryOf(ep, "evt_1", domain.StateDelivered)

	rec := e.do("POST", "/v1/deliveries/"+id+"/resend", key, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"delivery_id":"`+id+`","state":"delivered"}`, rec.Body.String())
	require.Len(t, q.sent, 1)
	m, err := message.Decode(q.sent[0])
	require.NoError(t, err)
	require.Equal(t, id, m.DeliveryID, "the same webhook-id")
	require.True(t, m.Resend, "marked, so deliver attempts it although delivered")
	require.Equal(t, t0, *m.ReplayedAt, "its age counts from the resend")
	require.JSONEq(t, `{"order":1}`, string(m.Payload))
	require.Equal(t, &seq, m.Sequence)
	require.Equal(t, "order.created", m.EventType)
	require.Equal(t, []string{"acme"}, q.groups, "in its tenant's message group, not its endpoint's")
	d, _ := e.store.delivery(id)
	require.Equal(t, domain.StateDelivered, d.State, "the record is unchanged")

	// Past the payload retention, or gone: 410.
	e.clock.Advance(api.DefaultPayloadRetention)
	requireProblem(t, e.do("POST", "/v1/deliveries/"+id+"/resend", key, nil), http.StatusGone)
	gone := e.putDeliveryOf(ep, "evt_gone", domain.StateDelivered)
	requireProblem(t, e.do("POST", "/v1/deliveries/"+gone+"/resend", key, nil), http.StatusGone)
	require.Len(t, q.sent, 1, "nothing more sent")
}

func TestResendADeadDeliveryIsAReplayOfIt(t *testing.T) {
	t.Parallel()
	e, q, key, ep := resendEnv(t)
	id := e.putDeliveryOf(ep, "evt_dead", domain.StateDead)
	rec := e.do("POST", "/v1/deliveries/"+id+"/resend", key, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := rawJSON(t, rec)
	require.Equal(t, "dead", v["state"])
	jobID := v["replay_job_id"].(string)
	require.Equal(t, []string{jobID}, e.store.started)
	job, err := e.store.Job(context.Background(), jobID)
	require.NoError(t, err)
	require.Equal(t, domain.KindIDs, job.Kind)
	require.Equal(t, []string{id}, argsOf[replay.IDs](t, job).IDs)
	require.Equal(t, "acme", job.TenantID)
	require.Empty(t, q.sent, "the replay worker sends it, with the claim and the DLQ depth")

	e.store.full = map[string]bool{"acme": true}
	rec = e.do("POST", "/v1/deliveries/"+id+"/resend", key, nil)
	requireProblem(t, rec, http.StatusTooManyRequests)
	require.Equal(t, "30", rec.Header().Get("Retry-After"))
}

func TestResendRefused(t *testing.T) {
	t.Parallel()
	e, q, key, ep := resendEnv(t)
	e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0, Payload: json.RawMessage(`{}`)})
	pending := e.putDeliveryOf(ep, "evt_p", domain.StatePending)
	p := requireProblem(t, e.do("POST", "/v1/deliveries/"+pending+"/resend", key, nil), http.StatusConflict)
	require.Contains(t, p.Detail, "pending")

	delivered := e.putDeliveryOf(ep, "evt_1", domain.StateDelivered)
	require.Equal(t, http.StatusOK, e.do("POST", "/v1/endpoints/"+ep.ID+"/disable", key, nil).Code)
	p = requireProblem(t, e.do("POST", "/v1/deliveries/"+delivered+"/resend", key, nil), http.StatusConflict)
	require.Contains(t, p.Detail, "disabled")
	require.Contains(t, p.Detail, "/enable")

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/endpoints/"+ep.ID, key, nil).Code)
	p = requireProblem(t, e.do("POST", "/v1/deliveries/"+delivered+"/resend", key, nil), http.StatusConflict)
	require.Contains(t, p.Detail, "no longer exists")
	requireProblem(t, e.do("POST", "/v1/deliveries/msg_nope/resend", key, nil), http.StatusNotFound)
	require.Empty(t, q.sent)

	// Without a delivery queue (or a message log) a delivered delivery's
	// resend cannot be made: 503.
	e2 := newEnv(t)
	key2 := e2.newTenant("acme")
	ep2 := e2.createEndpoint(key2, nil)
	id2 := e2.putDeliveryOf(ep2, "evt_1", domain.StateDelivered)
	requireProblem(t, e2.do("POST", "/v1/deliveries/"+id2+"/resend", key2, nil), http.StatusServiceUnavailable)
}

// A resend goes out in its tenant's message group (message.GroupID), not
// its endpoint's, as enqueue sent the delivery first: the fake refuses a
// message without it.
func TestResendCarriesItsTenantsGroup(t *testing.T) {
	t.Parallel()
	e, q, key, ep := resendEnv(t)
	key2 := e.newTenant("globex")
	ep2 := e.createEndpoint(key2, nil)
	for _, tenant := range []struct {
		id  string
		ep  api.EndpointView
		key string
	}{{"acme", ep, key}, {"globex", ep2, key2}} {
		event := "evt_" + tenant.id
		e.messageLog().Put(domain.Event{ID: event, TenantID: tenant.id, Type: "order.created", OccurredAt: t0.Add(-time.Hour), Payload: json.RawMessage(`{}`)})
		id := domain.DeliveryID(tenant.id, event, tenant.ep.ID, t0.Add(-time.Hour))
		e.store.putDelivery(domain.Delivery{DeliveryID: id, TenantID: tenant.id, EndpointID: tenant.ep.ID, EventID: event, EventType: "order.created",
			State: domain.StateDelivered, CreatedAt: t0, Attempts: 1})
		rec := e.do("POST", "/v1/deliveries/"+id+"/resend", tenant.key, nil)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	}
	require.Equal(t, []string{"acme", "globex"}, q.groups)

	b := `{"delivery_id":"d","tenant_id":"acme","endpoint_id":"e","event_id":"v","payload":{}}`
	_, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String("https://sqs.example/delivery"), MessageBody: &b})
	require.ErrorContains(t, err, "MessageGroupId")
}
