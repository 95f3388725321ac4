package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_OPERATOR_KEY_SECRET_ARN": "arn:secret"}
	get := func(over map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return env[k]
		}
	}
	c, err := loadConfig(get(nil))
	require.NoError(t, err)
	require.False(t, c.URLs.AllowHTTP, "https only by default")
	require.Empty(t, c.URLs.Guard.Allow)

	c, err = loadConfig(get(map[string]string{"HOOKLINE_ALLOW_HTTP": "true", "HOOKLINE_ALLOW_CIDRS": "127.0.0.0/8"}))
	require.NoError(t, err)
	require.True(t, c.URLs.AllowHTTP)
	require.Len(t, c.URLs.Guard.Allow, 1)

	for name, tc := range map[string]struct {
		over map[string]string
		want string
	}{
		"no table":        {map[string]string{"HOOKLINE_STATE_TABLE": ""}, "HOOKLINE_STATE_TABLE"},
		"no operator key": {map[string]string{"HOOKLINE_OPERATOR_KEY_SECRET_ARN": ""}, "HOOKLINE_OPERATOR_KEY"},
		"bad allow http":  {map[string]string{"HOOKLINE_ALLOW_HTTP": "sometimes"}, "HOOKLINE_ALLOW_HTTP"},
		"bad cidrs":       {map[string]string{"HOOKLINE_ALLOW_CIDRS": "nope"}, "HOOKLINE_ALLOW_CIDRS"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(get(tc.over))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
