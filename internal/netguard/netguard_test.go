package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/netguard"
)

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// TestCheck covers every class of address the guard refuses, each with the
// reason it gives, and public addresses it lets through.
func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr   string
		reason string // substring of the refusal; "" means allowed
	}{
		// Loopback.
		{"127.0.0.1", "loopback"},
		{"127.1.2.3", "loopback"},
		{"127.255.255.255", "loopback"},
		{"::1", "loopback"},
		// Private (RFC 1918) and unique-local (fc00::/7).
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.254", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12::1", "private"},
		// Link-local, where cloud metadata lives.
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		// CGNAT.
		{"100.64.0.1", "reserved (100.64.0.0/10)"},
		{"100.127.255.254", "reserved (100.64.0.0/10)"},
		// Multicast.
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"ff01::1", "multicast"},
		{"ff0e::1", "multicast"},
		// Unspecified and "this network".
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "reserved (0.0.0.0/8)"},
		// Broadcast and reserved.
		{"255.255.255.255", "reserved (240.0.0.0/4)"},
		{"240.0.0.1", "reserved (240.0.0.0/4)"},
		{"198.18.0.1", "reserved (198.18.0.0/15)"},
		{"198.19.255.254", "reserved (198.18.0.0/15)"},
		{"192.0.0.8", "reserved (192.0.0.0/24)"},
		{"192.0.2.1", "reserved (192.0.2.0/24)"},
		{"198.51.100.1", "reserved (198.51.100.0/24)"},
		{"203.0.113.1", "reserved (203.0.113.0/24)"},
		{"100::1", "reserved (100::/64)"},
		{"2001:db8::1", "reserved (2001:db8::/32)"},
		{"fec0::1", "reserved (fec0::/10)"},
		// IPv4-mapped IPv6.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:100.64.0.1", "reserved (100.64.0.0/10)"},
		{"::ffff:0.0.0.0", "unspecified"},
		// IPv4 embedded in NAT64 and 6to4.
		{"64:ff9b::a9fe:a9fe", "link-local (cloud metadata lives here) (embedded in NAT64)"},
		{"64:ff9b::7f00:1", "loopback (embedded in NAT64)"},
		{"64:ff9b::a00:1", "private (embedded in NAT64)"},
		{"2002:7f00:1::1", "loopback (embedded in 6to4)"},
		{"2002:a9fe:a9fe::1", "link-local (cloud metadata lives here) (embedded in 6to4)"},
		{"2002:c0a8:101::1", "private (embedded in 6to4)"},
		// IPv4-compatible IPv6 (deprecated).
		{"::127.0.0.1", "IPv4-compatible"},
		{"::169.254.169.254", "IPv4-compatible"},
		{"::8.8.8.8", "IPv4-compatible"},

		// Public unicast: allowed.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.216.34", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:80b::200e", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},   // NAT64 of a public address
		{"2002:808:808::1", ""},    // 6to4 of a public address
		{"100.128.0.1", ""},        // just past CGNAT
		{"172.32.0.1", ""},         // just past 172.16.0.0/12
		{"223.255.255.254", ""},    // just below multicast
		{"198.20.0.1", ""},         // just past the benchmarking range
		{"169.255.0.1", ""},        // just past link-local
		{"11.0.0.1", ""},           // just past 10.0.0.0/8
		{"126.255.255.255", ""},    // just below loopback
		{"128.0.0.1", ""},          // just past loopback
		{"192.169.0.1", ""},        // just past 192.168.0.0/16
		{"2001:db9::1", ""},        // just past documentation
		{"64:ff9c::a9fe:a9fe", ""}, // not the NAT64 prefix
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			addr := netip.MustParseAddr(tc.addr)
			err := (&netguard.Guard{}).Check(addr)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, netguard.ErrForbidden)
			require.Contains(t, err.Error(), tc.reason)
			require.Contains(t, err.Error(), addr.String(), "the refusal names the address")
		})
	}
}

func TestCheckInvalidAddress(t *testing.T) {
	t.Parallel()
	err := (&netguard.Guard{}).Check(netip.Addr{})
	require.ErrorIs(t, err, netguard.ErrForbidden)
	require.Contains(t, err.Error(), "not a valid address")
}

