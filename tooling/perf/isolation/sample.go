package isolation

import (
	"math"
	"slices"
	"time"
)

// Sample is the latencies of a set of events, some of which may never have
// been received within the wait: those count as slower than any received.
type Sample struct {
	// Got holds the latencies of the received events, in any order.
	Got []time.Duration
	// Missing is how many events were not received. Zero: all were.
	Missing int
}

// N is the number of events in the sample, received or not.
func (s Sample) N() int { return len(s.Got) + s.Missing }

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of the sample:
// the smallest latency at least a fraction q of the events did not exceed.
// ok is false when that rank falls on a missing event (the quantile is then
// longer than the wait) or the sample is empty.
func (s Sample) Percentile(q float64) (d time.Duration, ok bool) {
	n := s.N()
	if n == 0 {
		return 0, false
	}
	rank := int(math.Ceil(q * float64(n))) // 1-based
	rank = max(1, min(n, rank))
	if rank > len(s.Got) {
		return 0, false
	}
	sorted := slices.Clone(s.Got)
	slices.Sort(sorted)
	return sorted[rank-1], true
}
