package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	base := map[string]string{
		"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_DLQ_URL": "https://dlq",
		"HOOKLINE_SECRETS_KEY_ARN": "arn:aws:kms:us-east-1:000000000000:key/k",
	}
	with := func(k, v string) func(string) string {
		return func(name string) string {
			if name == k {
				return v
			}
			return base[name]
		}
	}
	c, err := loadConfig(with("", ""))
	require.NoError(t, err)
	require.Equal(t, 15*time.Second, c.RequestTimeout)
	require.Equal(t, 50, c.DisableAfter)
	require.Equal(t, 8, c.Retry.Attempts())
	require.Empty(t, c.Guard.Allow)
	require.Equal(t, "arn:aws:kms:us-east-1:000000000000:key/k", c.SecretsKeyARN)

	require.Equal(t, 11*time.Hour+57*time.Minute, c.Retry.LongestDelay(), "the default 2 min queue visibility timeout")

	c, err = loadConfig(with("HOOKLINE_QUEUE_VISIBILITY_TIMEOUT", "90m"))
	require.NoError(t, err)
	require.Equal(t, 10*time.Hour+29*time.Minute, c.Retry.LongestDelay(), "the queue's visibility timeout shortens the longest delay")

	c, err = loadConfig(with("HOOKLINE_ALLOW_CIDRS", "127.0.0.0/8, ::1/128"))
	require.NoError(t, err)
	require.Len(t, c.Guard.Allow, 2)

	for name, tc := range map[string]struct{ key, value, want string }{
		"no table":             {"HOOKLINE_STATE_TABLE", "", "HOOKLINE_STATE_TABLE is required"},
		"no dlq":               {"HOOKLINE_DLQ_URL", "", "HOOKLINE_DLQ_URL is required"},
		"no key":               {"HOOKLINE_SECRETS_KEY_ARN", "", "HOOKLINE_SECRETS_KEY_ARN is required"},
		"bad timeout":          {"HOOKLINE_REQUEST_TIMEOUT", "soon", "HOOKLINE_REQUEST_TIMEOUT"},
		"zero timeout":         {"HOOKLINE_REQUEST_TIMEOUT", "0s", "positive"},
		"bad schedule":         {"HOOKLINE_RETRY_SCHEDULE", "0s,24h", "exceeds 12h"},
		"bad queue visibility": {"HOOKLINE_QUEUE_VISIBILITY_TIMEOUT", "12h", "leaves no delay"},
		"bad cidr":             {"HOOKLINE_ALLOW_CIDRS", "127.0.0.1", "HOOKLINE_ALLOW_CIDRS"},
		"bad disable":          {"HOOKLINE_DISABLE_AFTER", "many", "HOOKLINE_DISABLE_AFTER"},
		"zero disable":         {"HOOKLINE_DISABLE_AFTER", "0", "non-zero"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(with(tc.key, tc.value))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
