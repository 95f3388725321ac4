package netguard

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := URLPolicy{}
	local := URLPolicy{AllowHTTP: true, Guard: Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	cases := []struct {
		url    string
		policy URLPolicy
		want   string // "" means accepted, else a part of the error
	}{
		{"https://hooks.example.com/in", strict, ""},
		{"https://hooks.example.com:8443/in?x=1", strict, ""},
		{"https://93.184.216.34/in", strict, ""},
		{"http://hooks.example.com/in", strict, "scheme http is not allowed"},
		{"http://hooks.example.com/in", URLPolicy{AllowHTTP: true}, ""},
		{"ftp://hooks.example.com/", strict, `scheme "ftp"`},
		{"hooks.example.com/in", strict, `scheme ""`},
		{"https://user:pw@hooks.example.com/", strict, "user info"},
		{"https:///nohost", strict, "host is missing"},
		{"https://hooks.example.com:0/", strict, "port"},
		{"https://hooks.example.com:99999/", strict, "port"},
		{"https://%zz/", strict, "cannot be parsed"},
		{"https://localhost/", strict, "this machine"},
		{"https://api.localhost/", strict, "this machine"},
		{"https://LOCALHOST./", strict, "this machine"},
		{"https://127.0.0.1/", strict, "loopback"},
		{"https://[::1]/", strict, "loopback"},
		{"https://[::ffff:169.254.169.254]/", strict, "link-local"},
		{"https://169.254.169.254/latest/meta-data", strict, "link-local"},
		{"https://10.1.2.3/", strict, "private"},
		{"https://[fd00::1]/", strict, "private"},
		{"https://100.64.0.1/", strict, "reserved"},
		{"https://2130706433/", strict, "loopback"},
		{"https://0x7f000001/", strict, "loopback"},
		{"https://0177.0.0.1/", strict, "loopback"},
		{"https://127.1/", strict, "loopback"},
		{"https://0xa9.0xfe.0xa9.0xfe/", strict, "link-local"},
		{"http://127.0.0.1:8080/hook", local, ""},
		{"http://localhost:8080/hook", local, ""},
		{"http://10.0.0.1/hook", local, "private"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			err := tc.policy.CheckURL(tc.url)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrBadURL)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://a.example/", "http://127.1/", "https://[::1]:80/", "https://0x7f.1/", "https://u@h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_ = URLPolicy{}.CheckURL(raw)
		_ = URLPolicy{AllowHTTP: true}.CheckURL(raw)
	})
}
