package fanout_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/fanout"
	"github.com/stretchr/testify/require"
)

// Every index runs once, never more than limit at once, and at limit at
// some point; the errors are joined.
func TestEachBoundsAndJoins(t *testing.T) {
	t.Parallel()
	var running, peak atomic.Int32
	var mu sync.Mutex
	seen := map[int]int{}
	errA, errB := errors.New("a"), errors.New("b")
	err := fanout.Each(12, 3, func(i int) error {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		mu.Lock()
		seen[i]++
		mu.Unlock()
		switch i {
		case 4:
			return errA
		case 9:
			return errB
		}
		return nil
	})
	require.ErrorIs(t, err, errA)
	require.ErrorIs(t, err, errB)
	require.Len(t, seen, 12)
	for i, n := range seen {
		require.Equal(t, 1, n, "index %d", i)
	}
	require.Equal(t, int32(3), peak.Load())
	require.NoError(t, fanout.Each(0, 3, func(int) error { return errA }), "nothing to run")
}
