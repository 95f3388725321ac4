package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// metrics reads the metrics route with query q as key.
func (e *env) metrics(key string, q url.Values) api.MetricsView {
	e.tb.Helper()
	rec := e.do("GET", "/v1/metrics/attempts?"+q.Encode(), key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code, rec.Body.String())
	return decodeJSON[api.MetricsView](e.tb, rec)
}

func TestMetricsAcrossEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	a, b := e.createEndpoint(key, nil), e.createEndpoint(key, nil)
	now := e.clock.Now()
	hour := domain.StatsHour(now)
	e.addStats(a.ID, now, func(st *domain.AttemptStats) {
		for range 6 {
			st.Count(domain.ClassDelivered, 20*time.Millisecond, now, 200, "")
		}
		st.Count(domain.ClassHTTP5xx, 90*time.Millisecond, now, 500, "http_500")
	})
	e.addStats(b.ID, now, func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, 20*time.Millisecond, now, 200, "")
		st.Count(domain.ClassHTTP4xx, 5*time.Millisecond, now, 404, "http_404")
	})
	e.addStats(b.ID, now.Add(-3*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassTimeout, 10*time.Second, now.Add(-3*time.Hour), 0, "timeout")
	})
	e.addStats(a.ID, now.Add(-30*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, time.Millisecond, now.Add(-30*time.Hour), 200, "")
	})

	got := e.metrics(key, url.Values{"group_by": {"endpoint"}})
	require.True(t, got.Until.Equal(now) && got.Since.Equal(now.Add(-24*time.Hour)), "default: the last 24 h")
	require.Equal(t, "hour", got.Granularity)
	require.ElementsMatch(t, []string{a.ID, b.ID}, got.EndpointIDs)
	require.Empty(t, got.NextCursor)
	require.Equal(t, int64(10), got.Totals.Attempts, "the hour 30 h ago is out of the default range")
	require.Equal(t, int64(7), got.Totals.Delivered)
	require.Equal(t, api.FailureCountsView{HTTP5xx: 1, HTTP4xx: 1, Timeout: 1}, got.Totals.Failures)
	require.Equal(t, 0.7, *got.Totals.SuccessRate)
	require.GreaterOrEqual(t, *got.Totals.LatencyMS.P99, 7000.0, "the histograms are merged: the 10 s timeout is the slowest")
	require.Len(t, got.Series, 2)
	require.True(t, got.Series[0].Start.Equal(hour.Add(-3*time.Hour)), "oldest first")
	require.Equal(t, int64(1), got.Series[0].Failures.Timeout)
	require.True(t, got.Series[1].Start.Equal(hour))
	require.Equal(t, int64(9), got.Series[1].Attempts, "both endpoints' current hours added")
	require.Len(t, got.Groups, 2)
	byEP := map[string]api.MetricsGroupView{}
	for _, g := range got.Groups {
		byEP[g.EndpointID] = g
	}
	require.Equal(t, int64(7), byEP[a.ID].Attempts)
	require.Equal(t, api.FailureCountsView{HTTP5xx: 1}, byEP[a.ID].Failures)
	require.Equal(t, int64(3), byEP[b.ID].Attempts)
	require.InDelta(t, 0.3333, *byEP[b.ID].SuccessRate, 0.0001)

	got = e.metrics(key, url.Values{"group_by": {"status_class"}})
	classes := map[string]int64{}
	for _, g := range got.Groups {
		classes[g.StatusClass] = g.Attempts
		require.Nil(t, g.LatencyMS.P95, "latency is not counted by class")
	}
	require.Equal(t, map[string]int64{"delivered": 7, "http_5xx": 1, "http_4xx": 1, "timeout": 1}, classes)
	require.Equal(t, "delivered", got.Groups[0].StatusClass, "delivered first, then the failure classes")

	got = e.metrics(key, url.Values{"endpoint_id": {b.ID}})
	require.Equal(t, []string{b.ID}, got.EndpointIDs)
	require.Equal(t, int64(3), got.Totals.Attempts)
	require.Empty(t, got.Groups, "no group_by, no groups")
}

