package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSortableTimeOrdersAsStrings(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 30, 1, 2, 5, 0, time.UTC)
	times := []time.Time{base, base.Add(100 * time.Millisecond), base.Add(450 * time.Millisecond), base.Add(time.Second), base.Add(time.Second + time.Nanosecond)}
	for i := 1; i < len(times); i++ {
		require.Less(t, sortableTime(times[i-1]), sortableTime(times[i]))
	}
	parsed, err := time.Parse(time.RFC3339Nano, sortableTime(times[2]))
	require.NoError(t, err, "still RFC 3339")
	require.True(t, parsed.Equal(times[2]))
	require.Equal(t, sortableTime(base), sortableTime(base.In(time.FixedZone("x", 3600))), "always UTC")
}
