package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_DELIVERY_QUEUE_URL": "https://q"}
	c, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "state", c.StateTable)
	require.Equal(t, "https://q", c.QueueURL)
	for _, missing := range []string{"HOOKLINE_STATE_TABLE", "HOOKLINE_DELIVERY_QUEUE_URL"} {
		_, err := loadConfig(func(k string) string {
			if k == missing {
				return ""
			}
			return env[k]
		})
		require.ErrorContains(t, err, missing+" is required")
	}
}
