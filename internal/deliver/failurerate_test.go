package deliver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// countingRates passes the failure-rate port's calls to the store and
// counts them by "tenant/endpoint": window reads, and mark writes.
type countingRates struct {
	FailureRates
	mu           sync.Mutex
	reads, marks map[string]int
}

func (c *countingRates) EndpointStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error) {
	c.mu.Lock()
	c.reads[tenantID+"/"+endpointID]++
	c.mu.Unlock()
	return c.FailureRates.EndpointStats(ctx, tenantID, endpointID, since, until)
}

func (c *countingRates) MarkEndpointDegraded(ctx context.Context, tenantID, endpointID string, degraded bool) (store.DegradedEffect, error) {
	c.mu.Lock()
	c.marks[tenantID+"/"+endpointID]++
	c.mu.Unlock()
	return c.FailureRates.MarkEndpointDegraded(ctx, tenantID, endpointID, degraded)
}

func (c *countingRates) counts() (reads, marks map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clone(c.reads), clone(c.marks)
}

func clone(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// alertFixture is a fixture whose ep_1 answers status (settable), with the
// failure-rate port counted, the counters written at every batch's end,
// and the consecutive-failure events off (so that only the rate speaks):
// ep_1 has alert, when it is not nil.
func alertFixture(t *testing.T, alert *domain.FailureRateAlert) (*fixture, *atomic.Int32, *countingRates, *notices) {
	t.Helper()
	var status atomic.Int32
	status.Store(500)
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	n := f.withNotices()
	f.h.Config.FailingAfter, f.h.Config.DisableAfter = -1, -1
	e := f.store.endpoint("t1/ep_1")
	e.FailureRateAlert = alert
	f.store.setEndpoint(e)
	c := &countingRates{FailureRates: f.store, reads: map[string]int{}, marks: map[string]int{}}
	f.withPorts(func(p *testPorts) { p.FailureRates = c })
	return f, &status, c, n
}

// degradedPayload is the payload of the i-th event raised.
func degradedPayload(t *testing.T, n *notices, i int) domain.OpEndpointEvent {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	require.Equal(t, domain.OpEndpointDegraded, n.events[i].Type)
	return n.events[i].Payload.(domain.OpEndpointEvent)
}

// An endpoint whose window's failure rate reaches its alert's threshold
// raises endpoint.degraded once; the next evaluations of the same episode
// raise nothing and write nothing; the rate falling below the threshold
// ends the episode (no event), and the next crossing raises again, as a
// new event.
func TestFailureRateAlertRaisesDegradedOncePerEpisode(t *testing.T) {
	t.Parallel()
	alert := &domain.FailureRateAlert{ThresholdPercent: 50, WindowHours: 1, MinAttempts: 4}
	f, status, c, n := alertFixture(t, alert)
	run := func(prefix string, count int) {
		t.Helper()
		f.run(t, batchOf(t, f, prefix, count)...)
	}

	run("a", 3) // 3 of 3 failed, below min_attempts
	require.Empty(t, n.types())
	f.now = f.now.Add(RateCheckEvery)
	run("b", 3) // 6 of 6
	require.Equal(t, []string{domain.OpEndpointDegraded}, n.types())
	since := f.now
	p := degradedPayload(t, n, 0)
	require.Equal(t, domain.OpEndpointEvent{
		TenantID: "t1", EndpointID: "ep_1", URL: p.URL, LastStatus: 500, LastError: "http_500", At: since,
		FailurePercent: 100, ThresholdPercent: 50, WindowHours: 1, WindowStart: p.WindowStart, Attempts: 6, Failed: 6,
		// The run as the batch read the endpoint, before its own attempts.
		ConsecutiveFailures: 3,
	}, p)
	require.NotEmpty(t, p.URL)
	require.True(t, p.WindowStart.Equal(since.Truncate(time.Hour).Add(-time.Hour)), "the hour before the current one: %s", p.WindowStart)
	require.Equal(t, opevent.ID(domain.OpEndpointDegraded, "t1", "ep_1", opevent.Episode(since)), n.events[0].ID, "named by the episode's start")
	require.True(t, since.Equal(*f.store.endpoint("t1/ep_1").DegradedSince))

	f.now = f.now.Add(RateCheckEvery)
	run("c", 2) // 8 of 8: the same episode
	f.now = f.now.Add(time.Second)
	run("d", 1) // within the minute: not weighed
	reads, marks := c.counts()
	require.Equal(t, map[string]int{"t1/ep_1": 3}, reads, "one read a minute, however many flushes")
	require.Equal(t, map[string]int{"t1/ep_1": 1}, marks, "the copy shows the mark: nothing written")
	require.Len(t, n.types(), 1, "once per episode")

	f.now = f.now.Add(RateCheckEvery)
	status.Store(200)
	run("e", 10) // 9 failed of 19: 47 %
	require.Len(t, n.types(), 1, "the episode's end raises nothing")
	require.Nil(t, f.store.endpoint("t1/ep_1").DegradedSince, "cleared")

	f.now = f.now.Add(RateCheckEvery)
	status.Store(500)
	run("f", 3) // 12 failed of 22: 54.5 %
	require.Equal(t, []string{domain.OpEndpointDegraded, domain.OpEndpointDegraded}, n.types(), "a new episode, a new event")
	require.NotEqual(t, n.events[0].ID, n.events[1].ID)
	p = degradedPayload(t, n, 1)
	require.Equal(t, 54.55, p.FailurePercent)
	require.Equal(t, int64(22), p.Attempts)
	require.Equal(t, int64(12), p.Failed)
	require.True(t, f.now.Equal(p.At))
}

// Below min_attempts the rate says nothing, however bad; the attempt that
// brings the window to min_attempts decides.
func TestFailureRateBelowMinAttemptsRaisesNothing(t *testing.T) {
	t.Parallel()
	f, _, c, n := alertFixture(t, &domain.FailureRateAlert{ThresholdPercent: 10, MinAttempts: 20})
	for i := range 3 {
		f.run(t, batchOf(t, f, fmt.Sprintf("b%d_", i), 5)...)
		f.now = f.now.Add(RateCheckEvery)
	}
	reads, marks := c.counts()
	require.Equal(t, 3, reads["t1/ep_1"], "weighed each minute")
	require.Empty(t, marks, "15 attempts of 20: nothing marked")
	require.Empty(t, n.types())
	require.Nil(t, f.store.endpoint("t1/ep_1").DegradedSince)

	f.run(t, batchOf(t, f, "last", 5)...)
	require.Equal(t, []string{domain.OpEndpointDegraded}, n.types(), "20 of 20")
}

// An endpoint without an alert costs nothing of this: no window read, no
// mark, not one more DynamoDB call (the fake table counts no Query, the
// action of a window's read). The same endpoint with an alert is read.
func TestAnEndpointWithoutAnAlertIsNeverWeighed(t *testing.T) {
	t.Parallel()
	f, _, c, n := alertFixture(t, nil)
	for i := range 3 {
		f.run(t, batchOf(t, f, fmt.Sprintf("b%d_", i), 10)...)
		f.now = f.now.Add(RateCheckEvery)
	}
	reads, marks := c.counts()
	require.Empty(t, reads)
	require.Empty(t, marks)
	require.Zero(t, f.store.DB.Calls("Query"))
	require.Empty(t, n.types())

	e := f.store.endpoint("t1/ep_1")
	e.FailureRateAlert = &domain.FailureRateAlert{ThresholdPercent: 50}
	f.store.setEndpoint(e)
	f.run(t, batchOf(t, f, "alert", 10)...)
	reads, _ = c.counts()
	require.Equal(t, map[string]int{"t1/ep_1": 1}, reads)
	require.Equal(t, store.StatsShards+1, f.store.DB.Calls("Query"), "a window's read: every shard and the partition before them")
	require.Equal(t, []string{domain.OpEndpointDegraded}, n.types())
}

// In a batch to two endpoints, only the one with an alert is weighed.
func TestOnlyTheEndpointWithAnAlertIsWeighed(t *testing.T) {
	t.Parallel()
	f, _, c, _ := alertFixture(t, &domain.FailureRateAlert{ThresholdPercent: 50})
	ep := f.store.endpoint("t1/ep_1")
	ep.EndpointID, ep.FailureRateAlert = "ep_2", nil
	f.store.setEndpoint(ep)
	f.run(t, messageTo(t, "d1", "ep_1", f.now), messageTo(t, "d2", "ep_2", f.now))
	reads, _ := c.counts()
	require.Equal(t, map[string]int{"t1/ep_1": 1}, reads)
}

// Another instance marked the episode first (this one's copy of the
// endpoint is behind): the conditional write moves nothing and no second
// event is raised.
func TestAnEpisodeMarkedElsewhereIsNotRaisedAgain(t *testing.T) {
	t.Parallel()
	f, _, c, n := alertFixture(t, &domain.FailureRateAlert{ThresholdPercent: 50, MinAttempts: 1})
	ref := store.EndpointRef{TenantID: "t1", EndpointID: "ep_1"}
	behind := f.store.endpoint("t1/ep_1")
	_, err := f.store.MarkEndpointDegraded(context.Background(), "t1", "ep_1", true)
	require.NoError(t, err)
	f.store.lagging = map[store.EndpointRef]domain.Endpoint{ref: behind}
	f.run(t, batchOf(t, f, "a", 2)...)
	_, marks := c.counts()
	require.Equal(t, map[string]int{"t1/ep_1": 1}, marks, "tried")
	require.Empty(t, n.types(), "marked already: not raised again")
}

// A flush weighs at most MaxRateChecksPerFlush endpoints, the longest
// unweighed first; each endpoint at most once a RateCheckEvery.
func TestRateChecksAreBoundedPerFlushAndMinute(t *testing.T) {
	t.Parallel()
	watched := map[store.EndpointRef]domain.Endpoint{}
	var all []store.EndpointRef
	for i := range MaxRateChecksPerFlush + 2 {
		ref := store.EndpointRef{TenantID: "t1", EndpointID: fmt.Sprintf("ep_%02d", i)}
		watched[ref], all = domain.Endpoint{}, append(all, ref)
	}
	var c rateChecks
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	require.Equal(t, all[:MaxRateChecksPerFlush], c.due(watched, nil, t0))
	require.Equal(t, all[MaxRateChecksPerFlush:], c.due(watched, nil, t0.Add(time.Second)), "the rest at the next flush")
	require.Empty(t, c.due(watched, nil, t0.Add(2*time.Second)), "each weighed within the minute")
	require.Equal(t, all[:MaxRateChecksPerFlush], c.due(watched, nil, t0.Add(RateCheckEvery)), "a minute on, the first ten again")
	require.Equal(t, all[MaxRateChecksPerFlush:], c.due(watched, nil, t0.Add(RateCheckEvery+time.Second)))
	require.LessOrEqual(t, len(c.at), MaxRateChecksPerFlush+2, "only the last minute's are kept")
}

// An endpoint whose window lacked attempts of min_attempts is weighed
// again within the minute once this instance flushed what it lacked, not
// before; one whose verdict was decided waits the minute.
func TestALackingWindowIsWeighedAgainOnceItsAttemptsCame(t *testing.T) {
	t.Parallel()
	a, b := store.EndpointRef{TenantID: "t1", EndpointID: "ep_a"}, store.EndpointRef{TenantID: "t1", EndpointID: "ep_b"}
	watched := map[store.EndpointRef]domain.Endpoint{a: {}, b: {}}
	var c rateChecks
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	require.Equal(t, []store.EndpointRef{a, b}, c.due(watched, nil, t0))
	c.lacked(a, 3) // a's window had 17 of 20; b's was decided
	require.Empty(t, c.due(watched, map[store.EndpointRef]int64{a: 2, b: 50}, t0.Add(time.Second)), "a still lacks one; b waits the minute")
	require.Equal(t, []store.EndpointRef{a}, c.due(watched, map[store.EndpointRef]int64{a: 1, b: 5}, t0.Add(2*time.Second)), "a's lacking attempts came")
	require.Empty(t, c.due(watched, map[store.EndpointRef]int64{a: 9}, t0.Add(3*time.Second)), "weighed again: its next lack is noted anew")
}

// The payload reads as a generic endpoint.* consumer reads it: the
// endpoint's fields, last_error and consecutive_failures present, and the
// rate's fields beside them.
func TestDegradedPayloadJSON(t *testing.T) {
	t.Parallel()
	f, _, _, n := alertFixture(t, &domain.FailureRateAlert{ThresholdPercent: 50, MinAttempts: 1})
	f.run(t, batchOf(t, f, "a", 2)...)
	require.Len(t, n.types(), 1)
	raw, err := json.Marshal(n.events[0].Payload)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	for _, k := range []string{"tenant_id", "endpoint_id", "url", "consecutive_failures", "last_status", "last_error", "at",
		"failure_percent", "threshold_percent", "window_hours", "window_start", "attempts", "failed"} {
		require.Contains(t, m, k)
	}
	require.Equal(t, 100.0, m["failure_percent"])
}
