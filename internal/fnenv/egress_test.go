package fnenv

import (
	"net/netip"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/stretchr/testify/require"
)

// Static egress: the VPC's range (HOOKLINE_DENY_CIDRS) travels to the
// deliver function's guard and the api function's registration check,
// the egress addresses (HOOKLINE_EGRESS_IPS) to the api function; Load
// reads back what Vars wrote, and neither variable is set without it.
func TestEgressVarsRoundTrip(t *testing.T) {
	t.Parallel()
	vpc := []netip.Prefix{netip.MustParsePrefix("10.231.0.0/16")}
	allow := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	guard := netguard.Guard{Allow: allow, Deny: vpc}

	t.Run("deliver", func(t *testing.T) {
		e := DeliverEnv{Common: Common{StateTable: "state"}, QueueURL: "https://q", DLQURL: "https://dlq", SecretsKeyARN: "arn:key", RequestTimeout: DefaultRequestTimeout, DisableAfter: DefaultDisableAfter, Guard: guard}
		require.Equal(t, "10.231.0.0/16", e.Vars()["HOOKLINE_DENY_CIDRS"])
		got, err := LoadDeliver(lookup(e.Vars()))
		require.NoError(t, err)
		require.Equal(t, guard, got.Guard)
		require.ErrorIs(t, got.Guard.Check(netip.MustParseAddr("10.231.0.2")), netguard.ErrForbidden, "the VPC's resolver, though 10.0.0.0/8 is allowed")
	})
	t.Run("api", func(t *testing.T) {
		e := APIEnv{Common: Common{StateTable: "state"}, OperatorKey: "op", SecretsKeyARN: "arn:key",
			URLs: netguard.URLPolicy{Guard: guard}, EgressIPs: []string{"203.0.113.10", "198.51.100.7"},
			PayloadRetention: DefaultPayloadRetention, PortalMinTTL: DefaultPortalMinTTL,
			TenantExpensiveRate: DefaultTenantExpensiveRate, ExpensiveBudget: DefaultExpensiveBudget,
			Endpoints: EndpointLimits{Retry: mustPolicy(t, retry.Policy{}), MaxRequestTimeout: DefaultRequestTimeout,
				MaxEndpoints: domain.DefaultMaxEndpoints, MaxEndpointBytes: domain.DefaultMaxEndpointBytes, MaxMetricsEventTypes: domain.DefaultMaxMetricsEventTypes}}
		require.Equal(t, "203.0.113.10,198.51.100.7", e.Vars()["HOOKLINE_EGRESS_IPS"])
		got, err := LoadAPI(lookup(e.Vars()))
		require.NoError(t, err)
		require.Equal(t, e, got)
	})
	t.Run("off: neither variable", func(t *testing.T) {
		for _, v := range []map[string]string{DeliverEnv{}.Vars(), APIEnv{}.Vars()} {
			require.NotContains(t, v, "HOOKLINE_DENY_CIDRS")
			require.NotContains(t, v, "HOOKLINE_EGRESS_IPS")
		}
		got, err := LoadAPI(lookup(APIEnv{OperatorKey: "op", SecretsKeyARN: "arn:key", Common: Common{StateTable: "state"}}.Vars()))
		require.NoError(t, err)
		require.Empty(t, got.EgressIPs)
		require.Empty(t, got.URLs.Guard.Deny)
	})
	t.Run("refused", func(t *testing.T) {
		base := map[string]string{"HOOKLINE_STATE_TABLE": "state", "HOOKLINE_OPERATOR_KEY": "op", "HOOKLINE_SECRETS_KEY_ARN": "arn:key",
			"HOOKLINE_DELIVERY_QUEUE_URL": "https://q", "HOOKLINE_DLQ_URL": "https://dlq"}
		with := func(k, v string) func(string) string {
			return func(name string) string {
				if name == k {
					return v
				}
				return base[name]
			}
		}
		_, err := LoadAPI(with("HOOKLINE_EGRESS_IPS", "203.0.113.10,nat-gateway"))
		require.ErrorContains(t, err, `HOOKLINE_EGRESS_IPS: "nat-gateway" is not an IP address`)
		_, err = LoadAPI(with("HOOKLINE_DENY_CIDRS", "10.231.0.0"))
		require.ErrorContains(t, err, "HOOKLINE_DENY_CIDRS")
		_, err = LoadDeliver(with("HOOKLINE_DENY_CIDRS", "vpc"))
		require.ErrorContains(t, err, "HOOKLINE_DENY_CIDRS")
	})
}
