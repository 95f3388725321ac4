package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatencyBucketBounds(t *testing.T) {
	t.Parallel()
	require.Equal(t, len(LatencyBoundsMS)+1, LatencyBuckets)
	for i := 1; i < len(LatencyBoundsMS); i++ {
		require.Greater(t, LatencyBoundsMS[i], LatencyBoundsMS[i-1], "bounds ascend")
		require.LessOrEqual(t, LatencyBoundsMS[i]/LatencyBoundsMS[i-1], 2.0, "at most 2x apart")
	}
	require.Equal(t, 0, LatencyBucket(0))
	require.Equal(t, 0, LatencyBucket(time.Millisecond), "a bound belongs to the bucket below it")
	require.Equal(t, 1, LatencyBucket(time.Millisecond+1))
	require.Equal(t, 11, LatencyBucket(99*time.Millisecond), "70-100 ms")
	require.Equal(t, LatencyBuckets-1, LatencyBucket(31*time.Second), "the overflow bucket")
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var h LatencyHistogram
	_, ok := h.Percentile(0.5)
	require.False(t, ok, "nothing counted")
	// 90 in the 15-20 ms bucket, 10 in the 200-300 ms one.
	h[LatencyBucket(18*time.Millisecond)] = 90
	h[LatencyBucket(250*time.Millisecond)] = 10
	p50, _ := h.Percentile(0.50)
	require.InDelta(t, 15+5*50.0/90, p50, 1e-9, "rank 50 of 90 in 15-20 ms")
	p90, _ := h.Percentile(0.90)
	require.InDelta(t, 20, p90, 1e-9, "rank 90: the top of the first bucket")
	p95, _ := h.Percentile(0.95)
	require.InDelta(t, 250, p95, 1e-9, "rank 95: half way through 200-300 ms")
	p100, _ := h.Percentile(1)
	require.InDelta(t, 300, p100, 1e-9)
	h[LatencyBuckets-1] = 1000
	p99, _ := h.Percentile(0.99)
	require.Equal(t, 30000.0, p99, "the overflow bucket answers its lower bound")
}

func TestCountAndMerge(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var a, b AttemptStats
	a.Count(ClassDelivered, 10*time.Millisecond, t0.Add(2*time.Minute), 200, "")
	a.Count(ClassDelivered, 10*time.Millisecond, t0.Add(time.Minute), 200, "")
	a.Count(ClassHTTP5xx, 10*time.Millisecond, t0, 502, "http_502")
	b.Count(ClassTimeout, 15*time.Second, t0.Add(3*time.Minute), 0, strings.Repeat("é", 100))
	require.True(t, a.LastSuccessAt.Equal(t0.Add(2*time.Minute)), "the newest, not the last counted")
	require.LessOrEqual(t, len(b.LastFailure.Error), MaxFailureErrorBytes)
	require.True(t, strings.HasPrefix(strings.Repeat("é", 100), b.LastFailure.Error), "cut on a rune boundary")
	a.Merge(b)
	require.Equal(t, int64(4), a.Attempts)
	require.Equal(t, int64(2), a.Delivered)
	require.Equal(t, map[AttemptClass]int64{ClassHTTP5xx: 1, ClassTimeout: 1}, a.Failures)
	require.True(t, a.LastFailure.At.Equal(t0.Add(3*time.Minute)), "the newer failure")
	require.Equal(t, int64(3), a.Latency[LatencyBucket(10*time.Millisecond)])
}
