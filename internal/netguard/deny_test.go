package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/netguard"
)

// egressVPC is the range of the VPC the deliver function runs in with
// static egress (infra/hookline, egressVPCCIDR; the template test
// TestStaticEgress holds the VPC and HOOKLINE_DENY_CIDRS to it).
var egressVPC = netip.MustParsePrefix("10.231.0.0/16")

// The VPC's own addresses are refused: by the zero Guard as private, and
// by a Guard whose Deny holds the VPC's range even when its Allow covers
// them (an operator allowing 10.0.0.0/8, or everything), in every form
// of the address. What Deny does not cover keeps the allowlist's answer.
func TestDenyWinsOverAllow(t *testing.T) {
	t.Parallel()
	inVPC := []string{
		"10.231.0.1",        // the VPC router
		"10.231.0.2",        // the VPC's DNS resolver
		"10.231.96.10",      // a private subnet: the deliver function's own ENIs
		"10.231.255.255",    // the range's last address
		"::ffff:10.231.0.2", // IPv4-mapped
		"64:ff9b::ae7:2",    // NAT64 (10.231.0.2)
		"2002:ae7:2::1",     // 6to4 (10.231.0.2)
	}
	allowAll := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	for _, g := range []struct {
		name  string
		guard netguard.Guard
	}{
		{"zero guard", netguard.Guard{}},
		{"deny, no allow", netguard.Guard{Deny: []netip.Prefix{egressVPC}}},
		{"deny beside allow 10.0.0.0/8", netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Deny: []netip.Prefix{egressVPC}}},
		{"deny beside allow everything", netguard.Guard{Allow: allowAll, Deny: []netip.Prefix{egressVPC}}},
	} {
		for _, a := range inVPC {
			t.Run(g.name+" "+a, func(t *testing.T) {
				require.ErrorIs(t, g.guard.Check(netip.MustParseAddr(a)), netguard.ErrForbidden)
			})
		}
	}

	t.Run("the refusal names the denied range", func(t *testing.T) {
		g := netguard.Guard{Allow: allowAll, Deny: []netip.Prefix{egressVPC}}
		err := g.Check(netip.MustParseAddr("10.231.0.2"))
		require.ErrorContains(t, err, "10.231.0.0/16")
	})

	t.Run("outside the denied range the allowlist still answers", func(t *testing.T) {
		g := netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, Deny: []netip.Prefix{egressVPC}}
		require.NoError(t, g.Check(netip.MustParseAddr("10.1.2.3")), "a peered network the operator allowed")
		require.NoError(t, g.Check(netip.MustParseAddr("10.230.255.255")), "just below the VPC")
		require.NoError(t, g.Check(netip.MustParseAddr("10.232.0.0")), "just above the VPC")
		require.NoError(t, g.Check(netip.MustParseAddr("8.8.8.8")), "public addresses stay allowed")
		require.ErrorIs(t, g.Check(netip.MustParseAddr("192.168.1.1")), netguard.ErrForbidden, "other internal ranges stay refused")
	})

	t.Run("the dialer refuses the VPC's addresses", func(t *testing.T) {
		g := netguard.Guard{Allow: allowAll, Deny: []netip.Prefix{egressVPC}}
		require.ErrorIs(t, g.Control("tcp4", "10.231.0.2:443", nil), netguard.ErrForbidden)
		require.NoError(t, g.Control("tcp4", "93.184.216.34:443", nil))
	})
}
