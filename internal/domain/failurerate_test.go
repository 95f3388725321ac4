package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFailureRateAlertJudge(t *testing.T) {
	t.Parallel()
	a := FailureRateAlert{ThresholdPercent: 20, MinAttempts: 10}
	for _, tc := range []struct {
		name             string
		attempts, failed int64
		want             RateVerdict
	}{
		{"at the threshold exactly", 100, 20, RateDegraded},
		{"just below it", 100, 19, RateHealthy},
		{"every attempt failed", 10, 10, RateDegraded},
		{"at min_attempts", 10, 2, RateDegraded},
		{"below min_attempts, failures: says nothing", 9, 9, RateUndecided},
		{"below min_attempts, no failure: healthy", 3, 0, RateHealthy},
		{"no attempts", 0, 0, RateHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, a.Judge(tc.attempts, tc.failed))
		})
	}
	// The defaults apply to an alert stored without them: 20 attempts.
	require.Equal(t, RateUndecided, FailureRateAlert{ThresholdPercent: 50}.Judge(19, 19))
	require.Equal(t, RateDegraded, FailureRateAlert{ThresholdPercent: 50}.Judge(20, 10))
	require.Equal(t, RateDegraded, FailureRateAlert{ThresholdPercent: 100, MinAttempts: 1}.Judge(1, 1))
	require.Equal(t, RateHealthy, FailureRateAlert{ThresholdPercent: 100, MinAttempts: 1}.Judge(2, 1))
}

// The window is the current hour's bucket and the WindowHours whole hours
// before it.
func TestFailureRateAlertWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC)
	since, until := FailureRateAlert{ThresholdPercent: 20}.Window(now)
	require.Equal(t, time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC), since, "default: one hour before the current one")
	require.Equal(t, time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC), until)
	since, _ = FailureRateAlert{ThresholdPercent: 20, WindowHours: 24}.Window(now)
	require.Equal(t, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), since)
}

func TestFailurePercent(t *testing.T) {
	t.Parallel()
	require.Equal(t, 25.0, FailurePercent(100, 25))
	require.Equal(t, 33.33, FailurePercent(3, 1))
	require.Equal(t, 66.67, FailurePercent(3, 2))
	require.Zero(t, FailurePercent(0, 0))
}
