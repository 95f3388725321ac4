package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"HOOKLINE_STATE_TABLE": "s", "HOOKLINE_DELIVERY_QUEUE_URL": "q", "HOOKLINE_DLQ_URL": "d", "HOOKLINE_REPLAY_QUEUE_URL": "j"}
	get := func(k, v string) func(string) string {
		return func(name string) string {
			if name == k {
				return v
			}
			return env[name]
		}
	}
	c, err := loadConfig(get("", ""))
	require.NoError(t, err)
	require.EqualValues(t, 10, c.Rate)
	require.Empty(t, c.OpsQueueURL)
	c, err = loadConfig(get("HOOKLINE_REPLAY_OPS_QUEUE_URL", "o"))
	require.NoError(t, err)
	require.Equal(t, "o", c.OpsQueueURL)
	c, err = loadConfig(get("HOOKLINE_REPLAY_RATE", "2.5"))
	require.NoError(t, err)
	require.EqualValues(t, 2.5, c.Rate)
	for _, tc := range []struct{ k, v, want string }{
		{"HOOKLINE_REPLAY_QUEUE_URL", "", "HOOKLINE_REPLAY_QUEUE_URL is required"},
		{"HOOKLINE_DLQ_URL", "", "HOOKLINE_DLQ_URL is required"},
		{"HOOKLINE_REPLAY_RATE", "fast", "HOOKLINE_REPLAY_RATE"},
		{"HOOKLINE_REPLAY_RATE", "0", "HOOKLINE_REPLAY_RATE"},
	} {
		_, err := loadConfig(get(tc.k, tc.v))
		require.ErrorContains(t, err, tc.want)
	}
}