func TestCheckAllowlist(t *testing.T) {
	t.Parallel()
	g := &netguard.Guard{Allow: loopbackOnly}
	tests := []struct {
		addr    string
		allowed bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"127.255.255.255", true},
		{"::ffff:127.0.0.1", true},
		{"8.8.8.8", true}, // public stays allowed
		{"10.0.0.1", false},
		{"169.254.169.254", false},
		{"::ffff:169.254.169.254", false},
		{"::1", false},               // IPv6 loopback is not in 127.0.0.0/8
		{"::127.0.0.1", false},       // nor is the IPv4-compatible form
		{"64:ff9b::7f00:1", false},   // nor NAT64
		{"2002:7f00:1::1", false},    // nor 6to4
		{"192.168.1.1", false},       // other private ranges stay refused
		{"100.64.0.1", false},        // and CGNAT
		{"0.0.0.0", false},           // and unspecified
		{"255.255.255.255", false},   // and broadcast
		{"fe80::1", false},           // and link-local
		{"224.0.0.1", false},         // and multicast
		{"::ffff:10.0.0.1", false},   // and mapped private
		{"::ffff:100.64.0.1", false}, // and mapped CGNAT
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := g.Check(netip.MustParseAddr(tc.addr))
			if tc.allowed {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, netguard.ErrForbidden)
			}
		})
	}

	t.Run("several prefixes", func(t *testing.T) {
		g := &netguard.Guard{Allow: []netip.Prefix{
			netip.MustParsePrefix("10.1.0.0/16"),
			netip.MustParsePrefix("fd00::/8"),
		}}
		require.NoError(t, g.Check(netip.MustParseAddr("10.1.2.3")))
		require.NoError(t, g.Check(netip.MustParseAddr("::ffff:10.1.2.3")))
		require.NoError(t, g.Check(netip.MustParseAddr("fd12::1")))
		require.ErrorIs(t, g.Check(netip.MustParseAddr("10.2.0.1")), netguard.ErrForbidden)
		require.ErrorIs(t, g.Check(netip.MustParseAddr("fc00::1")), netguard.ErrForbidden)
		require.ErrorIs(t, g.Check(netip.MustParseAddr("127.0.0.1")), netguard.ErrForbidden)
	})
}

func TestControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		network string
		address string
		reason  string // "" means allowed
	}{
		{"tcp4 public", "tcp4", "8.8.8.8:443", ""},
		{"tcp6 public", "tcp6", "[2606:4700:4700::1111]:443", ""},
		{"tcp public", "tcp", "1.1.1.1:80", ""},
		{"tcp4 loopback", "tcp4", "127.0.0.1:80", "loopback"},
		{"tcp6 loopback", "tcp6", "[::1]:80", "loopback"},
		{"tcp4 metadata", "tcp4", "169.254.169.254:80", "link-local"},
		{"tcp6 mapped metadata", "tcp6", "[::ffff:169.254.169.254]:80", "link-local"},
		{"tcp6 zoned link-local", "tcp6", "[fe80::1%eth0]:80", "link-local"},
		{"udp4 public", "udp4", "8.8.8.8:53", "network udp4"},
		{"udp6 public", "udp6", "[2606:4700:4700::1111]:53", "network udp6"},
		{"ip4 public", "ip4", "8.8.8.8:0", "network ip4"},
		{"unix socket", "unix", "/var/run/docker.sock", "cannot parse"},
		{"host name", "tcp4", "localhost:80", "cannot parse"},
		{"no port", "tcp4", "8.8.8.8", "cannot parse"},
		{"empty", "tcp4", "", "cannot parse"},
		{"garbage", "tcp4", "not an address", "cannot parse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := (&netguard.Guard{}).Control(tc.network, tc.address, nil)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, netguard.ErrForbidden)
			require.Contains(t, err.Error(), tc.reason)
		})
	}

	t.Run("allowlist does not admit other networks", func(t *testing.T) {
		g := &netguard.Guard{Allow: loopbackOnly}
		require.NoError(t, g.Control("tcp4", "127.0.0.1:80", nil))
		require.ErrorIs(t, g.Control("udp4", "127.0.0.1:53", nil), netguard.ErrForbidden)
	})
}

// listen returns a loopback listener and the port it listens on.
func listen(t *testing.T) (*net.TCPListener, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	_, port, err := net.SplitHostPort(l.Addr().String())
	require.NoError(t, err)
	return l.(*net.TCPListener), port
}

