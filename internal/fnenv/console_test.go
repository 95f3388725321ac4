package fnenv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFrameAncestors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"'none'", nil, true},
		{"'self'", []string{"'self'"}, true},
		{"https://app.example.com", []string{"https://app.example.com"}, true},
		{"'self' https://app.example.com,http://localhost:8080", []string{"'self'", "https://app.example.com", "http://localhost:8080"}, true},
		{"'none' 'self'", nil, false},
		{"app.example.com", nil, false},
		{"ftp://app.example.com", nil, false},
		{"https://app.example.com/path", nil, false},
		{"https://user@app.example.com", nil, false},
		{"https://*.example.com", nil, false},
		{"https://app.example.com?x", nil, false},
		{"https://a.example.com;script-src", nil, false},
		{"'unsafe-inline'", nil, false},
		{"*", nil, false},
		{"https://app.example.com:x", nil, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFrameAncestors(tc.in)
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLoadAPIConsoleSettings(t *testing.T) {
	t.Parallel()
	base := map[string]string{varStateTable: "state", varSecretsKeyARN: "arn:key", varOperatorKey: "k"}
	get := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		}
	}
	e, err := LoadAPI(get(nil))
	require.NoError(t, err)
	require.Nil(t, e.ConsoleFrameAncestors)
	require.Equal(t, DefaultPortalMinTTL, e.PortalMinTTL)
	require.Empty(t, e.AlarmNamePrefix)

	e, err = LoadAPI(get(map[string]string{varFrameAncestors: "'self' https://app.example.com", varPortalMinTTL: "1s", varAlarmNamePrefix: "Hookline-"}))
	require.NoError(t, err)
	require.Equal(t, []string{"'self'", "https://app.example.com"}, e.ConsoleFrameAncestors)
	require.Equal(t, "1s", e.PortalMinTTL.String())
	require.Equal(t, "Hookline-", e.AlarmNamePrefix)
	v := e.Vars()
	require.Equal(t, "'self' https://app.example.com", v[varFrameAncestors])
	require.Equal(t, "Hookline-", v[varAlarmNamePrefix])

	_, err = LoadAPI(get(map[string]string{varFrameAncestors: "https://x.example.com/p"}))
	require.ErrorContains(t, err, varFrameAncestors)
	_, err = LoadAPI(get(map[string]string{varPortalMinTTL: "0s"}))
	require.ErrorContains(t, err, varPortalMinTTL)
	_, err = LoadAPI(get(map[string]string{varPortalMinTTL: "2h"}))
	require.ErrorContains(t, err, varPortalMinTTL)

	// The per-tenant bounds of expensive routes: the defaults, a setting,
	// "none" (negative), and a value that means nothing (0, not a number).
	require.Equal(t, DefaultTenantExpensiveRate, 5)
	e, err = LoadAPI(get(nil))
	require.NoError(t, err)
	require.Equal(t, DefaultTenantExpensiveRate, e.TenantExpensiveRate)
	require.Equal(t, DefaultExpensiveBudget, e.ExpensiveBudget)
	e, err = LoadAPI(get(map[string]string{varTenantExpensiveRate: "-1", varExpensiveBudget: "500ms"}))
	require.NoError(t, err)
	require.Equal(t, -1, e.TenantExpensiveRate)
	require.Equal(t, "500ms", e.Vars()[varExpensiveBudget])
	for k, bad := range map[string]string{varTenantExpensiveRate: "0", varExpensiveBudget: "soon"} {
		_, err = LoadAPI(get(map[string]string{k: bad}))
		require.ErrorContains(t, err, k)
	}
	_, err = LoadAPI(get(map[string]string{varTenantExpensiveRate: "five"}))
	require.ErrorContains(t, err, varTenantExpensiveRate)
}
