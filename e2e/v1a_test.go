//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/verify"
)

// v1aEndpoint creates an endpoint signed with schemes and returns its id,
// secret and public keys as the create answer shows them.
func v1aEndpoint(t *testing.T, key, url string, schemes ...string) (id, secret string, pubs []string) {
	t.Helper()
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": url, "description": "e2e v1a", "signatures": schemes})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.NotContains(t, fmt.Sprint(body), "whsk_", "the private key is never answered")
	return body["id"].(string), body["secret"].(string), strs(body["public_keys"])
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// endpointPublicKeys is GET /v1/endpoints/{id}'s public_keys.
func endpointPublicKeys(t *testing.T, key, id string) []string {
	t.Helper()
	status, body := call(t, "GET", "/v1/endpoints/"+id, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	return strs(body["public_keys"])
}

// jwksKeys reads the tenant's JWKS document and returns endpoint id's keys
// from it, as a receiver does (verify.KeysFromJWKS).
func jwksKeys(t *testing.T, key, id string) []string {
	t.Helper()
	status, body := call(t, "GET", "/v1/jwks.json", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	doc, err := json.Marshal(body)
	require.NoError(t, err)
	keys, err := verify.KeysFromJWKS(doc, id)
	require.NoError(t, err)
	return keys
}

func verifies(t *testing.T, r received, keys ...string) error {
	t.Helper()
	v, err := verify.New(keys...)
	require.NoError(t, err)
	return v.Verify(r.Header, r.Body)
}

// An endpoint signed with v1a: what it receives verifies with the public
// key from GET /v1/endpoints/{id} and with the one from /v1/jwks.json,
// and not with the endpoint's secret.
func TestV1aDelivery(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "v1a")
	rcv := newReceiver(t, status(200))
	ep, secret, pubs := v1aEndpoint(t, key, rcv.URL+"/hook", "v1a")
	require.Len(t, pubs, 1)
	require.Equal(t, pubs, endpointPublicKeys(t, key, ep))
	fromJWKS := jwksKeys(t, key, ep)
	require.Equal(t, pubs, fromJWKS)
	requireNoPlaintextSecret(t, endpointItem(t, tenantID, ep), secret)
	require.Contains(t, endpointItem(t, tenantID, ep), "sealed_signing_keys")

	write(t, event(tenant{ID: tenantID}, "evt_v1a_1_"+tenantID, "order.created", `{"n":1}`))
	r := rcv.waitFor(t, 1, 30*time.Second)[0]
	sig := r.Header.Get("webhook-signature")
	require.True(t, strings.HasPrefix(sig, "v1a,"), sig)
	require.Len(t, strings.Fields(sig), 1)
	require.NoError(t, verifies(t, r, pubs...), "the key from GET /v1/endpoints/{id}")
	require.NoError(t, verifies(t, r, fromJWKS...), "the key from the JWKS")
	require.ErrorIs(t, verifies(t, r, secret), verify.ErrNoMatchingSignature, "no v1 entry")
	r.Body = append(r.Body, ' ')
	require.ErrorIs(t, verifies(t, r, pubs...), verify.ErrNoMatchingSignature)
}

// An endpoint migrating (both schemes) verifies under each; switching to
// v1a alone by PATCH keeps the key.
func TestV1aBothSchemes(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "v1both")
	rcv := newReceiver(t, status(200))
	ep, secret := apiEndpoint(t, key, rcv.URL+"/hook")
	status, body := call(t, "PATCH", "/v1/endpoints/"+ep, key, map[string]any{"signatures": []string{"v1", "v1a"}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	pubs := strs(body["public_keys"])
	require.Len(t, pubs, 1)

	write(t, event(tenant{ID: tenantID}, "evt_v1b_1_"+tenantID, "order.created", `{}`))
	r := rcv.waitFor(t, 1, 30*time.Second)[0]
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 2)
	require.NoError(t, verifies(t, r, secret), "v1, with the secret")
	require.NoError(t, verifies(t, r, pubs...), "v1a, with the public key")
	require.NoError(t, verifies(t, r, jwksKeys(t, key, ep)...), "v1a, with the JWKS")

	status, body = call(t, "PATCH", "/v1/endpoints/"+ep, key, map[string]any{"signatures": []string{"v1a"}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, pubs, strs(body["public_keys"]), "the same key")
	write(t, event(tenant{ID: tenantID}, "evt_v1b_2_"+tenantID, "order.created", `{}`))
	r = rcv.waitFor(t, 2, 30*time.Second)[1]
	require.NoError(t, verifies(t, r, pubs...))
	require.ErrorIs(t, verifies(t, r, secret), verify.ErrNoMatchingSignature, "v1 switched off")
}

// After a rotation both Ed25519 keys sign (and verify) during the overlap,
// and the new one alone after it.
func TestV1aRotation(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "v1arot")
	rcv := newReceiver(t, status(200))
	ep, _, oldPubs := v1aEndpoint(t, key, rcv.URL+"/hook", "v1a")
	status, body := call(t, "POST", "/v1/endpoints/"+ep+"/rotate-secret", key, map[string]any{"grace_seconds": 4})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.NotContains(t, fmt.Sprint(body), "whsk_")
	pubs := strs(body["public_keys"])
	require.Len(t, pubs, 2)
	require.Equal(t, oldPubs[0], pubs[1])
	newPub := pubs[:1]
	require.ElementsMatch(t, pubs, jwksKeys(t, key, ep), "both keys in the JWKS during the overlap")

	write(t, event(tenant{ID: tenantID}, "evt_v1ar_1_"+tenantID, "order.created", `{}`))
	r := rcv.waitFor(t, 1, 30*time.Second)[0]
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 2, "both keys sign during the overlap")
	require.NoError(t, verifies(t, r, oldPubs...), "the old key still verifies")
	require.NoError(t, verifies(t, r, newPub...), "the new key verifies")

	time.Sleep(5 * time.Second)
	require.Equal(t, newPub, endpointPublicKeys(t, key, ep))
	require.Equal(t, newPub, jwksKeys(t, key, ep))
	write(t, event(tenant{ID: tenantID}, "evt_v1ar_2_"+tenantID, "order.created", `{}`))
	r = rcv.waitFor(t, 2, 30*time.Second)[1]
	require.NoError(t, verifies(t, r, newPub...))
	require.ErrorIs(t, verifies(t, r, oldPubs...), verify.ErrNoMatchingSignature, "the old key no longer signs")
}

// One tenant's JWKS never holds another's keys.
func TestV1aJWKSIsolation(t *testing.T) {
	t.Parallel()
	_, keyA := apiTenant(t, "v1aiso_a")
	_, keyB := apiTenant(t, "v1aiso_b")
	epA, _, _ := v1aEndpoint(t, keyA, "https://a.example.com/hook", "v1a")
	v1aEndpoint(t, keyB, "https://b.example.com/hook", "v1a")
	status, body := call(t, "GET", "/v1/jwks.json", keyB, nil)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, fmt.Sprint(body), epA)
	require.Len(t, body["keys"], 1)
	status, _ = call(t, "GET", "/v1/endpoints/"+epA, keyB, nil)
	require.Equal(t, http.StatusNotFound, status)
}

