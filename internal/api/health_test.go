package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// addStats writes a batch's counters for an endpoint of tenant acme, as
// the deliver function does.
func (e *env) addStats(endpointID string, at time.Time, count func(st *domain.AttemptStats)) {
	e.tb.Helper()
	var st domain.AttemptStats
	count(&st)
	require.NoError(e.tb, e.store.AddEndpointStats(context.Background(), "acme", endpointID, at, st))
}

func TestEndpointStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	now := e.clock.Now()
	hour := domain.StatsHour(now)
	e.addStats(ep.ID, now, func(st *domain.AttemptStats) {
		for range 8 {
			st.Count(domain.ClassDelivered, 20*time.Millisecond, now, 200, "")
		}
		st.Count(domain.ClassHTTP5xx, 90*time.Millisecond, now, 500, "http_500")
		st.Count(domain.ClassHTTP429, 4*time.Millisecond, now, 429, "http_429")
	})
	e.addStats(ep.ID, now.Add(-3*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassTimeout, 10*time.Second, now.Add(-3*time.Hour), 0, "timeout")
	})
	e.addStats(ep.ID, now.Add(-30*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, time.Millisecond, now.Add(-30*time.Hour), 200, "")
	})

	rec := e.do("GET", "/v1/endpoints/"+ep.ID+"/stats", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decodeJSON[api.EndpointStatsView](t, rec)
	require.Equal(t, ep.ID, got.EndpointID)
	require.True(t, got.Until.Equal(now) && got.Since.Equal(now.Add(-24*time.Hour)), "default: the last 24 h")
	require.Len(t, got.Buckets, 2, "the hour 30 h ago is out of the default range")
	require.True(t, got.Buckets[0].Start.Equal(hour.Add(-3*time.Hour)), "oldest first")
	require.Equal(t, int64(1), got.Buckets[0].Failures.Timeout)
	cur := got.Buckets[1]
	require.Equal(t, int64(10), cur.Attempts)
	require.Equal(t, int64(8), cur.Delivered)
	require.Equal(t, api.FailureCountsView{HTTP5xx: 1, HTTP429: 1}, cur.Failures)
	require.Equal(t, 0.8, *cur.SuccessRate)
	require.InDelta(t, 17.5, *cur.LatencyMS.P50, 2.5, "20 ms is in the 15-20 ms bucket")
	require.InDelta(t, 85, *cur.LatencyMS.P99, 15, "90 ms is in the 70-100 ms bucket")

	tot := got.Totals
	require.Equal(t, int64(11), tot.Attempts)
	require.Equal(t, int64(8), tot.Delivered)
	require.Equal(t, api.FailureCountsView{Timeout: 1, HTTP5xx: 1, HTTP429: 1}, tot.Failures)
	require.Equal(t, 0.7273, *tot.SuccessRate)
	require.GreaterOrEqual(t, *tot.LatencyMS.P99, 7000.0, "the 10 s timeout is the slowest")

	q := url.Values{"since": {now.Add(-48 * time.Hour).Format(time.RFC3339)}, "until": {hour.Add(-2 * time.Hour).Format(time.RFC3339)}}
	got = decodeJSON[api.EndpointStatsView](t, e.do("GET", "/v1/endpoints/"+ep.ID+"/stats?"+q.Encode(), key, nil))
	require.Len(t, got.Buckets, 2, "since and until pick the hours 30 h and 3 h ago")
	require.Equal(t, int64(2), got.Totals.Attempts)

	q = url.Values{"since": {now.Add(-time.Minute).Format(time.RFC3339)}, "until": {now.Format(time.RFC3339)}}
	got = decodeJSON[api.EndpointStatsView](t, e.do("GET", "/v1/endpoints/"+ep.ID+"/stats?"+q.Encode(), key, nil))
	require.NotNil(t, got.Buckets)
	require.Empty(t, got.Buckets, "no hour starts in the last minute")
	require.Zero(t, got.Totals.Attempts)
	require.Nil(t, got.Totals.SuccessRate)
	require.Nil(t, got.Totals.LatencyMS.P95)
}

func TestEndpointStatsRefusesBadRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	now := e.clock.Now()
	for name, tc := range map[string]struct {
		query string
		field string
	}{
		"not a time":        {"since=yesterday", "since"},
		"bad until":         {"until=2026-13-01T00:00:00Z", "until"},
		"empty":             {"since=", "since"},
		"twice":             {"until=" + now.Format(time.RFC3339) + "&until=" + now.Format(time.RFC3339), "until"},
		"since after until": {"since=" + now.Format(time.RFC3339) + "&until=" + now.Add(-time.Hour).Format(time.RFC3339), "since"},
		"since is until":    {"since=" + now.Format(time.RFC3339) + "&until=" + now.Format(time.RFC3339), "since"},
		"over 31 days":      {"since=" + now.Add(-32*24*time.Hour).Format(time.RFC3339), "since"},
		"year 10000":        {"until=" + url.QueryEscape("9999-12-31T23:00:00-05:00"), "until"},
	} {
		t.Run(name, func(t *testing.T) {
			p := requireProblem(t, e.do("GET", "/v1/endpoints/"+ep.ID+"/stats?"+tc.query, key, nil), http.StatusBadRequest)
			require.Equal(t, []string{tc.field}, fields(p))
		})
	}
	p := requireProblem(t, e.do("GET", "/v1/endpoints/ep_missing/stats", key, nil), http.StatusNotFound)
	require.Equal(t, `endpoint "ep_missing" not found`, p.Detail)
}

func TestEndpointHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	now := e.clock.Now()
	// A success 3 days ago, then only failures in the last day.
	e.addStats(ep.ID, now.Add(-72*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, 30*time.Millisecond, now.Add(-72*time.Hour), 200, "")
	})
	e.addStats(ep.ID, now.Add(-2*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassHTTP5xx, 40*time.Millisecond, now.Add(-2*time.Hour), 502, "http_502")
		st.Count(domain.ClassNetwork, 3*time.Millisecond, now.Add(-2*time.Hour+time.Second), 0, "connection_refused")
	})
	for range 2 {
		_, err := e.store.RecordEndpointHealth(context.Background(), "acme", ep.ID, false, 1, store.HealthThresholds{DisableAfter: 100})
		require.NoError(t, err)
	}
	require.Equal(t, http.StatusOK, e.do("POST", "/v1/endpoints/"+ep.ID+"/disable", key, nil).Code)

	h := e.getEndpointWithHealth(key, ep.ID).Health
	require.NotNil(t, h)
	require.Equal(t, int64(2), h.Attempts24h)
	require.Equal(t, 0.0, *h.SuccessRate24h)
	require.InDelta(t, 40, *h.P95LatencyMS24h, 10)
	require.Equal(t, 2, h.ConsecutiveFailures)
	require.True(t, h.LastSuccessAt.Equal(now.Add(-72*time.Hour)), "found beyond the last 24 h")
	require.Equal(t, &api.LastFailureView{At: now.Add(-2*time.Hour + time.Second).UTC(), Error: "connection_refused"}, h.LastFailure, "no status: no answer came")
	require.Equal(t, domain.DisabledByTenant, *h.DisabledReason)
	stored, _ := e.store.endpoint("acme", ep.ID)
	require.Equal(t, stored.DisabledAt, h.DisabledAt, "as the store has it")

	require.Equal(t, http.StatusOK, e.do("POST", "/v1/endpoints/"+ep.ID+"/enable", key, nil).Code)
	h = e.getEndpointWithHealth(key, ep.ID).Health
	require.Nil(t, h.DisabledAt)
	require.Nil(t, h.DisabledReason)

	list := decodeJSON[struct{ Data []api.EndpointView }](t, e.do("GET", "/v1/endpoints", key, nil))
	require.Nil(t, list.Data[0].Health, "the list leaves health out")
}