func TestMetricsByDay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	now := e.clock.Now()
	until := domain.StatsHour(now).Add(time.Hour)
	since := until.Add(-7 * 24 * time.Hour)
	for _, ago := range []time.Duration{0, 23 * time.Hour, 24 * time.Hour, 6*24*time.Hour + 23*time.Hour, 8 * 24 * time.Hour} {
		at := now.Add(-ago)
		e.addStats(ep.ID, at, func(st *domain.AttemptStats) { st.Count(domain.ClassDelivered, time.Millisecond, at, 200, "") })
	}
	got := e.metrics(key, url.Values{"since": {since.Format(time.RFC3339)}, "until": {until.Format(time.RFC3339)}, "granularity": {"day"}})
	require.Equal(t, "day", got.Granularity)
	require.Equal(t, int64(4), got.Totals.Attempts, "8 days ago is before since")
	require.Len(t, got.Series, 3)
	require.True(t, got.Series[0].Start.Equal(since), "periods of 24 hours from since")
	require.Equal(t, int64(1), got.Series[0].Attempts)
	require.True(t, got.Series[1].Start.Equal(until.Add(-48*time.Hour)))
	require.Equal(t, int64(1), got.Series[1].Attempts, "24 h ago is in the day before the last")
	require.True(t, got.Series[2].Start.Equal(until.Add(-24*time.Hour)))
	require.Equal(t, int64(2), got.Series[2].Attempts, "now and 23 h ago are in the last 24 hours")

	mid := since.Add(30 * time.Minute)
	got = e.metrics(key, url.Values{"since": {mid.Format(time.RFC3339)}, "until": {until.Format(time.RFC3339)}, "granularity": {"day"}})
	require.Equal(t, int64(3), got.Totals.Attempts, "an hour starting before since is out")
	first := since.Add(time.Hour)
	require.True(t, got.Series[len(got.Series)-1].Start.Equal(first.Add(6*24*time.Hour)), "days count from the first whole hour: %v", got.Series)
}

func TestMetricsPagesTheEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	now := e.clock.Now()
	for range api.MaxMetricsEndpoints + 1 {
		ep := e.createEndpoint(key, nil)
		e.addStats(ep.ID, now, func(st *domain.AttemptStats) { st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "") })
	}
	first := e.metrics(key, url.Values{})
	require.Len(t, first.EndpointIDs, api.MaxMetricsEndpoints)
	require.Equal(t, int64(api.MaxMetricsEndpoints), first.Totals.Attempts)
	require.NotEmpty(t, first.NextCursor)
	rest := e.metrics(key, url.Values{"cursor": {first.NextCursor}})
	require.Len(t, rest.EndpointIDs, 1)
	require.NotContains(t, first.EndpointIDs, rest.EndpointIDs[0])
	require.Equal(t, int64(1), rest.Totals.Attempts)
	require.Empty(t, rest.NextCursor)
}

// Tenant B's metrics never count tenant A's attempts, and B cannot read
// A's endpoint by id.
func TestMetricsTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA := e.newTenant("acme")
	keyB := e.newTenant("globex")
	epA := e.createEndpoint(keyA, nil)
	epB := e.createEndpoint(keyB, nil)
	now := e.clock.Now()
	e.addStats(epA.ID, now, func(st *domain.AttemptStats) { st.Count(domain.ClassHTTP5xx, time.Millisecond, now, 500, "http_500") })
	var st domain.AttemptStats
	st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "")
	require.NoError(t, e.store.AddEndpointStats(context.Background(), "globex", epB.ID, now, st))

	got := e.metrics(keyB, url.Values{"group_by": {"endpoint"}})
	require.Equal(t, []string{epB.ID}, got.EndpointIDs)
	require.Equal(t, int64(1), got.Totals.Attempts)
	require.Zero(t, got.Totals.Failures.HTTP5xx)
	p := requireProblem(t, e.do("GET", "/v1/metrics/attempts?endpoint_id="+epA.ID, keyB, nil), http.StatusNotFound)
	require.Contains(t, p.Detail, "not found")
	got = e.metrics(keyA, url.Values{})
	require.Equal(t, []string{epA.ID}, got.EndpointIDs)
	require.Equal(t, int64(1), got.Totals.Failures.HTTP5xx)
}

func TestMetricsRefusesBadQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	now := e.clock.Now()
	for name, tc := range map[string]struct {
		query string
		field string
	}{
		"not a time":           {"since=yesterday", "since"},
		"since after until":    {"since=" + now.Format(time.RFC3339) + "&until=" + now.Add(-time.Hour).Format(time.RFC3339), "since"},
		"over 7 days":          {"since=" + now.Add(-7*24*time.Hour-time.Second).Format(time.RFC3339), "since"},
		"granularity":          {"granularity=minute", "granularity"},
		"group_by":             {"group_by=eventtype", "group_by"},
		"empty group_by":       {"group_by=", "group_by"},
		"cursor with endpoint": {"endpoint_id=" + ep.ID + "&cursor=abc", "cursor"},
		"not a cursor":         {"cursor=" + url.QueryEscape("{not a cursor}"), "cursor"},
	} {
		t.Run(name, func(t *testing.T) {
			p := requireProblem(t, e.do("GET", "/v1/metrics/attempts?"+tc.query, key, nil), http.StatusBadRequest)
			require.Equal(t, []string{tc.field}, fields(p))
			if name == "over 7 days" {
				require.Contains(t, p.Detail, "the limit is 7 days")
			}
			if name == "group_by" {
				require.Contains(t, p.Detail, "must be endpoint, status_class or event_type")
			}
		})
	}
	e.metrics(key, url.Values{"since": {now.Add(-7 * 24 * time.Hour).Format(time.RFC3339)}})
	p := requireProblem(t, e.do("GET", "/v1/metrics/attempts?endpoint_id=ep_missing", key, nil), http.StatusNotFound)
	require.Equal(t, `endpoint "ep_missing" not found`, p.Detail)
}

// addTypeStats counts attempts of tenant's endpoint for events of eventType.
func (e *env) addTypeStats(tenant, endpointID, eventType string, at time.Time, count func(st *domain.AttemptStats)) {
	e.tb.Helper()
	var st domain.AttemptStats
	count(&st)
	require.NoError(e.tb, e.store.AddEndpointTypeStats(context.Background(), tenant, endpointID, eventType, at, st))
}

// group_by=event_type adds the endpoints' counters by type up over the
// endpoints the request covers and the range: one group a type, the most
// attempted first, with its latency percentiles; any string the producer
// chose as a type comes back as it was.
func TestMetricsByEventType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	a, b := e.createEndpoint(key, nil), e.createEndpoint(key, nil)
	now := e.clock.Now()
	const hostile = `<img src=x onerror=alert(1)>"&`
	e.addTypeStats("acme", a.ID, "order.created", now, func(st *domain.AttemptStats) {
		for range 3 {
			st.Count(domain.ClassDelivered, 20*time.Millisecond, now, 200, "")
		}
		st.Count(domain.ClassHTTP5xx, 90*time.Millisecond, now, 500, "http_500")
	})
	e.addTypeStats("acme", b.ID, "order.created", now.Add(-2*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, 20*time.Millisecond, now, 200, "")
	})
	e.addTypeStats("acme", b.ID, "order.paid", now, func(st *domain.AttemptStats) {
		st.Count(domain.ClassTimeout, 10*time.Second, now, 0, "timeout")
		st.Count(domain.ClassTimeout, 10*time.Second, now, 0, "timeout")
	})
	e.addTypeStats("acme", a.ID, hostile, now, func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "")
	})
	e.addTypeStats("acme", a.ID, "order.old", now.Add(-30*time.Hour), func(st *domain.AttemptStats) {
		st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "")
	})

	got := e.metrics(key, url.Values{"group_by": {"event_type"}})
	require.Equal(t, "event_type", got.GroupBy)
	require.Len(t, got.Groups, 3, "order.old is out of the default range: %+v", got.Groups)
	created, paid, odd := got.Groups[0], got.Groups[1], got.Groups[2]
	require.Equal(t, "order.created", created.EventType, "the most attempted first")
	require.Equal(t, int64(5), created.Attempts, "both endpoints' and both hours'")
	require.Equal(t, int64(4), created.Delivered)
	require.Equal(t, api.FailureCountsView{HTTP5xx: 1}, created.Failures)
	require.Equal(t, 0.8, *created.SuccessRate)
	require.NotNil(t, created.LatencyMS.P50)
	require.GreaterOrEqual(t, *created.LatencyMS.P95, 20.0)
	require.Empty(t, created.EndpointID)
	require.Empty(t, created.StatusClass)
	require.Equal(t, "order.paid", paid.EventType)
	require.Equal(t, api.FailureCountsView{Timeout: 2}, paid.Failures)
	require.GreaterOrEqual(t, *paid.LatencyMS.P95, 7000.0)
	require.Equal(t, hostile, odd.EventType, "returned as it was written")

	got = e.metrics(key, url.Values{"group_by": {"event_type"}, "endpoint_id": {b.ID}})
	require.Equal(t, []string{"order.paid", "order.created"}, []string{got.Groups[0].EventType, got.Groups[1].EventType}, "b's only")
	require.Equal(t, int64(1), got.Groups[1].Attempts)

	since := now.Add(-time.Hour).Format(time.RFC3339)
	got = e.metrics(key, url.Values{"group_by": {"event_type"}, "endpoint_id": {b.ID}, "since": {since}})
	require.Len(t, got.Groups, 1, "the hour 2 h ago is out of the range")
	require.Equal(t, "order.paid", got.Groups[0].EventType)

	got = e.metrics(key, url.Values{"group_by": {"event_type"}, "since": {now.Add(-48 * time.Hour).Format(time.RFC3339)}, "until": {now.Add(-47 * time.Hour).Format(time.RFC3339)}})
	require.NotNil(t, got.Groups)
	require.Empty(t, got.Groups, "no attempts, no groups")
}

