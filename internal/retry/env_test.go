package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestEnvRoundTrip(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]Policy{
		"defaults": {},
		"short":    {Schedule: []time.Duration{0, time.Second, 2 * time.Second}, Mode: JitterNone, MaxAge: time.Hour},
		"full":     {Schedule: []time.Duration{0, 90 * time.Second}, Mode: JitterFull, Jitter: 0.5},
		"visible":  {VisibilityTimeout: 90 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			env := p.Env()
			got, err := FromEnv(func(k string) string { return env[k] })
			require.NoError(t, err)
			require.Equal(t, p.Attempts(), got.Attempts())
			require.Equal(t, p.schedule(), got.schedule())
			require.Equal(t, p.Mode, got.Mode)
			require.Equal(t, p.maxAge(), got.maxAge())
			require.InDelta(t, p.jitter(), got.jitter(), 1e-9)
			require.Equal(t, p.visibilityTimeout(), got.visibilityTimeout())
			require.Equal(t, p.LongestDelay(), got.LongestDelay())
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"bad schedule":               {map[string]string{EnvSchedule: "0s,13h"}, "HOOKLINE_RETRY_SCHEDULE: retry: step 1 (13h) exceeds 12h"},
		"bad jitter":                 {map[string]string{EnvJitter: "lots"}, `HOOKLINE_RETRY_JITTER: "lots" is not a number`},
		"jitter range":               {map[string]string{EnvJitter: "2"}, "jitter 2 is outside [0, 1]"},
		"bad mode":                   {map[string]string{EnvJitterMode: "wild"}, `"wild" is not proportional, full or none`},
		"bad max age":                {map[string]string{EnvMaxAge: "a day"}, "HOOKLINE_MAX_AGE"},
		"bad visibility":             {map[string]string{EnvVisibilityTimeout: "6"}, "HOOKLINE_QUEUE_VISIBILITY_TIMEOUT"},
		"visibility leaves no delay": {map[string]string{EnvVisibilityTimeout: "12h"}, "leaves no delay"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := FromEnv(func(k string) string { return tc.env[k] })
			require.ErrorContains(t, err, tc.want)
		})
	}
}
