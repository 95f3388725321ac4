package fnenv

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/hookline/hookline/internal/netguard"
)

// Static egress (hookline.Props.StaticEgressAZs): the deliver function
// runs in a VPC whose internet traffic leaves through NAT gateways with
// Elastic IPs. Both functions that check endpoint addresses refuse the
// VPC's range (HOOKLINE_DENY_CIDRS), and the api function shows tenants
// the addresses (HOOKLINE_EGRESS_IPS). Without it neither variable is set.
const (
	varDenyCIDRs = "HOOKLINE_DENY_CIDRS"
	varEgressIPs = "HOOKLINE_EGRESS_IPS"
)

// guardVars renders g: its allowlist always (HOOKLINE_ALLOW_CIDRS, empty
// for none), its denylist (HOOKLINE_DENY_CIDRS) only when it has one.
func guardVars(v map[string]string, g netguard.Guard) {
	v[varAllowCIDRs] = prefixes(g.Allow)
	if len(g.Deny) > 0 {
		v[varDenyCIDRs] = prefixes(g.Deny)
	}
}

// loadGuard reads what guardVars wrote.
func loadGuard(getenv func(string) string) (netguard.Guard, error) {
	var g netguard.Guard
	var err error
	if g.Allow, err = netguard.ParsePrefixes(getenv(varAllowCIDRs)); err != nil {
		return g, fmt.Errorf("%s: %w", varAllowCIDRs, err)
	}
	if g.Deny, err = netguard.ParsePrefixes(getenv(varDenyCIDRs)); err != nil {
		return g, fmt.Errorf("%s: %w", varDenyCIDRs, err)
	}
	return g, nil
}

// egressVars renders the egress addresses, comma-separated, when there
// are any. The stack passes one element, the CloudFormation expression
// joining the Elastic IPs' addresses; the function reads them back one by
// one (loadEgressIPs).
func egressVars(v map[string]string, ips []string) {
	if len(ips) > 0 {
		v[varEgressIPs] = strings.Join(ips, ",")
	}
}

// loadEgressIPs reads HOOKLINE_EGRESS_IPS: IP addresses, comma-separated;
// none when unset. Anything else is refused.
func loadEgressIPs(getenv func(string) string) ([]string, error) {
	out := splitList(getenv(varEgressIPs))
	for _, s := range out {
		if _, err := netip.ParseAddr(s); err != nil {
			return nil, fmt.Errorf("%s: %q is not an IP address", varEgressIPs, s)
		}
	}
	return out, nil
}
