package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// Concurrent starts of the same kind of job, through the jobs starter on
// the in-memory store, answer only what docs/openapi.yaml documents, never
// a 500: the operator's redrive a job each (202), a tenant's replay a job
// each up to its three places (202) and 429 past them, an erasure the one
// job (202). A start that loses a race on its job's record (the store's
// ErrConflict; on AWS, a conditional put the SDK sent twice found its own
// item) answers 409 problem+json, having started nothing.
func TestConcurrentJobStartsNeverAnswer500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Jobs = &jobs.Starter{Store: e.store, Queue: &quietQueue{}, Now: e.clock.Now}
	e.h = e.srv.Handler()
	key := e.newTenant("acme")
	e.newTenant("gone")

	const n = 12
	starts := func(t *testing.T, method, path, key, body string) []*httptest.ResponseRecorder {
		t.Helper()
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { recs[i] = e.do(method, path, key, body) })
		}
		wg.Wait()
		return recs
	}
	count := func(recs []*httptest.ResponseRecorder) map[int]int {
		m := map[int]int{}
		for _, r := range recs {
			m[r.Code]++
		}
		return m
	}

	t.Run("operator redrive", func(t *testing.T) {
		recs := starts(t, "POST", "/v1/admin/dlq/redrive", operatorKey, "")
		require.Equal(t, map[int]int{http.StatusAccepted: n}, count(recs))
		ids := map[string]bool{}
		for _, r := range recs {
			ids[decodeJSON[api.JobView](t, r).ID] = true
		}
		require.Len(t, ids, n, "a job each")
	})
	t.Run("tenant replay", func(t *testing.T) {
		recs := starts(t, "POST", "/v1/dlq/replay", key, `{"event_type":"order.created"}`)
		require.Equal(t, map[int]int{http.StatusAccepted: jobs.DefaultMaxOpenJobs, http.StatusTooManyRequests: n - jobs.DefaultMaxOpenJobs}, count(recs))
		for _, r := range recs {
			if r.Code == http.StatusTooManyRequests {
				requireProblem(t, r, http.StatusTooManyRequests)
			}
		}
	})
	t.Run("erasure", func(t *testing.T) {
		recs := starts(t, "DELETE", "/v1/admin/tenants/gone", operatorKey, "")
		require.Equal(t, map[int]int{http.StatusAccepted: n}, count(recs))
		for _, r := range recs {
			require.Equal(t, domain.ErasureJobID("gone"), decodeJSON[api.JobView](t, r).ID, "the one job")
		}
	})
	t.Run("a start that loses a race", func(t *testing.T) {
		e.srv.Jobs = conflicting{}
		e.h = e.srv.Handler()
		for _, rt := range []struct{ method, path, key, body string }{
			{"POST", "/v1/admin/dlq/redrive", operatorKey, ""},
			{"POST", "/v1/dlq/replay", key, `{"event_type":"order.created"}`},
		} {
			recs := starts(t, rt.method, rt.path, rt.key, rt.body)
			require.Equal(t, map[int]int{http.StatusConflict: n}, count(recs), rt.path)
			p := requireProblem(t, recs[0], http.StatusConflict)
			require.Contains(t, p.Detail, "nothing was started: send the request again")
		}
	})
}

// conflicting is a JobStarter whose every start loses a race.
type conflicting struct{}

func (conflicting) Start(_ context.Context, j *domain.Job) error {
	return fmt.Errorf("job %s: %w", j.JobID, store.ErrConflict)
}
