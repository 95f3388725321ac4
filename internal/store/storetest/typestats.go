package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// endpointTypeStats: batches of one hour and type add up to one bucket
// (more batches than the store has shards, merged on read); types, hours,
// endpoints and tenants are kept apart; since and until bound the hours;
// and the hour buckets and their newest success and failure are not
// touched by the counters by type.
func endpointTypeStats(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, other := u.id("t_tstats"), u.id("t_tstats_other")
	hour := domain.StatsHour(u.clock.Now())
	earlier := hour.Add(-3 * time.Hour)
	const batches = 20
	for i := range batches {
		var st domain.AttemptStats
		at := hour.Add(time.Duration(i+1) * time.Minute)
		st.Count(domain.ClassDelivered, 40*time.Millisecond, at, 200, "")
		st.Count(domain.ClassHTTP5xx, 400*time.Millisecond, at, 503, "http_503")
		require.NoError(t, s.AddEndpointTypeStats(ctx, tenant, "ep_a", "order.created", at, st))
	}
	one := func(c domain.AttemptClass) domain.AttemptStats {
		var st domain.AttemptStats
		st.Count(c, time.Second, hour.Add(time.Minute), 0, "")
		return st
	}
	require.NoError(t, s.AddEndpointTypeStats(ctx, tenant, "ep_a", "order", hour, one(domain.ClassTimeout)))
	require.NoError(t, s.AddEndpointTypeStats(ctx, tenant, "ep_a", "odd#type", hour, one(domain.ClassDelivered)))
	require.NoError(t, s.AddEndpointTypeStats(ctx, tenant, "ep_a", "order.created", earlier, one(domain.ClassHTTP4xx)))
	require.NoError(t, s.AddEndpointTypeStats(ctx, tenant, "ep_b", "order.created", hour, one(domain.ClassNetwork)))
	require.NoError(t, s.AddEndpointTypeStats(ctx, other, "ep_a", "secret.type", hour, one(domain.ClassDelivered)))

	got, err := s.EndpointTypeStats(ctx, tenant, "ep_a", earlier, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 4, "an hour's bucket per type, the earlier hour's apart: %+v", got)
	require.True(t, got[0].Start.Equal(earlier), "oldest hour first")
	require.Equal(t, "order.created", got[0].EventType)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP4xx: 1}, got[0].Failures)
	require.Equal(t, []string{"odd#type", "order", "order.created"}, []string{got[1].EventType, got[2].EventType, got[3].EventType}, "by type within an hour")
	for _, b := range got[1:] {
		require.True(t, b.Start.Equal(hour))
		require.Nil(t, b.LastSuccessAt, "no newest success by type")
		require.Nil(t, b.LastFailure, "no newest failure by type")
	}
	require.Equal(t, int64(1), got[1].Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassTimeout: 1}, got[2].Failures)
	b := got[3]
	require.Equal(t, int64(2*batches), b.Attempts, "every batch's, over the shards")
	require.Equal(t, int64(batches), b.Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: batches}, b.Failures)
	require.Equal(t, int64(batches), b.Latency[domain.LatencyBucket(40*time.Millisecond)])
	require.Equal(t, int64(batches), b.Latency[domain.LatencyBucket(400*time.Millisecond)])

	typesIn := func(tenantID, endpointID string, since, until time.Time) []string {
		t.Helper()
		bs, err := s.EndpointTypeStats(ctx, tenantID, endpointID, since, until)
		require.NoError(t, err)
		out := []string{}
		for _, b := range bs {
			out = append(out, b.EventType)
		}
		return out
	}
	require.Equal(t, []string{"order.created"}, typesIn(tenant, "ep_b", earlier, hour.Add(time.Hour)), "endpoints apart")
	require.Equal(t, []string{"secret.type"}, typesIn(other, "ep_a", earlier, hour.Add(time.Hour)), "tenants apart")
	require.Equal(t, []string{"order.created"}, typesIn(tenant, "ep_a", earlier, hour), "until excludes its hour")
	require.Equal(t, []string{"odd#type", "order", "order.created"}, typesIn(tenant, "ep_a", hour, hour.Add(time.Nanosecond)), "an hour is in when it starts in the range")
	require.Empty(t, typesIn(tenant, "ep_a", hour.Add(time.Second), hour.Add(time.Hour)), "since after the hour's start excludes it")
	require.Empty(t, typesIn(tenant, "ep_a", hour, hour), "an empty range")
	require.Empty(t, typesIn(tenant, "ep_missing", earlier, hour.Add(time.Hour)))

	buckets, err := s.EndpointStats(ctx, tenant, "ep_a", earlier, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, buckets, "the hour buckets are not the counters by type")
	ok, fail, err := s.LastAttempts(ctx, tenant, "ep_a")
	require.NoError(t, err)
	require.Nil(t, ok)
	require.Nil(t, fail)
}
