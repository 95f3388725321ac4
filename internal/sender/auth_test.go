package sender_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Basic endpoint gets its user and password in every request's
// Authorization header, beside the signature.
func TestBasicAuthIsSentWithEveryRequest(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		mu.Lock()
		got = append(got, fmt.Sprintf("%v %s:%s sig=%t", ok, user, pass, r.Header.Get("webhook-signature") != ""))
		mu.Unlock()
		if !ok || user != "hook" || pass != "p@ss:word" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := newClient(t)
	_, signer := newSecret(t)
	req := newRequest(srv.URL, signer)
	req.Headers = map[string]string{"Authorization": "a custom one the auth replaces"}
	req.Auth = &sender.Auth{Kind: domain.AuthBasic, Username: "hook", Password: "p@ss:word"}
	for range 2 {
		res := c.Send(t.Context(), req)
		assert.Equal(t, sender.Delivered, res.Outcome, res.Excerpt)
	}
	assert.Equal(t, []string{"true hook:p@ss:word sig=true", "true hook:p@ss:word sig=true"}, got)

	req.Auth.Password = "wrong"
	res := c.Send(t.Context(), req)
	assert.Equal(t, sender.Dead, res.Outcome, "a 401 with Basic is the receiver's answer: no token to refresh")
	assert.Equal(t, 401, res.Status)
}

// tokenServer is an OAuth 2.0 token endpoint (client credentials) that
// issues numbered tokens living ttl seconds, and a receiver that takes
// only the tokens it has not revoked.
type tokenServer struct {
	t       *testing.T
	ttl     int64
	issued  atomic.Int32
	fail    atomic.Bool
	revoked sync.Map
	forms   []string
	mu      sync.Mutex
	token   *httptest.Server
	recv    *httptest.Server
	bearers []string
}

func newTokenServer(t *testing.T, ttl int64) *tokenServer {
	ts := &tokenServer{t: t, ttl: ttl}
	ts.token = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// RFC 6749 2.3.1: the id and secret are form-encoded, then Basic.
		id, secret, ok := r.BasicAuth()
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		_ = r.ParseForm()
		ts.mu.Lock()
		ts.forms = append(ts.forms, r.PostForm.Encode())
		ts.mu.Unlock()
		if ts.fail.Load() {
			http.Error(w, `{"error":"server_error","echo":"client-s3cret"}`, http.StatusInternalServerError)
			return
		}
		if !ok || id != "client 1" || secret != "client-s3cret" || r.PostForm.Get("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		n := ts.issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer", "expires_in": ts.ttl})
	}))
	ts.recv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		ts.mu.Lock()
		ts.bearers = append(ts.bearers, bearer)
		ts.mu.Unlock()
		if _, revoked := ts.revoked.Load(bearer); revoked || !strings.HasPrefix(bearer, "tok-") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.token.Close)
	t.Cleanup(ts.recv.Close)
	return ts
}

func (ts *tokenServer) auth() *sender.Auth {
	return &sender.Auth{Kind: domain.AuthOAuth2, TokenURL: ts.token.URL + "/oauth/token", ClientID: "client 1", ClientSecret: "client-s3cret", Scope: "webhooks:write", Audience: "https://api.example"}
}

func (ts *tokenServer) seen() (bearers, forms []string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.bearers...), append([]string(nil), ts.forms...)
}

// A token is fetched once and kept until shortly before it expires, then
// fetched again; a 401 to a kept token fetches a new one and sends once
// more; the scope and audience go to the token endpoint.
func TestOAuth2TokenIsKeptRefreshedAndRetriedOnA401(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 120)
	now := fixedNow
	c := newClient(t)
	c.Now = func() time.Time { return now }
	_, signer := newSecret(t)
	req := newRequest(ts.recv.URL, signer)
	req.Auth = ts.auth()

	for range 3 {
		res := c.Send(t.Context(), req)
		require.Equal(t, sender.Delivered, res.Outcome, res.Excerpt)
	}
	bearers, forms := ts.seen()
	assert.Equal(t, []string{"tok-1", "tok-1", "tok-1"}, bearers, "one token for every request while it lives")
	assert.Equal(t, []string{"audience=https%3A%2F%2Fapi.example&grant_type=client_credentials&scope=webhooks%3Awrite"}, forms)

	// 90 s into a 120 s token: still kept. At 91 s (30 s before expiry):
	// fetched anew.
	now = fixedNow.Add(90*time.Second - time.Millisecond)
	require.Equal(t, sender.Delivered, c.Send(t.Context(), req).Outcome)
	now = fixedNow.Add(90 * time.Second)
	require.Equal(t, sender.Delivered, c.Send(t.Context(), req).Outcome)
	bearers, _ = ts.seen()
	assert.Equal(t, []string{"tok-1", "tok-1", "tok-1", "tok-1", "tok-2"}, bearers, "a token is fetched again shortly before it expires")

	// The receiver revokes tok-2: the 401 fetches tok-3, and the same
	// attempt is sent again with it.
	ts.revoked.Store("tok-2", true)
	res := c.Send(t.Context(), req)
	assert.Equal(t, sender.Delivered, res.Outcome, res.Excerpt)
	bearers, _ = ts.seen()
	assert.Equal(t, []string{"tok-2", "tok-3"}, bearers[5:], "a 401 refreshes the token and sends once more")
	assert.Equal(t, int32(3), ts.issued.Load())

	// A fresh token refused too is the receiver's answer: no loop.
	ts.revoked.Store("tok-3", true)
	ts.revoked.Store("tok-4", true)
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Dead, res.Outcome)
	assert.Equal(t, 401, res.Status)
	assert.Equal(t, int32(4), ts.issued.Load(), "one refresh per attempt")
}

