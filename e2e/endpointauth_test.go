//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

// An endpoint's auth, set through the API, reaches the receiver through the
// deployed stack: Basic credentials (then a rotated password), and an OAuth
// 2.0 token fetched from a token server on 127.0.0.1 with the client
// credentials grant, fetched again when the receiver answers 401 to the
// one kept. Each request is signed as ever. (mTLS needs a TLS receiver the
// local function trusts: package sender's tests hold it against a TLS
// listener that demands a client certificate.)
func TestEndpointAuthReachesTheReceiver(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "epauth")

	var mu sync.Mutex
	issued, revoked := 0, map[string]bool{}
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if r.ParseForm() != nil || id != "hookline-"+tenant || secret != "client-s3cret" || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "webhooks" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		mu.Lock()
		issued++
		tok := fmt.Sprintf("tok-%d", issued)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(tokens.Close)

	password := "pw-one"
	var basic, bearer *receiver
	basic = newReceiver(t, func(n int, w http.ResponseWriter) {
		user, pass, ok := basicOf(basic.requests()[n-1].Header)
		mu.Lock()
		want := password
		mu.Unlock()
		if !ok || user != "hookline" || pass != want {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	bearer = newReceiver(t, func(n int, w http.ResponseWriter) {
		tok, ok := strings.CutPrefix(bearer.requests()[n-1].Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		bad := revoked[tok]
		mu.Unlock()
		if !ok || bad || !strings.HasPrefix(tok, "tok-") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})

	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": basic.URL, "auth": map[string]any{"type": "basic", "username": "hookline", "password": password}})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	basicID, basicSecret := body["id"].(string), body["secret"].(string)
	require.NotContains(t, fmt.Sprint(body), password, "the password is never shown")
	status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": bearer.URL, "auth": map[string]any{
		"type": "oauth2_client_credentials", "token_url": tokens.URL + "/oauth/token", "client_id": "hookline-" + tenant, "client_secret": "client-s3cret", "scope": "webhooks",
	}})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	bearerID, bearerSecret := body["id"].(string), body["secret"].(string)

	delivered := func(ev string) {
		t.Helper()
		for _, ep := range []string{basicID, bearerID} {
			waitDelivery(t, deliveryID(t, ev, ep), 45*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		}
	}
	first := publish(t, tenant, fmt.Sprintf("evt_auth1_%d", time.Now().UnixNano()))
	delivered(first.ID)

	// The receiver revokes every token issued so far; the password is
	// rotated through the API.
	mu.Lock()
	for i := 1; i <= issued; i++ {
		revoked[fmt.Sprintf("tok-%d", i)] = true
	}
	before := issued
	password = "pw-two"
	mu.Unlock()
	status, body = call(t, "PUT", "/v1/endpoints/"+basicID+"/auth", key, map[string]any{"type": "basic", "username": "hookline", "password": "pw-two"})
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, map[string]any{"type": "basic", "username": "hookline"}, body["auth"])

	second := publish(t, tenant, fmt.Sprintf("evt_auth2_%d", time.Now().UnixNano()))
	delivered(second.ID)
	mu.Lock()
	require.Greater(t, issued, before, "the 401 to a revoked token fetched a new one")
	mu.Unlock()

	for _, c := range []struct {
		r      *receiver
		secret string
	}{{basic, basicSecret}, {bearer, bearerSecret}} {
		v, err := signing.NewVerifier(c.secret)
		require.NoError(t, err)
		for _, r := range c.r.requests() {
			require.NoError(t, v.VerifyRequest(r.Header, r.Body), "signed beside the auth")
		}
	}
	for _, r := range bearer.requests() {
		if r.Header.Get("X-Event-Id") == second.ID && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			mu.Lock()
			bad := revoked[tok]
			mu.Unlock()
			if !bad {
				return // the second event went with a new token
			}
		}
	}
	t.Fatalf("the second event never reached the receiver with a new token: %d requests", len(bearer.requests()))
}

// basicOf reads a request's Basic credentials.
func basicOf(h http.Header) (user, pass string, ok bool) {
	r := &http.Request{Header: h}
	return r.BasicAuth()
}