// The console's form chooses the scheme, and the endpoint's row shows it
// with the public key, as text.
func TestV1aConsole(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "v1acon")
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)
	choose := func(value string) {
		t.Helper()
		evalIn[bool](b, fmt.Sprintf(`(() => { document.querySelector(%q).value = %q; return true; })()`, dt("endpoint-signatures"), value))
	}

	b.click(dt("endpoint-create"))
	b.typ(dt("endpoint-url"), "https://v1a.example.com/hook")
	choose("v1a")
	b.click(dt("endpoint-save"))
	b.wait(dt("secret"))
	b.click(dt("secret-dismiss"))
	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	ep := list["data"].([]any)[0].(map[string]any)
	require.Equal(t, []any{"v1a"}, ep["signatures"])
	pub := strs(ep["public_keys"])[0]
	sigText := row("endpoint-row", ep["id"].(string)) + " " + dt("endpoint-signatures-text")
	b.waitText(sigText, "signed v1a")
	require.Contains(t, b.text(sigText), pub)

	b.click(row("endpoint-row", ep["id"].(string)) + " " + dt("endpoint-edit"))
	b.waitJS("the form holds the endpoint's scheme", stepTimeout,
		`(sel) => document.querySelector(sel).value === "v1a"`, dt("endpoint-signatures"))
	choose("v1,v1a")
	b.click(dt("endpoint-save"))
	b.waitText(sigText, "signed v1 + v1a")
	require.Equal(t, []string{pub}, endpointPublicKeys(t, key, ep["id"].(string)), "the same key")
	b.assertSafe("endpoints")
}