// A token endpoint that fails, refuses the client or cannot be reached is
// retried as a network failure is, and no secret reaches the result.
func TestOAuth2TokenFailureIsRetriedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 60)
	c := newClient(t)
	_, signer := newSecret(t)
	req := newRequest(ts.recv.URL, signer)

	ts.fail.Store(true)
	req.Auth = ts.auth()
	res := c.Send(t.Context(), req)
	assert.Equal(t, sender.Retry, res.Outcome)
	assert.Equal(t, "auth_token", res.Error)
	assert.Contains(t, res.Excerpt, "answered 500")
	assert.NotContains(t, fmt.Sprintf("%+v %v", res, req.Auth), "s3cret", "the secret is in neither the result nor the auth's String")

	ts.fail.Store(false)
	req.Auth.ClientSecret = "wrong"
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Retry, res.Outcome)
	assert.Equal(t, "auth_token", res.Error)
	assert.Contains(t, res.Excerpt, "answered 401")

	req.Auth = ts.auth()
	req.Auth.TokenURL = "http://169.254.169.254/latest/api/token"
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Retry, res.Outcome)
	assert.Equal(t, "auth_token", res.Error)
	assert.Contains(t, res.Excerpt, "forbidden_address", "the SSRF guard holds the token URL")
	bearers, _ := ts.seen()
	assert.Empty(t, bearers, "nothing reached the receiver without a token")

	// Once the token endpoint answers, the next attempt delivers.
	req.Auth = ts.auth()
	assert.Equal(t, sender.Delivered, c.Send(t.Context(), req).Outcome)
}

// Concurrent attempts to one endpoint share one token fetch.
func TestOAuth2ConcurrentAttemptsShareOneToken(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, 3600)
	c := newClient(t)
	_, signer := newSecret(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			req := newRequest(ts.recv.URL, signer)
			req.Auth = ts.auth()
			assert.Equal(t, sender.Delivered, c.Send(t.Context(), req).Outcome)
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), ts.issued.Load())
}

// testPKI is a CA and the certificates it signs, for TLS listeners on
// loopback.
type testPKI struct {
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
	pool  *x509.CertPool
}

func newPKI(t *testing.T, name string) *testPKI {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{ca: ca, caKey: key, pool: pool}
}

// issue returns a certificate and key, PEM, for a client (or, with an IP,
// a server).
func (p *testPKI) issue(t *testing.T, cn string, ip net.IP) (certPEM, keyPEM string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if ip != nil {
		tmpl.IPAddresses, tmpl.ExtKeyUsage = []net.IP{ip}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// An mTLS endpoint (a TLS listener that demands a client certificate of
// its CA) takes the endpoint's certificate, refuses another CA's and a
// request without one, and two endpoints of one host each present their
// own.
func TestMTLSPresentsTheEndpointsCertificate(t *testing.T) {
	t.Parallel()
	clients, other, servers := newPKI(t, "receiver's client CA"), newPKI(t, "another CA"), newPKI(t, "server CA")
	var seen []string
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	sc, sk := servers.issue(t, "receiver", net.ParseIP("127.0.0.1"))
	serverPair, err := tls.X509KeyPair([]byte(sc), []byte(sk))
	require.NoError(t, err)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients.pool}
	srv.StartTLS()
	defer srv.Close()

	c := newClient(t)
	c.HTTP.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: servers.pool}
	_, signer := newSecret(t)
	req := newRequest(srv.URL, signer)

	cert, key := clients.issue(t, "tenant endpoint A", nil)
	req.Auth = &sender.Auth{Kind: domain.AuthMTLS, Certificate: cert, PrivateKey: key}
	res := c.Send(t.Context(), req)
	assert.Equal(t, sender.Delivered, res.Outcome, res.Error)

	certB, keyB := clients.issue(t, "tenant endpoint B", nil)
	req.Auth = &sender.Auth{Kind: domain.AuthMTLS, Certificate: certB, PrivateKey: keyB}
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Delivered, res.Outcome, res.Error)

	wrongCert, wrongKey := other.issue(t, "stranger", nil)
	req.Auth = &sender.Auth{Kind: domain.AuthMTLS, Certificate: wrongCert, PrivateKey: wrongKey}
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Retry, res.Outcome, "a certificate the receiver does not trust is refused in the handshake")
	assert.NotEqual(t, "", res.Error)

	req.Auth = nil
	res = c.Send(t.Context(), req)
	assert.Equal(t, sender.Retry, res.Outcome, "no certificate: refused")

	req.Auth = &sender.Auth{Kind: domain.AuthMTLS, Certificate: cert, PrivateKey: keyB}
	res = c.Send(t.Context(), req)
	assert.Equal(t, "auth_certificate", res.Error, "a key of another certificate")
	assert.NotContains(t, res.Excerpt, "PRIVATE KEY")

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"tenant endpoint A", "tenant endpoint B"}, seen, "each endpoint's own certificate, on connections of its own")
}
