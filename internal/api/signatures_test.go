package api_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/verify"
)

// signingKeys opens an endpoint's stored Ed25519 keys as deliver does and
// checks they are sealed (no plaintext in the store).
func (e *env) signingKeys(tenantID, endpointID string) []string {
	e.tb.Helper()
	stored, ok := e.store.endpoint(tenantID, endpointID)
	require.True(e.tb, ok)
	o := &sealing.Opener{KMS: e.kms, KeyID: sealingtest.KeyARN}
	var out []string
	for _, s := range stored.SealedSigningKeys {
		require.False(e.tb, strings.HasPrefix(s, signing.SigningKeyPrefix), "a signing key is stored sealed")
		plain, err := o.Open(context.Background(), sealing.Ref{TenantID: tenantID, EndpointID: endpointID}, s)
		require.NoError(e.tb, err)
		require.NotContains(e.tb, s, plain)
		out = append(out, plain)
	}
	return out
}

func (e *env) jwks(key string) api.JWKS {
	e.tb.Helper()
	rec := e.do("GET", "/v1/jwks.json", key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code, rec.Body.String())
	return decodeJSON[api.JWKS](e.tb, rec)
}

func withSignatures(schemes ...string) map[string]any {
	b := validEndpoint()
	b["signatures"] = schemes
	return b
}

// requirePair: the public key the API shows is the public half of the
// sealed private key deliver signs with.
func requirePair(t *testing.T, signingKey, pub string) {
	t.Helper()
	got, err := signing.PublicKeyOf(signingKey)
	require.NoError(t, err)
	require.Equal(t, pub, got)
}

func TestCreateEndpointV1a(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	rec := e.do("POST", "/v1/endpoints", key, withSignatures("v1a"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), signing.SigningKeyPrefix, "the private key is never answered")
	v := decodeJSON[api.EndpointView](t, rec)
	require.Equal(t, []string{"v1a"}, v.Signatures)
	require.Len(t, v.PublicKeys, 1)
	require.Regexp(t, `^whpk_[A-Za-z0-9+/]{43}=$`, v.PublicKeys[0])
	keys := e.signingKeys("acme", v.ID)
	require.Len(t, keys, 1)
	requirePair(t, keys[0], v.PublicKeys[0])
	require.NotContains(t, e.logs.String(), strings.TrimPrefix(keys[0], "whsk_"), "the key is never logged")

	got := e.getEndpoint(key, v.ID)
	require.Equal(t, v.PublicKeys, got.PublicKeys)
	require.Equal(t, []string{"v1a"}, got.Signatures)
	require.NotContains(t, e.do("GET", "/v1/endpoints", key, nil).Body.String(), signing.SigningKeyPrefix)

	// Both, in either order, are stored in one order; v1 alone has no key.
	both := e.createEndpoint(key, withSignatures("v1a", "v1"))
	require.Equal(t, []string{"v1", "v1a"}, both.Signatures)
	require.Len(t, both.PublicKeys, 1)
	plain := e.createEndpoint(key, nil)
	require.Equal(t, []string{"v1"}, plain.Signatures)
	require.Empty(t, plain.PublicKeys)
	require.Empty(t, e.signingKeys("acme", plain.ID))
}

func TestSignaturesValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"empty":       {map[string]any{"signatures": []string{}}, "signatures"},
		"unknown":     {map[string]any{"signatures": []string{"v1", "v2"}}, "signatures[1]"},
		"repeated":    {map[string]any{"signatures": []string{"v1a", "v1a"}}, "signatures[1]"},
		"wrong case":  {map[string]any{"signatures": []string{"V1A"}}, "signatures[0]"},
		"not a list":  {`{"signatures":"v1a"}`, "signatures"},
		"not strings": {`{"signatures":[1]}`, "signatures"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, req := range []struct{ method, target string }{{"PATCH", "/v1/endpoints/" + ep.ID}, {"POST", "/v1/endpoints"}} {
				body := tc.body
				if m, ok := body.(map[string]any); ok && req.method == "POST" {
					b := validEndpoint()
					b["signatures"] = m["signatures"]
					body = b
				} else if s, ok := body.(string); ok && req.method == "POST" {
					body = strings.Replace(s, "{", `{"url":"https://hooks.example.com/x",`, 1)
				}
				rec := e.do(req.method, req.target, key, body)
				require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
				require.Contains(t, rec.Body.String(), tc.field)
			}
		})
	}
	require.Equal(t, []string{"v1"}, e.getEndpoint(key, ep.ID).Signatures, "nothing changed")
}

