package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// One tenant cannot hold the api function. The function is one Lambda with
// a reserved concurrency (20 by default) and API Gateway throttles per
// route for every tenant together, so a tenant flooding routes whose work
// it sizes (listings, metrics, event lookups, replays, JWKS) could hold
// every execution, and every other tenant's API and the operator routes
// would fail. Two bounds, on the expensive routes only (Route.Expensive):
//
//   - a rate: at most TenantExpensiveRate (DefaultTenantExpensiveRate, 5)
//     expensive requests a second per tenant, counted across every
//     execution environment in a one-second window item of the state table
//     (APIRates.TakeAPIRequest: one conditional UpdateItem, 1 write unit,
//     per expensive request; none for the others). Past it: 429 with
//     Retry-After and a problem naming the limit.
//   - a time budget: an expensive request runs under a deadline of
//     ExpensiveBudget (DefaultExpensiveBudget, 2 s); one that runs over it
//     is stopped and answered 503 with Retry-After, its execution freed.
//
// Together they bound the executions one tenant's expensive requests hold
// at once: at most rate × budget (10 of the 20 by default; Little's law),
// so the other half stays for everyone else, whatever one tenant sends.
// A per-instance count could not do this: on Lambda an execution
// environment serves one request at a time, so a count kept in one
// instance sees one request, and a flood spreads over every instance.
// What each instance keeps is only a memo of the windows in which it has
// already seen a tenant refused, so that a flood costs the table at most
// the limit plus one write per instance a second, not a write per request.
//
// The cheap routes (one endpoint, one delivery, a job, the session, the
// writes of single items, POST /v1/events) and the operator routes take
// neither: no DynamoDB call is added to them.

// APIRates counts a tenant's expensive requests across the api function's
// execution environments.
type APIRates interface {
	// TakeAPIRequest takes one of the limit requests of tenantID's
	// one-second window holding at: false when the window is full.
	TakeAPIRequest(ctx context.Context, tenantID string, at time.Time, limit int) (bool, error)
}

// The defaults of the per-tenant bounds of expensive routes.
const (
	// DefaultTenantExpensiveRate is the most expensive requests a second a
	// tenant may make (domain.DefaultAPITenantExpensiveRate, 5).
	DefaultTenantExpensiveRate = domain.DefaultAPITenantExpensiveRate
	// DefaultExpensiveBudget is the longest an expensive request may run
	// (domain.DefaultAPIExpensiveBudget, 2 s).
	DefaultExpensiveBudget = domain.DefaultAPIExpensiveBudget
	// expensiveRetryAfter is the Retry-After of a request stopped at its
	// budget, in seconds.
	expensiveRetryAfter = 1
	// refusedMemo is how many (tenant, window) refusals one instance
	// remembers; past it the memo starts again (it only saves writes).
	refusedMemo = 1024
)

// LimitHeader names, on a 429, the limit that refused the request:
// LimitTenantExpensive for the per-tenant limit of expensive requests.
const (
	LimitHeader          = "X-Hookline-Limit"
	LimitTenantExpensive = "tenant-expensive"
)

// tenantRate is Server.TenantExpensiveRate with its default; 0 for none.
func (s *Server) tenantRate() int {
	switch {
	case s.TenantExpensiveRate < 0:
		return 0
	case s.TenantExpensiveRate == 0:
		return DefaultTenantExpensiveRate
	}
	return s.TenantExpensiveRate
}

// expensiveBudget is Server.ExpensiveBudget with its default; 0 for none.
func (s *Server) expensiveBudget() time.Duration {
	switch {
	case s.ExpensiveBudget < 0:
		return 0
	case s.ExpensiveBudget == 0:
		return DefaultExpensiveBudget
	}
	return s.ExpensiveBudget
}

// refusals is one instance's memo of the windows in which a tenant was
// refused: a request in such a window is refused without a write.
type refusals struct {
	mu sync.Mutex
	m  map[string]time.Time // tenant -> its refused window's second
}

func (f *refusals) refused(tenant string, window time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.m[tenant]
	return ok && w.Equal(window)
}

func (f *refusals) remember(tenant string, window time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= refusedMemo {
		f.m = map[string]time.Time{}
	}
	f.m[tenant] = window
}

// admitExpensive decides whether tenant may make an expensive request now:
// nil, or the 429 that refuses it (with Retry-After set on w). A store
// that cannot count (an error) admits the request: the
// limiter is never why a request fails; the error is logged.
func (s *Server) admitExpensive(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	limit := s.tenantRate()
	if limit == 0 || tenant == "" {
		return nil
	}
	now := s.now()
	window := now.UTC().Truncate(time.Second)
	if !s.refused.refused(tenant, window) {
		took, err := s.Store.TakeAPIRequest(r.Context(), tenant, now, limit)
		if err != nil {
			s.log().WarnContext(r.Context(), "api tenant limit not counted", "error", err.Error(), "tenant_id", tenant)
			return nil
		}
		if took {
			return nil
		}
		s.refused.remember(tenant, window)
	}
	wait := window.Add(time.Second).Sub(now)
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	// Tells a client (the console) this 429 is the per-second limit, worth
	// retrying at once after Retry-After, not the limit of open jobs.
	w.Header().Set(LimitHeader, LimitTenantExpensive)
	return problem(http.StatusTooManyRequests,
		"this tenant is over its limit of %d expensive requests a second (listings, metrics, event lookups, replays, JWKS); retry after the seconds Retry-After gives", limit)
}

// withBudget runs an expensive request under its time budget: r's context
// with the deadline, and the function that releases it.
func (s *Server) withBudget(r *http.Request) (*http.Request, context.CancelFunc) {
	budget := s.expensiveBudget()
	if budget == 0 {
		return r, func() {}
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), budget, errOverBudget)
	return r.WithContext(ctx), cancel
}

// errOverBudget is the cause of an expensive request's context ended at
// its budget.
var errOverBudget = errors.New("the request ran over its time budget")

// overBudget is the answer to a request stopped at its budget (503 with
// Retry-After), or nil when r's context did not end at it.
func (s *Server) overBudget(r *http.Request) *Problem {
	if !errors.Is(context.Cause(r.Context()), errOverBudget) {
		return nil
	}
	p := problem(http.StatusServiceUnavailable,
		"the request ran over its time budget of %s and was stopped; narrow it (a smaller limit, a shorter time range, a filter) or retry after the seconds Retry-After gives", s.expensiveBudget())
	p.retryAfter = expensiveRetryAfter * time.Second
	return p
}
