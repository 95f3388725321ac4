package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// endpointStats: batches add up per hour (the store spreads them over
// shards it merges on read), a range reads its hours oldest
// first, the newest success and failure are found at any age, and another
// endpoint's counters stay apart.
func endpointStats(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_stats")
	hour := domain.StatsHour(u.clock.Now())
	earlier := hour.Add(-5 * time.Hour)
	var a, b, old domain.AttemptStats
	a.Count(domain.ClassDelivered, 40*time.Millisecond, hour.Add(time.Minute), 200, "")
	a.Count(domain.ClassHTTP5xx, 8*time.Millisecond, hour.Add(2*time.Minute), 500, "http_500")
	b.Count(domain.ClassDelivered, 400*time.Millisecond, hour.Add(3*time.Minute), 204, "")
	b.Count(domain.ClassRefused, 0, hour.Add(150*time.Second), 0, "forbidden_address")
	old.Count(domain.ClassTimeout, 31*time.Second, earlier.Add(time.Minute), 0, "timeout")
	require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_a", hour.Add(time.Minute), a))
	require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_a", hour, b))
	require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_a", earlier, old))
	require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_b", hour, a))

	got, err := s.EndpointStats(ctx, tenant, "ep_a", earlier, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.True(t, got[0].Start.Equal(earlier), "oldest first: %v", got[0].Start)
	require.Equal(t, int64(1), got[0].Attempts)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassTimeout: 1}, got[0].Failures)
	cur := got[1]
	require.True(t, cur.Start.Equal(hour))
	require.Equal(t, int64(4), cur.Attempts)
	require.Equal(t, int64(2), cur.Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: 1, domain.ClassRefused: 1}, cur.Failures)
	require.Equal(t, int64(1), cur.Latency[domain.LatencyBucket(400*time.Millisecond)])
	require.Equal(t, int64(1), cur.Latency[domain.LatencyBucket(40*time.Millisecond)])
	// The newest of the batches' (the refusal, after the 500).
	require.True(t, cur.LastSuccessAt.Equal(hour.Add(3*time.Minute)))
	require.Equal(t, "forbidden_address", cur.LastFailure.Error)

	only, err := s.EndpointStats(ctx, tenant, "ep_a", hour, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, only, 1, "since and until bound the hours")
	none, err := s.EndpointStats(ctx, tenant, "ep_a", earlier.Add(time.Hour), hour)
	require.NoError(t, err)
	require.Empty(t, none)

	ok, fail, err := s.LastAttempts(ctx, tenant, "ep_a")
	require.NoError(t, err)
	require.True(t, ok.Equal(hour.Add(3*time.Minute)))
	require.Equal(t, 0, fail.Status)
	require.True(t, fail.At.Equal(hour.Add(150*time.Second)))
	ok, fail, err = s.LastAttempts(ctx, tenant, "ep_missing")
	require.NoError(t, err)
	require.Nil(t, ok)
	require.Nil(t, fail)
}

// endpointStatsSpread: many batches of one hour (more than the store has
// shards) add up to one bucket, counts, histogram and all, and the newest
// success and failure of them all are read, whichever batch wrote them.
func endpointStatsSpread(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_stats_spread")
	hour := domain.StatsHour(u.clock.Now())
	const batches = 20
	for i := range batches {
		var st domain.AttemptStats
		at := hour.Add(time.Duration(i+1) * time.Minute)
		st.Count(domain.ClassDelivered, 40*time.Millisecond, at, 200, "")
		st.Count(domain.ClassHTTP5xx, 400*time.Millisecond, at.Add(time.Second), 503, "http_503")
		require.NoError(t, s.AddEndpointStats(ctx, tenant, "ep_a", at, st))
	}
	got, err := s.EndpointStats(ctx, tenant, "ep_a", hour, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 1, "one bucket for the hour")
	b := got[0]
	require.True(t, b.Start.Equal(hour))
	require.Equal(t, int64(2*batches), b.Attempts)
	require.Equal(t, int64(batches), b.Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: batches}, b.Failures)
	require.Equal(t, int64(batches), b.Latency[domain.LatencyBucket(40*time.Millisecond)])
	require.Equal(t, int64(batches), b.Latency[domain.LatencyBucket(400*time.Millisecond)])
	newest := hour.Add(batches * time.Minute)
	require.True(t, b.LastSuccessAt.Equal(newest), "newest success: %v", b.LastSuccessAt)
	require.True(t, b.LastFailure.At.Equal(newest.Add(time.Second)), "newest failure: %v", b.LastFailure.At)
	ok, fail, err := s.LastAttempts(ctx, tenant, "ep_a")
	require.NoError(t, err)
	require.True(t, ok.Equal(newest))
	require.True(t, fail.At.Equal(newest.Add(time.Second)))
	require.Equal(t, 503, fail.Status)
}
