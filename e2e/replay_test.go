//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/stretchr/testify/require"
)

// failingUntilUp answers code until up is set, then 200.
func failingUntilUp(t *testing.T, code int) (*receiver, *atomic.Bool) {
	up := &atomic.Bool{}
	return newReceiver(t, func(_ int, w http.ResponseWriter) {
		if up.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(code)
	}), up
}

// deadEvents writes n events for a tenant created through the API and waits
// until every delivery is dead; it returns the delivery ids.
func deadEvents(t *testing.T, tenantID, endpointID string, n int, typ string) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_%s_%d_%s", typ, i, tenantID), typ, fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		ids = append(ids, domain.DeliveryID(ev.TenantID, ev.ID, endpointID, ev.OccurredAt))
	}
	for _, id := range ids {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	}
	return ids
}

func waitJob(t *testing.T, key, path string) map[string]any {
	t.Helper()
	var job map[string]any
	require.Eventually(t, func() bool {
		var status int
		status, job = call(t, "GET", path, key, nil)
		return status == http.StatusOK && job["status"] == string(domain.StatusCompleted)
	}, 120*time.Second, 500*time.Millisecond, "job %s did not complete: %v", path, job)
	return job
}

func listDead(t *testing.T, key, query string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		q := "?limit=7&" + query
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		status, body := call(t, "GET", "/v1/dlq"+q, key, nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		for _, d := range body["data"].([]any) {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			sort.Strings(ids)
			return ids
		}
		cursor = next
	}
}

// dlqDepth is a tenant's count of dead deliveries in the operator's stats
// (GET /v1/admin/stats), the DLQ's depth by tenant as the store keeps it:
// read without receiving from the shared DLQ, which would hide other
// tests' messages.
func dlqDepth(t *testing.T, tenantID string) int {
	t.Helper()
	op, err := operatorKey()
	require.NoError(t, err)
	status, stats := call(t, "GET", "/v1/admin/stats", op, nil)
	require.Equal(t, http.StatusOK, status, "%v", stats)
	by, _ := stats["dlq_depth_by_tenant"].(map[string]any)
	n, _ := by[tenantID].(float64)
	return int(n)
}

// With the receiver down, 20 deliveries of tenant A and 20 of tenant B die;
// the receiver comes back; A replays by filter: A's 20 arrive with the
// webhook-id their failed attempts carried, B's stay dead in the index and in
// the DLQ's depth by tenant, and A's leave both.
func TestReplayByFilterIsTenantScoped(t *testing.T) {
	t.Parallel()
	tenantA, keyA := apiTenant(t, "replay_a")
	tenantB, keyB := apiTenant(t, "replay_b")
	// 400: dead at once. (A receiver answering 503 to 20 deliveries would
	// open its circuit breaker at the failing threshold, and the rest would
	// wait for it rather than die.)
	rcvA, upA := failingUntilUp(t, http.StatusBadRequest)
	rcvB, _ := failingUntilUp(t, http.StatusBadRequest)
	epA, _ := apiEndpoint(t, keyA, rcvA.URL+"/a")
	epB, _ := apiEndpoint(t, keyB, rcvB.URL+"/b")
	var idsA, idsB []string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); idsA = deadEvents(t, tenantA, epA, 20, "order.created") }()
	go func() { defer wg.Done(); idsB = deadEvents(t, tenantB, epB, 20, "order.created") }()
	wg.Wait()
	sort.Strings(idsA)
	sort.Strings(idsB)
	require.Equal(t, idsA, listDead(t, keyA, ""), "A's DLQ listing holds exactly A's dead deliveries")
	require.Equal(t, idsB, listDead(t, keyB, ""))
	failedWith := map[string]bool{}
	for _, r := range rcvA.requests() {
		failedWith[r.Header.Get("webhook-id")] = true
	}

	// 20 failed attempts in a few seconds do not disable A's endpoint: a
	// run of failures disables only once it has lasted (30 s locally, 5
	// days by default) as well as reached the threshold.
	status, ep := call(t, "GET", "/v1/endpoints/"+epA, keyA, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, false, ep["disabled"], "%v", ep)

	upA.Store(true)
	before, beforeB := len(rcvA.requests()), len(rcvB.requests())
	status, job := call(t, "POST", "/v1/dlq/replay", keyA, map[string]any{"event_type": "order.created"})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	job = waitJob(t, keyA, "/v1/replays/"+job["id"].(string))
	require.EqualValues(t, 20, job["replayed"], "%v", job)
	require.EqualValues(t, 20, job["matched"])

	got := rcvA.waitFor(t, before+20, 60*time.Second)[before:]
	var arrived []string
	for _, r := range got {
		id := r.Header.Get("webhook-id")
		require.True(t, failedWith[id], "replay keeps the idempotency key of the failed attempts")
		require.Equal(t, "1", r.Header.Get("X-Attempt"), "a replay starts a fresh schedule")
		arrived = append(arrived, id)
	}
	sort.Strings(arrived)
	require.Equal(t, idsA, arrived, "each of A's deliveries arrives once")
	for _, id := range idsA {
		d := waitDelivery(t, id, 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		require.NotNil(t, d.ReplayedAt)
	}
	require.Empty(t, listDead(t, keyA, ""))
	require.Equal(t, idsB, listDead(t, keyB, ""), "B's dead deliveries are untouched in the index")

	// The DLQ's depth by tenant agrees: A's leaves it, B's stays.
	require.Eventually(t, func() bool { return dlqDepth(t, tenantA) == 0 }, 3*time.Minute, 3*time.Second,
		"A's replayed deliveries must leave the DLQ's depth")
	require.Equal(t, len(idsB), dlqDepth(t, tenantB), "B's dead deliveries stay in the DLQ's depth")
	require.Equal(t, beforeB, len(rcvB.requests()), "B's receiver got nothing from A's replay")
}