// requireNoConnection asserts that nothing connected to l.
func requireNoConnection(t *testing.T, l *net.TCPListener) {
	t.Helper()
	require.NoError(t, l.SetDeadline(time.Now().Add(50*time.Millisecond)))
	c, err := l.Accept()
	if err == nil {
		c.Close()
	}
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "the listener accepted a connection (err %v)", err)
}

func TestDialer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	t.Run("refuses loopback for real", func(t *testing.T) {
		l, port := listen(t)
		d := (&netguard.Guard{}).Dialer(net.Dialer{Timeout: time.Second})
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port))
		if c != nil {
			c.Close()
		}
		require.ErrorIs(t, err, netguard.ErrForbidden)
		requireNoConnection(t, l)
	})

	t.Run("refuses a host name that resolves to loopback", func(t *testing.T) {
		if _, err := net.DefaultResolver.LookupHost(ctx, "localhost"); err != nil {
			t.Skipf("localhost does not resolve here: %v", err)
		}
		l, port := listen(t)
		d := (&netguard.Guard{}).Dialer(net.Dialer{Timeout: time.Second})
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
		if c != nil {
			c.Close()
		}
		require.ErrorIs(t, err, netguard.ErrForbidden)
		requireNoConnection(t, l)
	})

	t.Run("refuses the IPv4-mapped form", func(t *testing.T) {
		l, port := listen(t)
		d := (&netguard.Guard{}).Dialer(net.Dialer{Timeout: time.Second})
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("::ffff:127.0.0.1", port))
		if c != nil {
			c.Close()
		}
		require.ErrorIs(t, err, netguard.ErrForbidden)
		requireNoConnection(t, l)
	})

	t.Run("allows loopback with the allowlist", func(t *testing.T) {
		l, port := listen(t)
		d := (&netguard.Guard{Allow: loopbackOnly}).Dialer(net.Dialer{Timeout: time.Second})
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port))
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, l.SetDeadline(time.Now().Add(2*time.Second)))
		s, err := l.Accept()
		require.NoError(t, err)
		s.Close()
	})

	t.Run("keeps the base dialer settings", func(t *testing.T) {
		base := net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}
		d := (&netguard.Guard{}).Dialer(base)
		require.Equal(t, base.Timeout, d.Timeout)
		require.Equal(t, base.KeepAlive, d.KeepAlive)
		require.Nil(t, base.Control, "the base dialer is not modified")
		require.Nil(t, base.ControlContext, "the base dialer is not modified")
	})

	// net.Dialer ignores Control when ControlContext is set: a base dialer
	// with its own ControlContext must neither switch the guard off nor be
	// dropped.
	for _, withCtx := range []bool{true, false} {
		name := "base Control"
		if withCtx {
			name = "base ControlContext"
		}
		t.Run(name+" runs after the guard", func(t *testing.T) {
			calls := 0
			base := net.Dialer{Timeout: time.Second}
			if withCtx {
				base.ControlContext = func(context.Context, string, string, syscall.RawConn) error {
					calls++
					return nil
				}
			} else {
				base.Control = func(string, string, syscall.RawConn) error {
					calls++
					return nil
				}
			}
			l, port := listen(t)
			addr := net.JoinHostPort("127.0.0.1", port)

			c, err := (&netguard.Guard{}).Dialer(base).DialContext(ctx, "tcp", addr)
			if c != nil {
				c.Close()
			}
			require.ErrorIs(t, err, netguard.ErrForbidden)
			require.Zero(t, calls, "the base hook runs only once the guard allowed the address")
			requireNoConnection(t, l)

			c, err = (&netguard.Guard{Allow: loopbackOnly}).Dialer(base).DialContext(ctx, "tcp", addr)
			require.NoError(t, err)
			c.Close()
			require.Equal(t, 1, calls)
		})
	}

	t.Run("base Control error is returned", func(t *testing.T) {
		_, port := listen(t)
		boom := errors.New("boom")
		base := net.Dialer{Timeout: time.Second, Control: func(string, string, syscall.RawConn) error { return boom }}
		_, err := (&netguard.Guard{Allow: loopbackOnly}).Dialer(base).DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port))
		require.ErrorIs(t, err, boom)
	})
}

func TestParsePrefixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", "   ", nil},
		{"only commas", " , ,, ", nil},
		{"one", "127.0.0.0/8", []string{"127.0.0.0/8"}},
		{"two", "127.0.0.0/8,10.0.0.0/8", []string{"127.0.0.0/8", "10.0.0.0/8"}},
		{"spaces", "  127.0.0.0/8 ,\t10.0.0.0/8\n", []string{"127.0.0.0/8", "10.0.0.0/8"}},
		{"empty entries", ",127.0.0.0/8,,::1/128,", []string{"127.0.0.0/8", "::1/128"}},
		{"masked", "10.1.2.3/8, fd12:3456::1/16", []string{"10.0.0.0/8", "fd12::/16"}},
		{"host prefix", "192.168.1.10/32", []string{"192.168.1.10/32"}},
		{"ipv6", "fd00::/8,fe80::/10", []string{"fd00::/8", "fe80::/10"}},
		{"mapped", "::ffff:127.0.0.0/104", []string{"::ffff:127.0.0.0/104"}},
		{"everything", "0.0.0.0/0,::/0", []string{"0.0.0.0/0", "::/0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := netguard.ParsePrefixes(tc.in)
			require.NoError(t, err)
			var want []netip.Prefix
			for _, s := range tc.want {
				want = append(want, netip.MustParsePrefix(s))
			}
			require.Equal(t, want, got)
		})
	}

	bad := []struct {
		name  string
		in    string
		entry string
	}{
		{"bare address", "10.0.0.1", "10.0.0.1"},
		{"bits too large", "127.0.0.0/33", "127.0.0.0/33"},
		{"ipv6 bits too large", "::1/129", "::1/129"},
		{"host name", "localhost/8", "localhost/8"},
		{"bad among good", "127.0.0.0/8, nope ,10.0.0.0/8", "nope"},
		{"zone", "fe80::1%eth0/64", "fe80::1%eth0/64"},
		{"negative bits", "10.0.0.0/-1", "10.0.0.0/-1"},
		{"semicolon separator", "127.0.0.0/8;10.0.0.0/8", "127.0.0.0/8;10.0.0.0/8"},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.name, func(t *testing.T) {
			got, err := netguard.ParsePrefixes(tc.in)
			require.Error(t, err)
			require.Nil(t, got, "no partial list on error")
			require.Contains(t, err.Error(), `allowlist entry "`+tc.entry+`"`)
		})
	}
}

// FuzzParsePrefixes checks that ParsePrefixes never panics, that on success
// every prefix is valid and masked, and that the result survives a round trip
// through its string form; on failure the error names the offending entry.
func FuzzParsePrefixes(f *testing.F) {
	for _, s := range []string{
		"", " ", ",", "127.0.0.0/8", "127.0.0.0/8,10.0.0.0/8", " 10.1.2.3/8 ,, ::1/128 ,",
		"10.0.0.1", "::ffff:127.0.0.0/104", "fe80::1%eth0/64", "0.0.0.0/0,::/0",
		"1.2.3.4/33", "/8", "1.2.3.4/", "::/0,", "\x00", "1.2.3.4/08",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := netguard.ParsePrefixes(s)
		if err != nil {
			if got != nil {
				t.Fatalf("ParsePrefixes(%q) returned %v with error %v", s, got, err)
			}
			if !strings.Contains(err.Error(), "allowlist entry ") {
				t.Fatalf("ParsePrefixes(%q) error %q does not name the entry", s, err)
			}
			return
		}
		strs := make([]string, len(got))
		for i, p := range got {
			if !p.IsValid() {
				t.Fatalf("ParsePrefixes(%q)[%d] = %v is not valid", s, i, p)
			}
			if p != p.Masked() {
				t.Fatalf("ParsePrefixes(%q)[%d] = %v is not masked", s, i, p)
			}
			strs[i] = p.String()
		}
		again, err := netguard.ParsePrefixes(strings.Join(strs, ","))
		if err != nil {
			t.Fatalf("re-parsing %q: %v", strings.Join(strs, ","), err)
		}
		if len(again) != len(got) {
			t.Fatalf("round trip of %q: %v != %v", s, again, got)
		}
		for i := range got {
			if again[i] != got[i] {
				t.Fatalf("round trip of %q: %v != %v", s, again, got)
			}
		}
		// A guard built from any parsed list never panics on any address.
		g := &netguard.Guard{Allow: got}
		for _, a := range []string{"127.0.0.1", "::ffff:169.254.169.254", "8.8.8.8", "fe80::1%eth0"} {
			_ = g.Check(netip.MustParseAddr(a))
		}
	})
}
