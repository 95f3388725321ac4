//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// postReplay sends POST /v1/dlq/replay and returns the status, the
// Retry-After header and the answer; it never fails the test itself, so
// goroutines may call it.
func postReplay(key string, body any) (int, string, map[string]any, error) {
	raw, _ := json.Marshal(body)
	url := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID + "/v1/dlq/replay"
	req, err := http.NewRequest("POST", url, bytes.NewReader(raw))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, "", nil, fmt.Errorf("answer is not JSON: %s", b)
	}
	if resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/problem+json" {
		return 0, "", nil, fmt.Errorf("a %d that is not a problem document", resp.StatusCode)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out, nil
}

// A tenant's client that floods POST /v1/dlq/replay gets at most three jobs
// (queued or running) at once, and 429 with Retry-After for the rest; another
// tenant's replay is not queued behind the flood and completes within a
// minute (before, the flood queued a job per request, each with its DLQ
// sweeps, and another tenant's replay sat queued for minutes). Once A's jobs
// complete, A may replay again.
func TestReplayFloodIsBoundedPerTenant(t *testing.T) {
	t.Parallel()
	tenantA, keyA := apiTenant(t, "flood_a")
	tenantB, keyB := apiTenant(t, "flood_b")
	rcvA, upA := failingUntilUp(t, http.StatusBadRequest) // dead at once
	rcvB, upB := failingUntilUp(t, http.StatusBadRequest)
	epA, _ := apiEndpoint(t, keyA, rcvA.URL+"/a")
	epB, _ := apiEndpoint(t, keyB, rcvB.URL+"/b")
	var idsB []string
	var wg sync.WaitGroup
	wg.Go(func() { deadEvents(t, tenantA, epA, 3, "order.created") })
	wg.Go(func() { idsB = deadEvents(t, tenantB, epB, 3, "order.created") })
	wg.Wait()
	upA.Store(true)
	upB.Store(true)

	const flood = 12
	type answer struct {
		status     int
		retryAfter string
		body       map[string]any
		err        error
	}
	answers := make([]answer, flood)
	for i := range flood {
		wg.Go(func() {
			a := &answers[i]
			a.status, a.retryAfter, a.body, a.err = postReplay(keyA, map[string]any{"event_type": "order.created"})
		})
	}
	wg.Wait()
	var jobsA []string
	refused, jobCapped := 0, 0
	for _, a := range answers {
		require.NoError(t, a.err)
		switch a.status {
		case http.StatusAccepted:
			jobsA = append(jobsA, a.body["id"].(string))
		case http.StatusTooManyRequests:
			refused++
			// Two limits answer a flood: the tenant's expensive requests a
			// second (Retry-After 1), and its open jobs (Retry-After 30).
			if strings.Contains(fmt.Sprint(a.body["detail"]), "expensive requests a second") {
				require.Equal(t, "1", a.retryAfter, "a refusal says when to retry")
				continue
			}
			jobCapped++
			require.Equal(t, "30", a.retryAfter, "a refusal says when to retry")
			require.Contains(t, a.body["detail"], "jobs queued or running")
		default:
			t.Fatalf("replay answered %d: %v", a.status, a.body)
		}
	}
	require.NotEmpty(t, jobsA)
	require.LessOrEqual(t, len(jobsA), jobs.DefaultMaxOpenJobs, "at most three of A's jobs at once")
	require.Equal(t, flood-len(jobsA), refused)
	require.NotZero(t, jobCapped, "past its open jobs, the tenant is refused by the job cap")

	t.Logf("A's flood of %d requests: %d accepted, %d refused with 429", flood, len(jobsA), refused)
	askedB := time.Now()
	status, _, job, err := postReplay(keyB, map[string]any{"delivery_ids": idsB})
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, status, "B is not refused for A's flood: %v", job)
	path := "/v1/replays/" + job["id"].(string)
	var got map[string]any
	require.Eventually(t, func() bool {
		var s int
		s, got = call(t, "GET", path, keyB, nil)
		return s == http.StatusOK && got["status"] == string(domain.StatusCompleted)
	}, time.Minute, 500*time.Millisecond, "B's replay waits behind at most three of A's job steps: %v", got)
	t.Logf("B's replay completed %s after it was asked for", time.Since(askedB).Round(100*time.Millisecond))
	require.EqualValues(t, 3, got["replayed"])
	rcvB.waitFor(t, 6, 30*time.Second)

	for _, id := range jobsA {
		waitJob(t, keyA, "/v1/replays/"+id)
	}
	require.Eventually(t, func() bool {
		open, err := env.store.TenantJobs(context.Background(), tenantA)
		return err == nil && len(open) == 0
	}, 10*time.Second, 200*time.Millisecond, "completed jobs give their places back")
	// The waits above read A's jobs (expensive requests): a refusal by the
	// per-second limit is retried after its Retry-After, as a client is
	// told to; the job cap must not refuse it.
	var retryAfter string
	for try := 0; ; try++ {
		status, retryAfter, job, err = postReplay(keyA, map[string]any{"event_type": "order.created"})
		require.NoError(t, err)
		if status != http.StatusTooManyRequests || !strings.Contains(fmt.Sprint(job["detail"]), "expensive requests a second") || try == 5 {
			break
		}
		require.Equal(t, "1", retryAfter)
		time.Sleep(time.Second)
	}
	require.Equal(t, http.StatusAccepted, status, "A may replay again once its jobs completed: %v", job)
	waitJob(t, keyA, "/v1/replays/"+job["id"].(string))
}

