package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
)

// GET /v1/egress-ips: without static egress, static false, no address and
// the advice to verify signatures; with it, the stack's addresses, the same
// for every tenant and for a portal link without any scope. Like every
// tenant route it wants a tenant credential.
func TestEgressIPs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")

	off := decodeJSON[api.EgressView](t, e.do("GET", "/v1/egress-ips", key, nil))
	require.False(t, off.Static)
	require.NotNil(t, off.IPs, "[] in JSON, never null: a client iterates it")
	require.Empty(t, off.IPs)
	require.Contains(t, off.Message, "AWS's shared address ranges")
	require.Contains(t, off.Message, "webhook-signature")
	rec := e.do("GET", "/v1/egress-ips", key, nil)
	require.Contains(t, rec.Body.String(), `"static":false,"ips":[]`)

	e.srv.EgressIPs = []string{"203.0.113.10", "198.51.100.7"}
	other := e.newTenant("globex")
	link := e.mintPortalLink("acme", map[string]any{"scopes": []string{}})
	for _, cred := range []string{key, other, link.Token} {
		on := decodeJSON[api.EgressView](t, e.do("GET", "/v1/egress-ips", cred, nil))
		require.Equal(t, api.EgressView{Static: true, IPs: []string{"203.0.113.10", "198.51.100.7"}, Message: on.Message}, on)
		require.Contains(t, on.Message, "these addresses only")
		require.Contains(t, on.Message, "webhook-signature", "an address is no signature")
	}

	requireProblem(t, e.do("GET", "/v1/egress-ips", "", nil), http.StatusUnauthorized)
	requireProblem(t, e.do("GET", "/v1/egress-ips", operatorKey, nil), http.StatusUnauthorized)
}