// TestSwitchSchemes: v1 → both → v1a by PATCH; the key made when v1a is
// first asked for stays through the switches, back to v1 included.
func TestSwitchSchemes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	patch := func(schemes ...string) api.EndpointView {
		rec := e.do("PATCH", "/v1/endpoints/"+ep.ID, key, map[string]any{"signatures": schemes})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rec.Body.String(), signing.SigningKeyPrefix)
		return decodeJSON[api.EndpointView](t, rec)
	}
	both := patch("v1", "v1a")
	require.Equal(t, []string{"v1", "v1a"}, both.Signatures)
	require.Len(t, both.PublicKeys, 1)
	requirePair(t, e.signingKeys("acme", ep.ID)[0], both.PublicKeys[0])

	only := patch("v1a")
	require.Equal(t, []string{"v1a"}, only.Signatures)
	require.Equal(t, both.PublicKeys, only.PublicKeys, "the same key")
	back := patch("v1")
	require.Equal(t, both.PublicKeys, back.PublicKeys, "the key is kept")
	require.Empty(t, e.jwks(key).Keys, "an endpoint that signs v1 only is not in the JWKS")
	require.Equal(t, both.PublicKeys, patch("v1a").PublicKeys)

	// Another field alone leaves the schemes.
	rec := e.do("PATCH", "/v1/endpoints/"+ep.ID, key, map[string]any{"description": "x"})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, []string{"v1a"}, decodeJSON[api.EndpointView](t, rec).Signatures)

	rec = e.do("PATCH", "/v1/endpoints/ep_missing", key, map[string]any{"signatures": []string{"v1a"}})
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
}

// TestRotateV1a: a rotation makes a new Ed25519 key beside the new secret;
// the previous key stays listed (and signs) until the overlap ends.
func TestRotateV1a(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, withSignatures("v1", "v1a"))
	old := ep.PublicKeys[0]
	rec := e.do("POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", key, map[string]any{"grace_seconds": 3600})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), signing.SigningKeyPrefix)
	v := decodeJSON[api.EndpointView](t, rec)
	require.Regexp(t, secretRE, v.Secret)
	require.Len(t, v.PublicKeys, 2)
	require.Equal(t, old, v.PublicKeys[1], "the previous key second")
	require.NotEqual(t, old, v.PublicKeys[0])
	keys := e.signingKeys("acme", ep.ID)
	require.Len(t, keys, 2)
	requirePair(t, keys[0], v.PublicKeys[0])
	requirePair(t, keys[1], old)

	kids := func() []string {
		var out []string
		for _, k := range e.jwks(key).Keys {
			out = append(out, k.Kid)
		}
		return out
	}
	require.Len(t, kids(), 2)
	e.clock.Advance(time.Hour)
	require.Equal(t, v.PublicKeys[:1], e.getEndpoint(key, ep.ID).PublicKeys, "after the overlap, the new key alone")
	require.Len(t, kids(), 1)

	// An endpoint without a key keeps having none.
	plain := e.createEndpoint(key, nil)
	rec = e.do("POST", "/v1/endpoints/"+plain.ID+"/rotate-secret", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decodeJSON[api.EndpointView](t, rec).PublicKeys)
	require.Empty(t, e.signingKeys("acme", plain.ID))
}

// TestJWKS: the document lists the tenant's v1a endpoints' keys, each as an
// RFC 8037 key named by its endpoint, readable by the verify module; one
// tenant never sees another's.
func TestJWKS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acme, other := e.newTenant("acme"), e.newTenant("other")
	require.Equal(t, api.JWKS{Keys: []api.JWK{}}, e.jwks(acme), "no key: an empty list")
	a := e.createEndpoint(acme, withSignatures("v1a"))
	b := e.createEndpoint(acme, withSignatures("v1", "v1a"))
	e.createEndpoint(acme, nil)
	o := e.createEndpoint(other, withSignatures("v1a"))

	rec := e.do("GET", "/v1/jwks.json", acme, nil)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	doc := decodeJSON[api.JWKS](t, rec)
	require.Len(t, doc.Keys, 2)
	for _, k := range doc.Keys {
		require.Equal(t, "OKP", k.Kty)
		require.Equal(t, "Ed25519", k.Crv)
		require.Equal(t, "sig", k.Use)
		require.Equal(t, "EdDSA", k.Alg)
		raw, err := base64.RawURLEncoding.DecodeString(k.X)
		require.NoError(t, err)
		require.Equal(t, k.Kid[strings.Index(k.Kid, ".")+1:], signing.Thumbprint(ed25519.PublicKey(raw)))
	}
	for _, ep := range []api.EndpointView{a, b} {
		keys, err := verify.KeysFromJWKS(rec.Body.Bytes(), ep.ID)
		require.NoError(t, err)
		require.Equal(t, ep.PublicKeys, keys)
	}
	require.NotContains(t, rec.Body.String(), o.ID, "another tenant's endpoint")
	require.NotContains(t, rec.Body.String(), strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(strings.TrimPrefix(o.PublicKeys[0], "whpk_")), "="))

	// The other tenant sees only its own, and neither can read the other's endpoint.
	require.Len(t, e.jwks(other).Keys, 1)
	require.Equal(t, http.StatusNotFound, e.do("GET", "/v1/endpoints/"+a.ID, other, nil).Code)
	require.Equal(t, http.StatusNotFound, e.do("POST", "/v1/endpoints/"+a.ID+"/rotate-secret", other, nil).Code)
	require.Equal(t, http.StatusNotFound, e.do("PATCH", "/v1/endpoints/"+a.ID, other, map[string]any{"signatures": []string{"v1"}}).Code)
	require.Equal(t, http.StatusUnauthorized, e.do("GET", "/v1/jwks.json", "", nil).Code)
}

// TestJWKSPages: a tenant with more endpoints than one page lists them all.
func TestJWKSPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Caps.MaxEndpoints = 200 // more than a page, and than the default cap
	key := e.newTenant("acme")
	for range 105 {
		e.createEndpoint(key, withSignatures("v1a"))
	}
	require.Len(t, e.jwks(key).Keys, 105)
}