// A replay by ids replays exactly those ids, and skips what it must.
func TestReplayByIDs(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "replay_ids")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	ids := deadEvents(t, tenantID, ep, 4, "invoice.paid")
	up.Store(true)
	status, job := call(t, "POST", "/v1/dlq/replay", key, map[string]any{"delivery_ids": []string{ids[0], ids[2], "msg_doesnotexist"}})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	job = waitJob(t, key, "/v1/replays/"+job["id"].(string))
	require.EqualValues(t, 2, job["replayed"])
	require.EqualValues(t, 1, job["skipped"].(map[string]any)["not_found"])
	rcv.waitFor(t, 6, 30*time.Second)
	time.Sleep(2 * time.Second)
	got := rcv.requests()
	require.Len(t, got, 6)
	require.ElementsMatch(t, []string{ids[0], ids[2]}, []string{got[4].Header.Get("webhook-id"), got[5].Header.Get("webhook-id")})
	others := []string{ids[1], ids[3]}
	sort.Strings(others)
	require.Equal(t, others, listDead(t, key, ""), "the others stay dead")
}

// Concurrent replays of the same deliveries send each once.
func TestConcurrentReplaysSendOnce(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "replay_twice")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	ids := deadEvents(t, tenantID, ep, 10, "order.created")
	up.Store(true)
	var jobs [3]string
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{"delivery_ids": ids}
			if i == 2 {
				body = map[string]any{"event_type": "order.created"}
			}
			status, job := call(t, "POST", "/v1/dlq/replay", key, body)
			require.Equal(t, http.StatusAccepted, status)
			jobs[i] = job["id"].(string)
		}()
	}
	wg.Wait()
	total := 0
	for _, id := range jobs {
		job := waitJob(t, key, "/v1/replays/"+id)
		total += int(job["replayed"].(float64))
	}
	require.Equal(t, len(ids), total, "between them the jobs replayed each delivery once")
	rcv.waitFor(t, 2*len(ids), 30*time.Second)
	time.Sleep(3 * time.Second)
	counts := map[string]int{}
	for _, r := range rcv.requests()[len(ids):] {
		counts[r.Header.Get("webhook-id")]++
	}
	for _, id := range ids {
		require.Equal(t, 1, counts[id], "delivery %s sent %d times by concurrent replays", id, counts[id])
	}
}

