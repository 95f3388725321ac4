package api_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
)

// clientCert is a self-signed client certificate and its key, PEM, valid
// from notBefore to notAfter.
func clientCert(t *testing.T, cn string, notBefore, notAfter time.Time) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// openAuth opens the auth secret stored for an endpoint, as deliver does.
func (e *env) openAuth(tenantID, endpointID string) (domain.EndpointAuth, string) {
	e.tb.Helper()
	stored, ok := e.store.endpoint(tenantID, endpointID)
	require.True(e.tb, ok)
	require.NotNil(e.tb, stored.Auth)
	o := &sealing.Opener{KMS: e.kms, KeyID: sealingtest.KeyARN}
	plain, err := o.Open(context.Background(), sealing.Ref{TenantID: tenantID, EndpointID: endpointID}, stored.Auth.Sealed())
	require.NoError(e.tb, err)
	return *stored.Auth, plain
}

// Each kind of auth is set, shown without its secret, stored sealed for
// its endpoint, replaced (a rotation) and removed.
func TestEndpointAuthIsStoredSealedAndNeverShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	body := validEndpoint()
	body["auth"] = map[string]any{"type": "basic", "username": "hookline", "password": "s3cret-basic"}
	v := e.createEndpoint(key, body)
	require.Equal(t, &api.AuthView{Type: domain.AuthBasic, Username: "hookline"}, v.Auth)
	stored, secret := e.openAuth("acme", v.ID)
	require.Equal(t, "s3cret-basic", secret)
	require.NotContains(t, stored.SealedPassword, "s3cret")

	rec := e.do("PUT", "/v1/endpoints/"+v.ID+"/auth", key, map[string]any{
		"type": "oauth2_client_credentials", "token_url": "https://auth.example.com/oauth/token", "client_id": "hk", "client_secret": "s3cret-oauth", "scope": "hooks", "audience": "https://api.example.com",
	})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "s3cret")
	var got api.EndpointView
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.Equal(t, &api.AuthView{Type: domain.AuthOAuth2, TokenURL: "https://auth.example.com/oauth/token", ClientID: "hk", Scope: "hooks", Audience: "https://api.example.com"}, got.Auth)
	stored, secret = e.openAuth("acme", v.ID)
	require.Equal(t, "s3cret-oauth", secret, "replaced: the new secret")
	require.Empty(t, stored.Username, "nothing of the old kind is left")

	cert, pk := clientCert(t, "acme-hooks", t0.Add(-time.Hour), t0.Add(90*24*time.Hour))
	rec = e.do("PUT", "/v1/endpoints/"+v.ID+"/auth", key, map[string]any{"type": "mtls", "certificate": cert, "private_key": pk})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "PRIVATE KEY")
	got = e.getEndpoint(key, v.ID)
	require.Equal(t, domain.AuthMTLS, got.Auth.Type)
	require.Equal(t, "CN=acme-hooks", got.Auth.Certificate.Subject)
	require.Len(t, got.Auth.Certificate.FingerprintSHA256, 64)
	require.Equal(t, t0.Add(90*24*time.Hour).UTC().Truncate(time.Second), got.Auth.Certificate.NotAfter)
	_, secret = e.openAuth("acme", v.ID)
	require.Equal(t, pk, secret)

	list := e.do("GET", "/v1/endpoints", key, nil)
	require.NotContains(t, list.Body.String(), "PRIVATE KEY")

	rec = e.do("DELETE", "/v1/endpoints/"+v.ID+"/auth", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, e.getEndpoint(key, v.ID).Auth)
	stored2, _ := e.store.endpoint("acme", v.ID)
	require.Nil(t, stored2.Auth)
	require.NotContains(t, e.logs.String(), "s3cret", "no secret is logged")
}

// Bad auth gets a 400 naming the field, and nothing is stored.
func TestEndpointAuthIsValidated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	v := e.createEndpoint(key, nil)
	cert, pk := clientCert(t, "a", t0.Add(-time.Hour), t0.Add(time.Hour))
	_, otherKey := clientCert(t, "b", t0.Add(-time.Hour), t0.Add(time.Hour))
	expired, expiredKey := clientCert(t, "old", t0.Add(-48*time.Hour), t0.Add(-time.Hour))
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no kind", map[string]any{"type": "digest"}, "type"},
		{"basic without password", map[string]any{"type": "basic", "username": "u"}, "password"},
		{"basic with a colon", map[string]any{"type": "basic", "username": "a:b", "password": "p"}, "username"},
		{"a field of another kind", map[string]any{"type": "basic", "username": "u", "password": "p", "client_id": "x"}, "client_id"},
		{"a control character", map[string]any{"type": "basic", "username": "u", "password": "p\r\nX-Evil: 1"}, "password"},
		{"token URL to the metadata service", map[string]any{"type": "oauth2_client_credentials", "token_url": "https://169.254.169.254/token", "client_id": "c", "client_secret": "s"}, "token_url"},
		{"token URL over http", map[string]any{"type": "oauth2_client_credentials", "token_url": "http://auth.example.com/token", "client_id": "c", "client_secret": "s"}, "token_url"},
		{"client secret too long", map[string]any{"type": "oauth2_client_credentials", "token_url": "https://auth.example.com/t", "client_id": "c", "client_secret": strings.Repeat("s", 1025)}, "client_secret"},
		{"not a certificate", map[string]any{"type": "mtls", "certificate": "hello", "private_key": pk}, "certificate"},
		{"the key of another certificate", map[string]any{"type": "mtls", "certificate": cert, "private_key": otherKey}, "private_key"},
		{"an expired certificate", map[string]any{"type": "mtls", "certificate": expired, "private_key": expiredKey}, "certificate"},
		{"a key over KMS's 4 KB", map[string]any{"type": "mtls", "certificate": cert, "private_key": strings.Repeat("k", 4097)}, "private_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("PUT", "/v1/endpoints/"+v.ID+"/auth", key, tc.body)
			p := requireProblem(t, rec, http.StatusBadRequest)
			require.Contains(t, fieldsOf(p), tc.field, rec.Body.String())
		})
	}
	stored, _ := e.store.endpoint("acme", v.ID)
	require.Nil(t, stored.Auth, "nothing stored")

	httpEP := validEndpoint()
	httpEP["url"] = "http://hooks.example.com/x"
	e.srv.URLs.AllowHTTP = true
	plain := e.createEndpoint(key, httpEP)
	p := requireProblem(t, e.do("PUT", "/v1/endpoints/"+plain.ID+"/auth", key, map[string]any{"type": "mtls", "certificate": cert, "private_key": pk}), http.StatusBadRequest)
	require.Contains(t, p.Detail, "https", "mTLS needs TLS")

	p = requireProblem(t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, map[string]any{"auth": map[string]any{"type": "basic", "username": "u", "password": "p"}}), http.StatusBadRequest)
	require.Contains(t, fieldsOf(p), "auth", "PATCH does not take auth: PUT .../auth does")
}

// fieldsOf are the fields a problem names.
func fieldsOf(p api.Problem) []string {
	var out []string
	for _, f := range p.Errors {
		out = append(out, f.Field)
	}
	return out
}