// The counters by type are read for group_by=event_type only, once per
// endpoint covered; the other groupings cost what they did.
func TestMetricsReadTheTypesForEventTypeOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	e.createEndpoint(key, nil)
	e.createEndpoint(key, nil)
	reads := func() int {
		e.store.mu.Lock()
		defer e.store.mu.Unlock()
		return e.store.typeStatsReads
	}
	for _, g := range []string{"", "endpoint", "status_class"} {
		q := url.Values{}
		if g != "" {
			q.Set("group_by", g)
		}
		e.metrics(key, q)
	}
	require.Zero(t, reads())
	e.metrics(key, url.Values{"group_by": {"event_type"}})
	require.Equal(t, 2, reads(), "one read of each endpoint's")
}

// Tenant B's event types never appear in tenant A's answer, even for an
// endpoint id and type both tenants use.
func TestMetricsByEventTypeTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA, keyB := e.newTenant("acme"), e.newTenant("globex")
	epA := e.createEndpoint(keyA, nil)
	epB := e.createEndpoint(keyB, nil)
	now := e.clock.Now()
	delivered := func(st *domain.AttemptStats) { st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "") }
	e.addTypeStats("acme", epA.ID, "a.only", now, delivered)
	e.addTypeStats("globex", epB.ID, "b.secret", now, delivered)
	e.addTypeStats("globex", epA.ID, "b.under.a.id", now, delivered)
	e.addTypeStats("globex", epB.ID, "a.only", now, delivered)

	got := e.metrics(keyA, url.Values{"group_by": {"event_type"}})
	require.Len(t, got.Groups, 1)
	require.Equal(t, "a.only", got.Groups[0].EventType)
	require.Equal(t, int64(1), got.Groups[0].Attempts, "B's attempts of the same type are B's")
	got = e.metrics(keyB, url.Values{"group_by": {"event_type"}})
	types := []string{}
	for _, g := range got.Groups {
		types = append(types, g.EventType)
	}
	require.ElementsMatch(t, []string{"a.only", "b.secret"}, types, "B's endpoints only")
	requireProblem(t, e.do("GET", "/v1/metrics/attempts?group_by=event_type&endpoint_id="+epA.ID, keyB, nil), http.StatusNotFound)
}

// group_by=event_type answers the most attempted types up to the cap, the
// rest summed into one last group naming how many types it holds: however
// many types a tenant's events have, the groups are bounded, and they
// still add up to every type's attempts.
func TestMetricsByEventTypeCapsTheTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Caps.MaxMetricsEventTypes = 3
	key := e.newTenant("acme")
	a := e.createEndpoint(key, nil)
	now := e.clock.Now()
	for i := range 10 { // type.0 attempted once ... type.9 ten times
		e.addTypeStats("acme", a.ID, fmt.Sprintf("type.%d", i), now, func(st *domain.AttemptStats) {
			for range i + 1 {
				st.Count(domain.ClassDelivered, time.Millisecond, now, 200, "")
			}
		})
	}
	got := e.metrics(key, url.Values{"group_by": {"event_type"}})
	require.Len(t, got.Groups, 4, "three types and the rest")
	for i, want := range []string{"type.9", "type.8", "type.7"} {
		require.Equal(t, want, got.Groups[i].EventType)
		require.Zero(t, got.Groups[i].OtherTypes)
	}
	rest := got.Groups[3]
	require.Empty(t, rest.EventType)
	require.Equal(t, 7, rest.OtherTypes)
	require.EqualValues(t, 1+2+3+4+5+6+7, rest.Attempts, "the seven least attempted, summed")
	var sum int64
	for _, g := range got.Groups {
		sum += int64(g.Attempts)
	}
	require.EqualValues(t, 55, sum, "no type's attempts lost to the cap")

	e.srv.Caps.MaxMetricsEventTypes = 10
	got = e.metrics(key, url.Values{"group_by": {"event_type"}})
	require.Len(t, got.Groups, 10, "at the cap: no other group")
	require.Zero(t, got.Groups[9].OtherTypes)
}