// A job that stopped between claiming deliveries and sending them (the state
// a crashed or timed-out worker leaves) resumes when its message comes back,
// and loses nothing.
func TestInterruptedReplayResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tenantID, key := apiTenant(t, "replay_crash")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	ids := deadEvents(t, tenantID, ep, 6, "order.created")
	up.Store(true)

	// The fault: a worker checkpointed a step over all six, claimed three and
	// sent one of them, then died.
	job := &domain.Job{JobID: fmt.Sprintf("rj_crash_%d", time.Now().UnixNano()), TenantID: tenantID, Kind: domain.KindIDs,
		Args: &replay.IDs{IDs: ids}, Status: domain.StatusRunning, Cursor: strconv.Itoa(len(ids)), Pending: ids}
	require.NoError(t, env.store.SaveJob(ctx, job))
	for _, id := range ids[:3] {
		read, err := env.store.Delivery(ctx, id)
		require.NoError(t, err)
		ds, errs := env.store.ClaimForReplay(ctx, []domain.Delivery{read}, tenantID, job.JobID, 15*time.Minute)
		require.NoError(t, errs[0])
		d := ds[0]
		if id == ids[0] {
			_, err = env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &env.out.DeliveryQueueURL, MessageBody: &d.Message, MessageGroupId: message.GroupID(tenantID)})
			require.NoError(t, err)
			require.NoError(t, env.store.ReleaseReplay(ctx, []string{id}, job.JobID))
		}
	}
	// SQS brings the job message back.
	s := &jobs.Starter{Queue: env.sqs, JobsQueueURL: env.out.JobsQueueURL}
	require.NoError(t, s.Enqueue(ctx, jobs.Step(job.JobID), 0))

	done := waitJob(t, key, "/v1/replays/"+job.JobID)
	require.EqualValues(t, 6, done["replayed"], "%v", done)
	rcv.waitFor(t, 12, 30*time.Second)
	time.Sleep(2 * time.Second)
	counts := map[string]int{}
	for _, r := range rcv.requests()[6:] {
		counts[r.Header.Get("webhook-id")]++
	}
	for _, id := range ids {
		require.GreaterOrEqual(t, counts[id], 1, "delivery %s lost by the interrupted job", id)
		require.LessOrEqual(t, counts[id], 1, "delivery %s sent twice", id)
		waitDelivery(t, id, 20*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
}

// The operator's redrive moves the whole DLQ back: every message is sent
// back and delivered, and nothing older than the job is left in the DLQ. It
// runs before the parallel tests (it is not parallel), so the DLQ holds only
// its own messages and those of earlier runs.
func TestOperatorRedriveEmptiesTheDLQ(t *testing.T) {
	ctx := context.Background()
	tenantID, key := apiTenant(t, "redrive")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	ids := deadEvents(t, tenantID, ep, 8, "order.created")
	for _, id := range ids {
		waitInDLQ(t, id, 30*time.Second)
	}
	// deliver records a death, then sends its message to the DLQ
	// (deliver.Handler.deadLetter): the job, which moves only messages sent
	// before it began, starts once those sends are surely done.
	time.Sleep(time.Second)
	up.Store(true)
	op, err := operatorKey()
	require.NoError(t, err)
	status, job := call(t, "POST", "/v1/admin/dlq/redrive", op, nil)
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	done := waitJob(t, op, "/v1/admin/replays/"+job["id"].(string))
	require.GreaterOrEqual(t, done["replayed"].(float64), float64(len(ids)), "%v", done)
	for _, id := range ids {
		d := waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		require.NotNil(t, d.ReplayedAt)
	}
	// The job ends once SQS counts no message older than it in the DLQ,
	// none hidden by another reader: it left nothing of this test's there
	// (read from the job, not by receiving from the shared DLQ).
	skipped, _ := done["skipped"].(map[string]any)
	require.Zero(t, skipped[domain.SkipHiddenElsewhere], "%v", done)
	for _, id := range ids {
		d, err := env.store.Delivery(ctx, id)
		require.NoError(t, err)
		require.Equal(t, job["id"], d.ReplayedBy, "delivery %s was sent back by the redrive", id)
	}
}
