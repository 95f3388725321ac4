package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
)

// ErrForbidden is wrapped by every refusal.
var ErrForbidden = errors.New("destination address is not allowed")

// blocked are the ranges refused besides those netip classifies itself.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// Guard decides which addresses deliveries may reach. The zero value refuses
// every internal address and allows nothing extra.
type Guard struct {
	// Allow lists prefixes that are reachable even though they are internal,
	// e.g. 127.0.0.0/8 for tests against receivers on loopback. Default none.
	Allow []netip.Prefix
}

// ParsePrefixes parses a comma-separated list of CIDR prefixes ("" is none).
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("allowlist entry %q: %w", part, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Check returns nil if addr may be dialled, or an error wrapping ErrForbidden.
func (g *Guard) Check(addr netip.Addr) error {
	for _, p := range g.Allow {
		if p.Contains(addr) || (addr.Is4In6() && p.Contains(addr.Unmap())) {
			return nil
		}
	}
	if reason := internal(addr); reason != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbidden, addr, reason)
	}
	return nil
}

// internal names the class of addr if it is not a public unicast address.
func internal(addr netip.Addr) string {
	addr = addr.WithZone("")
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	if addr.Is6() {
		// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) embed an IPv4 address.
		b := addr.As16()
		if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b {
			if r := internal(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
				return r + " (embedded in NAT64)"
			}
		}
		if b[0] == 0x20 && b[1] == 0x02 {
			if r := internal(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
				return r + " (embedded in 6to4)"
			}
		}
		// IPv4-compatible (::a.b.c.d, deprecated) forms.
		if [12]byte(b[:12]) == [12]byte{} && !addr.IsUnspecified() && !addr.IsLoopback() {
			return "an IPv4-compatible IPv6 address"
		}
	}
	switch {
	case !addr.IsValid():
		return "not a valid address"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsPrivate():
		return "private"
	case addr.IsLinkLocalUnicast():
		return "link-local (cloud metadata lives here)"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return "reserved (" + p.String() + ")"
		}
	}
	return ""
}

// Control is a net.Dialer Control function: it refuses a connection to a
// forbidden address after DNS resolution and before the connection is made.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrForbidden, address)
	}
	if !strings.HasPrefix(network, "tcp") {
		return fmt.Errorf("%w: network %s", ErrForbidden, network)
	}
	return g.Check(ap.Addr())
}

// Dialer returns a dialer that applies the guard to every connection. A
// Control or ControlContext already set on base still runs, after the guard
// allowed the address. (net.Dialer ignores Control when ControlContext is set,
// so the guard is installed as ControlContext: setting only Control would let
// a base ControlContext silently switch the guard off.)
func (g *Guard) Dialer(base net.Dialer) *net.Dialer {
	d := base
	prev, prevCtx := base.Control, base.ControlContext
	d.Control = nil
	d.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := g.Control(network, address, c); err != nil {
			return err
		}
		switch {
		case prevCtx != nil:
			return prevCtx(ctx, network, address, c)
		case prev != nil:
			return prev(network, address, c)
		}
		return nil
	}
	return &d
}
