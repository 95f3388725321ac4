package api_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
)

// limitStore is the test store with the per-tenant limit's calls counted,
// an error for them on demand, and a listing that blocks until its
// request's context ends (a request that would run forever).
type limitStore struct {
	*testStore
	takes   atomic.Int64
	takeErr error
	block   atomic.Bool
}

func (l *limitStore) TakeAPIRequest(ctx context.Context, tenantID string, at time.Time, limit int) (bool, error) {
	l.takes.Add(1)
	if l.takeErr != nil {
		return false, l.takeErr
	}
	return l.testStore.TakeAPIRequest(ctx, tenantID, at, limit)
}

func (l *limitStore) ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	if l.block.Load() {
		<-ctx.Done()
		return nil, "", ctx.Err()
	}
	return l.testStore.ListEndpoints(ctx, tenantID, limit, cursor)
}

// limitedEnv is newEnv with the per-tenant limit on (rate a second) over
// a limitStore, tenants "noisy" and "quiet" with a key each and an
// endpoint of noisy's.
func limitedEnv(t *testing.T, rate int, budget time.Duration) (e *env, ls *limitStore, noisy, quiet, endpointID string) {
	e = newEnv(t)
	noisy, quiet = e.newTenant("noisy"), e.newTenant("quiet")
	endpointID = e.createEndpoint(noisy, nil).ID
	ls = &limitStore{testStore: e.store}
	e.srv.Store, e.srv.TenantExpensiveRate, e.srv.ExpensiveBudget = ls, rate, budget
	e.h = e.srv.Handler()
	return e, ls, noisy, quiet, endpointID
}

// A tenant past its expensive requests of the second gets 429 with
// Retry-After (the seconds to the next window) and a problem naming the
// limit; its cheap requests (one endpoint, the session, publishing) and
// the operator's routes go on; another tenant's expensive requests go on;
// the next second it is admitted again.
func TestTenantLimitRefusesTheFloodOnly(t *testing.T) {
	t.Parallel()
	e, _, noisy, quiet, ep := limitedEnv(t, 3, 0)
	e.clock.Advance(200 * time.Millisecond)
	for i := range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", noisy, nil).Code, "request %d of 3", i)
	}
	for _, path := range []string{"/v1/endpoints", "/v1/dlq", "/v1/metrics/attempts?group_by=event_type", "/v1/jwks.json", "/v1/deliveries"} {
		rec := e.do("GET", path, noisy, nil)
		p := requireProblem(t, rec, http.StatusTooManyRequests)
		require.Contains(t, p.Detail, "limit of 3 expensive requests a second", path)
		require.Equal(t, "1", rec.Header().Get("Retry-After"), "0.8 s to the next window, rounded up")
		require.Equal(t, api.LimitTenantExpensive, rec.Header().Get(api.LimitHeader), "the console retries this one")
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints/"+ep, noisy, nil).Code, "a cheap read goes on")
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/session", noisy, nil).Code)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/v1/events", noisy, map[string]any{"type": "order.created", "payload": map[string]any{"n": 1}}).Code,
		"publishing goes on")
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/admin/stats", operatorKey, nil).Code, "the operator's routes go on")
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", quiet, nil).Code, "another tenant's window is its own")

	e.clock.Advance(time.Second)
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", noisy, nil).Code, "the next second admits again")
}

// The limit is the tenant's across execution environments: two servers
// (two Lambda instances, each serving one request at a time) sharing the
// table admit, between them, the limit a second and no more; a per-
// instance count would have admitted twice that. And an instance that has
// seen the tenant refused in a window refuses it again in that window
// without a write: a flood costs the table the limit plus one write per
// instance a second.
func TestTenantLimitHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	e, ls, noisy, _, _ := limitedEnv(t, 4, 0)
	other := &api.Server{Store: ls, Now: e.srv.Now, Log: e.srv.Log, Rand: rand.Reader, OperatorKey: operatorKey, TenantExpensiveRate: 4}
	instances := []http.Handler{e.h, other.Handler()}
	admitted := 0
	for i := range 40 {
		e.h = instances[i%2]
		if e.do("GET", "/v1/endpoints", noisy, nil).Code == http.StatusOK {
			admitted++
		}
	}
	require.Equal(t, 4, admitted, "the tenant's limit across both instances")
	require.Equal(t, int64(4+2), ls.takes.Load(), "4 admitted, then one refusal per instance; the rest refused from memory")
}

// An expensive request that runs over its budget is stopped and answered
// 503 with Retry-After, naming the budget, not 500: its execution is
// freed for others. A cheap route has no budget.
func TestExpensiveRequestStopsAtItsBudget(t *testing.T) {
	t.Parallel()
	e, ls, noisy, _, _ := limitedEnv(t, 0, 20*time.Millisecond)
	ls.block.Store(true)
	rec := e.do("GET", "/v1/endpoints", noisy, nil)
	p := requireProblem(t, rec, http.StatusServiceUnavailable)
	require.Contains(t, p.Detail, "time budget of 20ms")
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.NotContains(t, e.logs.String(), `"level":"ERROR"`, "over budget is not an internal error")
}

// A table that cannot count (throttled, unreachable) admits the request:
// the limiter is never why a request fails; the cause is logged.
func TestTenantLimitAdmitsWhenItCannotCount(t *testing.T) {
	t.Parallel()
	e, ls, noisy, _, _ := limitedEnv(t, 1, 0)
	ls.takeErr = errors.New("ProvisionedThroughputExceededException")
	for range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", noisy, nil).Code)
	}
	require.Contains(t, e.logs.String(), "api tenant limit not counted")
}

// The routes that take the limit and the budget, and only those: every
// route whose work the tenant sizes (a listing, metrics, an event's
// lookup, a job or a send the tenant starts, JWKS), and none of the cheap
// ones, POST /v1/events and the operator's among them.
func TestExpensiveRoutes(t *testing.T) {
	t.Parallel()
	var got []string
	for _, rt := range api.Routes() {
		if rt.Expensive {
			require.False(t, rt.Operator, "%s %s: the operator's routes are never limited per tenant", rt.Method, rt.Path)
			got = append(got, rt.Method+" "+rt.Path)
		}
	}
	require.ElementsMatch(t, []string{
		"GET /v1/endpoints", "GET /v1/endpoints/{endpoint_id}/stats", "GET /v1/metrics/attempts",
		"POST /v1/endpoints/{endpoint_id}/cancel-pending", "GET /v1/jwks.json", "GET /v1/deliveries",
		"GET /v1/events/{event_id}/deliveries", "POST /v1/deliveries/{delivery_id}/resend", "GET /v1/events",
		"GET /v1/events/{event_id}", "GET /v1/dlq", "POST /v1/dlq/replay", "POST /v1/replays",
	}, got)
}

// The defaults hold one tenant to 10 of the api function's reserved
// executions (rate × budget, Little's law): half of the 20 it once had, a
// sixth of today's 60.
func TestTenantLimitDefaultsHoldHalfTheFunction(t *testing.T) {
	t.Parallel()
	held := float64(api.DefaultTenantExpensiveRate) * api.DefaultExpensiveBudget.Seconds()
	require.LessOrEqual(t, held, 10.0, "rate %d x budget %s", api.DefaultTenantExpensiveRate, api.DefaultExpensiveBudget)
	require.Equal(t, "5", strconv.Itoa(api.DefaultTenantExpensiveRate))
}