// A job whose message was lost (the state a purged jobs queue leaves: a
// job recorded queued, no message for it) does not stay queued: the
// recovery, which a schedule asks for every five minutes and this test asks
// for at once, sends its message again once it has been idle an hour, and
// the job completes and gives its place back.
func TestLostReplayJobIsRecovered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tenantID, key := apiTenant(t, "lost_job")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	ids := deadEvents(t, tenantID, ep, 3, "order.created")
	up.Store(true)

	// Recorded two hours ago, as the API records a job, and its message lost.
	past := store.New(env.ddb, env.out.StateTableName)
	past.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	job := &domain.Job{JobID: fmt.Sprintf("rj_lost_%d", time.Now().UnixNano()), TenantID: tenantID, Kind: domain.KindIDs,
		Args: &replay.IDs{IDs: ids}, Status: domain.StatusQueued}
	require.NoError(t, past.CreateJob(ctx, job, jobs.DefaultMaxOpenJobs))
	open, err := env.store.TenantJobs(ctx, tenantID)
	require.NoError(t, err)
	require.Equal(t, []string{job.JobID}, open)

	body := `{"recover":true}`
	_, err = env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &env.out.ReplayOpsQueueURL, MessageBody: &body})
	require.NoError(t, err)
	done := waitJob(t, key, "/v1/replays/"+job.JobID)
	require.EqualValues(t, 3, done["replayed"], "%v", done)
	for _, id := range ids {
		waitDelivery(t, id, 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
	open, err = env.store.TenantJobs(ctx, tenantID)
	require.NoError(t, err)
	require.Empty(t, open)
}

// The jobs' store contract on the real table: a tenant's open jobs are
// bounded under concurrent creation, released once and harmlessly twice,
// and listed while idle; the sweep is claimed once per gap.
func TestJobStoreAgainstLocalCloud(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := env.store
	tenantID := fmt.Sprintf("t_jobs_%d", time.Now().UnixNano())

	t.Run("at most limit open jobs, however many creations race", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 10)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.CreateJob(ctx, &domain.Job{JobID: fmt.Sprintf("%s_%d", tenantID, i), TenantID: tenantID, Kind: domain.KindFilter, Status: domain.StatusQueued}, 3)
			})
		}
		wg.Wait()
		created := 0
		for _, err := range errs {
			if err == nil {
				created++
				continue
			}
			require.ErrorIs(t, err, store.ErrTooManyJobs)
		}
		require.Equal(t, 3, created)
		open, err := s.TenantJobs(ctx, tenantID)
		require.NoError(t, err)
		require.Len(t, open, 3)
		for i, err := range errs {
			_, gerr := s.Job(ctx, fmt.Sprintf("%s_%d", tenantID, i))
			if err == nil {
				require.NoError(t, gerr)
			} else {
				require.ErrorIs(t, gerr, store.ErrNotFound, "a refused job is not recorded")
			}
		}

		require.NoError(t, s.ReleaseJob(ctx, tenantID, open[0]))
		require.NoError(t, s.ReleaseJob(ctx, tenantID, open[0]), "twice is harmless")
		require.NoError(t, s.ReleaseJob(ctx, "t_nobody", "rj_none"), "so is a tenant with none")
		left, err := s.TenantJobs(ctx, tenantID)
		require.NoError(t, err)
		require.ElementsMatch(t, open[1:], left)
		for _, id := range left {
			require.NoError(t, s.ReleaseJob(ctx, tenantID, id))
		}
		left, err = s.TenantJobs(ctx, tenantID)
		require.NoError(t, err)
		require.Empty(t, left)
		require.NoError(t, s.ReleaseJob(ctx, tenantID, open[1]), "released from an empty set: harmless")
		require.NoError(t, s.CreateJob(ctx, &domain.Job{JobID: tenantID + "_again", TenantID: tenantID, Kind: domain.KindFilter}, 3))
		err = s.CreateJob(ctx, &domain.Job{JobID: tenantID + "_again", TenantID: tenantID + "_other", Kind: domain.KindFilter}, 3)
		require.ErrorIs(t, err, store.ErrConflict, "an existing id is a conflict, not a second job")
	})

	t.Run("idle open jobs are listed; completed ones are not", func(t *testing.T) {
		past := store.New(env.ddb, env.out.StateTableName)
		past.Now = func() time.Time { return time.Now().Add(-3 * time.Hour) }
		idle := &domain.Job{JobID: tenantID + "_idle", TenantID: tenantID, Kind: domain.KindFilter, Status: domain.StatusRunning}
		require.NoError(t, past.SaveJob(ctx, idle))
		finished := &domain.Job{JobID: tenantID + "_finished", TenantID: tenantID, Kind: domain.KindFilter, Status: domain.StatusCompleted}
		finished.CompletedAt = ptrTime(time.Now().Add(-3 * time.Hour))
		require.NoError(t, past.SaveJob(ctx, finished))
		fresh := &domain.Job{JobID: tenantID + "_fresh", TenantID: tenantID, Kind: domain.KindFilter, Status: domain.StatusRunning}
		require.NoError(t, s.SaveJob(ctx, fresh))
		var ids []string
		require.Eventually(t, func() bool {
			jobs, err := s.IdleJobs(ctx, time.Now().Add(-time.Hour), 1000)
			if err != nil {
				return false
			}
			ids = ids[:0]
			for _, j := range jobs {
				ids = append(ids, j.JobID)
			}
			return slices.Contains(ids, idle.JobID)
		}, 10*time.Second, 200*time.Millisecond)
		require.NotContains(t, ids, finished.JobID)
		require.NotContains(t, ids, fresh.JobID)
		require.NoError(t, s.SaveJob(ctx, idle), "saved now: no longer idle")
		require.Eventually(t, func() bool {
			jobs, err := s.IdleJobs(ctx, time.Now().Add(-time.Hour), 1000)
			if err != nil {
				return false
			}
			for _, j := range jobs {
				if j.JobID == idle.JobID {
					return false
				}
			}
			return true
		}, 10*time.Second, 200*time.Millisecond)
	})

	t.Run("one sweep per gap", func(t *testing.T) {
		ok, err := s.ClaimSweep(ctx, 0)
		require.NoError(t, err)
		require.True(t, ok, "no gap: always")
		ok, err = s.ClaimSweep(ctx, 10*time.Second)
		require.NoError(t, err)
		require.False(t, ok, "one began within the gap")
	})
}

func ptrTime(t time.Time) *time.Time { return &t }
