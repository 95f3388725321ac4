package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/background"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/stretchr/testify/require"
)

// quietQueue is a background.Queue with nothing to receive: it counts what is
// sent (the job's next steps, the sweeps after it) and drops it.
type quietQueue struct {
	mu   sync.Mutex
	sent int
}

func (q *quietQueue) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent++
	return &sqs.SendMessageOutput{}, nil
}

func (q *quietQueue) SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	return &sqs.SendMessageBatchOutput{}, nil
}

func (q *quietQueue) ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	return &sqs.ReceiveMessageOutput{}, nil
}

func (q *quietQueue) DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *quietQueue) ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func (q *quietQueue) GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"ApproximateNumberOfMessagesNotVisible": "0"}}, nil
}

// noOutbox is an outbox with nothing in it (the replay worker's tests
// cover the outbox and the DLQ).
type noOutbox struct{}

func (noOutbox) TenantEvents(context.Context, string, int) ([]erasure.OutboxEvent, error) {
	return nil, nil
}
func (noOutbox) DeleteEvent(context.Context, string) (bool, error) { return false, nil }

func (noOutbox) DeletePages(context.Context, []erasure.OutboxEvent) error { return nil }

// DELETE /v1/admin/tenants/{id} tombstones the tenant at once (its key
// answers 401 before the job has run a step), answers 202 with the erase
// job, and answers the same job when asked again; the job, run by the
// replay worker on the same store, leaves nothing of the tenant the API or
// the operator's listings show, and the other tenant untouched.
func TestEraseTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	goneKey, keptKey := e.newTenant("gone"), e.newTenant("kept")
	goneEp, keptEp := e.createEndpoint(goneKey, nil), e.createEndpoint(keptKey, nil)
	for _, tn := range []struct{ tenant, endpoint string }{{"gone", goneEp.ID}, {"kept", keptEp.ID}} {
		d := domain.Delivery{DeliveryID: "dl_" + tn.tenant, TenantID: tn.tenant, EndpointID: tn.endpoint, EventID: "evt_" + tn.tenant}
		require.NoError(t, e.store.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: t0, Status: 410},
			domain.Outcome{State: domain.StateDead, DeadReason: "gone", Message: "{}"}))
	}
	stats := decodeJSON[api.StatsView](t, e.do("GET", "/v1/admin/stats", operatorKey, nil))
	require.Equal(t, map[string]int{"gone": 1, "kept": 1}, stats.DLQDepthByTenant)

	rec := e.do("DELETE", "/v1/admin/tenants/gone", operatorKey, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, "/v1/admin/tenants/gone/erasure", rec.Header().Get("Location"))
	job := decodeJSON[api.JobView](t, rec)
	require.Equal(t, domain.KindErase, job.Kind)
	require.Equal(t, "gone", job.Erasure.TenantID)
	requireProblem(t, e.do("GET", "/v1/endpoints", goneKey, nil), http.StatusUnauthorized)
	again := decodeJSON[api.JobView](t, e.do("DELETE", "/v1/admin/tenants/gone", operatorKey, nil))
	require.Equal(t, job.ID, again.ID)
	require.Len(t, e.store.started, 1, "asked again: the job under way, not another")
	requireProblem(t, e.do("DELETE", "/v1/admin/tenants/nobody", operatorKey, nil), http.StatusNotFound)
	requireProblem(t, e.do("GET", "/v1/admin/tenants/nobody/erasure", operatorKey, nil), http.StatusNotFound)

	w := &background.Worker{Store: e.store, Queue: &quietQueue{}, Outbox: noOutbox{}, Now: e.clock.Now, Log: slog.New(slog.DiscardHandler)}
	for i := 0; ; i++ {
		require.Less(t, i, 20, "the erase job completes")
		require.NoError(t, w.Step(ctx, job.ID))
		if j, err := e.store.Job(ctx, job.ID); err == nil && j.Status == domain.StatusCompleted {
			break
		}
		e.clock.Advance(time.Second)
	}

	done := decodeJSON[api.JobView](t, e.do("GET", "/v1/admin/tenants/gone/erasure", operatorKey, nil))
	require.Equal(t, domain.StatusCompleted, done.Status)
	require.Empty(t, done.Erasure.Phase)
	require.Equal(t, 1, done.Erasure.Erased[domain.EraseAPIKeys])
	require.Equal(t, 1, done.Erasure.Erased[domain.EraseDeadDeliveries])
	require.Equal(t, 1, done.Erasure.Erased[domain.EraseEndpoints])
	requireProblem(t, e.do("GET", "/v1/endpoints", goneKey, nil), http.StatusUnauthorized)
	requireProblem(t, e.do("POST", "/v1/admin/tenants/gone/keys", operatorKey, nil), http.StatusNotFound)
	stats = decodeJSON[api.StatsView](t, e.do("GET", "/v1/admin/stats", operatorKey, nil))
	require.Equal(t, map[string]int{"kept": 1}, stats.DLQDepthByTenant, "the operator's listing no longer shows it")
	require.Equal(t, done.ID, decodeJSON[api.JobView](t, e.do("DELETE", "/v1/admin/tenants/gone", operatorKey, nil)).ID,
		"asked after it completed: the completed job")

	rec = e.do("GET", "/v1/endpoints/"+keptEp.ID, keptKey, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = e.do("GET", "/v1/deliveries/dl_kept", keptKey, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
