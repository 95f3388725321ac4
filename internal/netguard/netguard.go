package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
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
	// Deny lists prefixes that are refused even when Allow covers them:
	// the range of the network the deliveries are sent from, such as the
	// VPC the deliver function runs in with static egress, whose every
	// address is hookline's own and none a receiver's. An operator who
	// allows 10.0.0.0/8 to reach a peered network keeps the function's own
	// range refused. Default none.
	Deny []netip.Prefix
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
	if p, ok := g.denied(addr); ok {
		return fmt.Errorf("%w: %s is in %s, the network deliveries are sent from", ErrForbidden, addr, p)
	}
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

// denied reports the prefix of Deny that covers addr, or an IPv4 address
// addr carries (IPv4-mapped, NAT64, 6to4): Deny wins over Allow in every
// form of the address, as the internal ranges do.
func (g *Guard) denied(addr netip.Addr) (netip.Prefix, bool) {
	for _, p := range g.Deny {
		for _, a := range carried(addr.WithZone("")) {
			if p.Contains(a) {
				return p, true
			}
		}
	}
	return netip.Prefix{}, false
}

// carried is addr and the IPv4 address it embeds, if any: its unmapped
// form (::ffff:a.b.c.d), NAT64's (64:ff9b::/96) or 6to4's (2002::/16).
func carried(addr netip.Addr) []netip.Addr {
	out := []netip.Addr{addr}
	if addr.Is4In6() {
		return append(out, addr.Unmap())
	}
	if addr.Is6() {
		b := addr.As16()
		switch {
		case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b:
			out = append(out, netip.AddrFrom4([4]byte(b[12:16])))
		case b[0] == 0x20 && b[1] == 0x02:
			out = append(out, netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return out
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

// URLPolicy is the registration-time check of an endpoint URL. The zero value
// accepts https URLs to public hosts only.
type URLPolicy struct {
	// AllowHTTP accepts plain http URLs too. Default false: https only.
	AllowHTTP bool
	// Guard checks hosts that are IP literals. Default: the zero Guard.
	Guard Guard
}

// ErrBadURL is wrapped by every refusal of CheckURL.
var ErrBadURL = errors.New("endpoint URL is not acceptable")

// CheckURL validates an endpoint URL before it is stored: an absolute http(s)
// URL with a host, no user info, a valid port, and, when the host is an IP
// address or a name that always means this machine, an address the guard
// allows. Names are resolved only at dial time, where the guard runs again.
func (p URLPolicy) CheckURL(raw string) error {
	if len(raw) > 2048 {
		return badURL("longer than 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return badURL("cannot be parsed")
	}
	if err := p.checkScheme(u.Scheme); err != nil {
		return err
	}
	if u.User != nil {
		return badURL("user info (user:password@) is not allowed: send credentials as custom headers")
	}
	host := u.Hostname()
	if host == "" {
		return badURL("host is missing")
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return badURL("port %q is not a number from 1 to 65535", port)
		}
	}
	return p.checkHost(host)
}

// badURL is CheckURL's refusal, wrapping ErrBadURL, saying why as format
// does.
func badURL(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadURL}, args...)...)
}

// checkScheme accepts https, and http when the policy allows it.
func (p URLPolicy) checkScheme(scheme string) error {
	switch scheme {
	case "https":
		return nil
	case "http":
		if !p.AllowHTTP {
			return badURL("scheme http is not allowed: use https")
		}
		return nil
	default:
		return badURL("scheme %q is not allowed: use https", scheme)
	}
}

// checkHost has the guard check the address a URL's host always means: this
// machine for localhost and its subdomains, an IP literal's own, or the
// IPv4 address of a legacy spelling (parseLegacyIPv4). Any other name is
// resolved, and checked, only at dial time.
func (p URLPolicy) checkHost(host string) error {
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		if err := p.Guard.Check(netip.MustParseAddr("127.0.0.1")); err != nil {
			return badURL("host %s is this machine", host)
		}
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if err := p.Guard.Check(addr); err != nil {
			return badURL("%v", err)
		}
		return nil
	}
	if ip := parseLegacyIPv4(lower); ip.IsValid() {
		if err := p.Guard.Check(ip); err != nil {
			return badURL("host %s is %v", host, err)
		}
	}
	return nil
}

// parseLegacyIPv4 reads the IPv4 spellings that inet_aton accepts and
// netip does not (decimal "2130706433", hex "0x7f000001", octal "0177.0.0.1",
// short "127.1"), so they cannot smuggle an internal address past CheckURL.
func parseLegacyIPv4(s string) netip.Addr {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 255 {
			return netip.Addr{}
		}
		n |= v << (24 - 8*i)
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
