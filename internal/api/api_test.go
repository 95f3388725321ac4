package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/apikey"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
)

const operatorKey = "op-test-operator-key-7f3a9c2e5b1d"

var (
	keyRE    = regexp.MustCompile(`^hk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$`)
	secretRE = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]+=*$`)
	t0       = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type env struct {
	tb    testing.TB
	clock *storetest.Clock
	store *testStore
	kms   *sealingtest.KMS
	srv   *api.Server
	h     http.Handler
	logs  *lockedBuffer
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	c := storetest.NewClock(t0)
	fs := newFakeStore(c.Now)
	logs := &lockedBuffer{}
	kms := sealingtest.New()
	srv := &api.Server{
		Store:       fs.ports(),
		Sealer:      &sealing.Sealer{KMS: kms, KeyID: sealingtest.KeyARN},
		OperatorKey: operatorKey,
		URLs:        netguard.URLPolicy{},
		Rand:        rand.Reader,
		Now:         c.Now,
		Log:         slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Jobs:        fakeJobs{fs},
		MessageLog:  storefake.NewMessageLog(),
		Outbox:      newFakeOutbox(),
		OutboxTable: fakeOutboxTable,

		Alarms: &fakeAlarms{}, AlarmNamePrefix: "Hookline-",
		Notices: &fakeMail{}, Notify: fs,
		// The clock stands still: the per-tenant limit of expensive
		// requests would refuse the sixth of a test; tenantlimit_test.go
		// holds the limit itself.
		TenantExpensiveRate: -1,
	}
	return &env{tb: tb, clock: c, store: fs, kms: kms, srv: srv, h: srv.Handler(), logs: logs}
}

// secrets opens the signing secrets stored for an endpoint, as the deliver
// function does: the current ones, then the retiring one ("" if none). The
// endpoint must hold no plaintext secret, and no sealed one may contain its
// plaintext.
func (e *env) secrets(tenantID, endpointID string) (current []string, retiring string) {
	e.tb.Helper()
	stored, ok := e.store.endpoint(tenantID, endpointID)
	require.True(e.tb, ok, "endpoint %s of %s", endpointID, tenantID)
	require.Empty(e.tb, stored.Secrets, "no plaintext secret is stored")
	require.Empty(e.tb, stored.RetiringSecret, "no plaintext secret is stored")
	o := &sealing.Opener{KMS: e.kms, KeyID: sealingtest.KeyARN}
	ref := sealing.Ref{TenantID: tenantID, EndpointID: endpointID}
	open := func(sealed string) string {
		plain, err := o.Open(context.Background(), ref, sealed)
		require.NoError(e.tb, err)
		require.NotContains(e.tb, sealed, plain)
		return plain
	}
	for _, s := range stored.SealedSecrets {
		current = append(current, open(s))
	}
	if stored.SealedRetiringSecret != "" {
		retiring = open(stored.SealedRetiringSecret)
	}
	return current, retiring
}

// do sends a request. key "" sends no Authorization header; body nil sends
// none, a string or []byte is sent as it is, anything else as JSON. hdr are
// name/value pairs set after the defaults (Content-Type: application/json
// when there is a body).
func (e *env) do(method, target, key string, body any, hdr ...string) *httptest.ResponseRecorder {
	e.tb.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(e.tb, err)
		r = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, target, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	requireDocumented(e.tb, req, rec)
	return rec
}

// newTenant creates a tenant and a key for it through the admin API.
func (e *env) newTenant(id string) string {
	e.tb.Helper()
	rec := e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": id, "name": "Tenant " + id})
	require.Equal(e.tb, http.StatusCreated, rec.Code, rec.Body.String())
	return e.newKey(id)
}

func (e *env) newKey(tenant string) string {
	e.tb.Helper()
	rec := e.do("POST", "/v1/admin/tenants/"+tenant+"/keys", operatorKey, nil)
	require.Equal(e.tb, http.StatusCreated, rec.Code, rec.Body.String())
	return decodeJSON[api.KeyView](e.tb, rec).Key
}

func validEndpoint() map[string]any {
	return map[string]any{
		"url":         "https://hooks.example.com/x",
		"description": "orders",
		"event_types": []string{"order.created", "payment.*"},
		"headers":     map[string]string{"X-Team": "billing"},
	}
}

func (e *env) createEndpoint(key string, body any) api.EndpointView {
	e.tb.Helper()
	if body == nil {
		body = validEndpoint()
	}
	rec := e.do("POST", "/v1/endpoints", key, body)
	require.Equal(e.tb, http.StatusCreated, rec.Code, rec.Body.String())
	return decodeJSON[api.EndpointView](e.tb, rec)
}

// getEndpoint reads an endpoint as the other answers show it: without the
// health only GET shows (its test is TestEndpointHealth).
func (e *env) getEndpoint(key, id string) api.EndpointView {
	e.tb.Helper()
	v := e.getEndpointWithHealth(key, id)
	require.NotNil(e.tb, v.Health, "GET shows the endpoint's health")
	v.Health = nil
	return v
}

func (e *env) getEndpointWithHealth(key, id string) api.EndpointView {
	e.tb.Helper()
	rec := e.do("GET", "/v1/endpoints/"+id, key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code, rec.Body.String())
	return decodeJSON[api.EndpointView](e.tb, rec)
}

func decodeJSON[T any](tb testing.TB, rec *httptest.ResponseRecorder) T {
	tb.Helper()
	require.Equal(tb, "application/json", rec.Header().Get("Content-Type"), rec.Body.String())
	var v T
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	require.NoError(tb, dec.Decode(&v), rec.Body.String())
	return v
}

func rawJSON(tb testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	tb.Helper()
	var m map[string]any
	require.NoError(tb, json.Unmarshal(rec.Body.Bytes(), &m), rec.Body.String())
	return m
}

// requireProblem checks that rec is a problem document with status.
func requireProblem(tb testing.TB, rec *httptest.ResponseRecorder, status int) api.Problem {
	tb.Helper()
	require.Equal(tb, status, rec.Code, rec.Body.String())
	return checkProblem(tb, rec)
}

// checkProblem checks that rec is a well-formed problem document.
func checkProblem(tb testing.TB, rec *httptest.ResponseRecorder) api.Problem {
	tb.Helper()
	require.Equal(tb, "application/problem+json", rec.Header().Get("Content-Type"), rec.Body.String())
	var p api.Problem
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	require.NoError(tb, dec.Decode(&p), rec.Body.String())
	require.Equal(tb, rec.Code, p.Status)
	require.Equal(tb, "about:blank", p.Type)
	require.Equal(tb, http.StatusText(rec.Code), p.Title)
	require.NotEmpty(tb, p.Detail)
	return p
}

func fields(p api.Problem) []string {
	out := make([]string, len(p.Errors))
	for i, e := range p.Errors {
		out[i] = e.Field
	}
	return out
}

func fill(path string, values map[string]string) string {
	for k, v := range values {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return path
}

// --- authentication ---------------------------------------------------------

func TestAuthRejectsBadCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	revoked := e.newKey("acme")
	rec := e.do("DELETE", "/v1/admin/tenants/acme/keys/"+apikey.ID(revoked), operatorKey, nil)
	require.Equal(t, http.StatusNoContent, rec.Code)
	unknown, err := apikey.New(rand.Reader)
	require.NoError(t, err)

	tests := []struct {
		name, auth string // auth "-" sends no header
	}{
		{"missing header", "-"},
		{"empty header", ""},
		{"bearer without token", "Bearer "},
		{"bearer with blanks", "Bearer    "},
		{"bearer only", "Bearer"},
		{"wrong scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte("acme:"+key))},
		{"token without scheme", key},
		{"unknown key", "Bearer " + unknown.Plain},
		{"garbage key", "Bearer not-a-key"},
		{"revoked key", "Bearer " + revoked},
		{"operator key on tenant route", "Bearer " + operatorKey},
		{"key with trailing junk", "Bearer " + key + "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.auth != "-" {
				hdr = []string{"Authorization", tc.auth}
			}
			rec := e.do("GET", "/v1/endpoints", "", nil, hdr...)
			p := requireProblem(t, rec, http.StatusUnauthorized)
			require.Equal(t, `Bearer realm="hookline"`, rec.Header().Get("WWW-Authenticate"))
			require.NotContains(t, p.Detail, key)
		})
	}

	t.Run("valid key, scheme case-insensitive", func(t *testing.T) {
		for _, scheme := range []string{"Bearer ", "bearer ", "BEARER "} {
			rec := e.do("GET", "/v1/endpoints", "", nil, "Authorization", scheme+key)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		}
	})
}

func TestEveryRouteNeedsAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rt := range api.Routes() {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			target := fill(rt.Path, map[string]string{"endpoint_id": "ep_x", "delivery_id": "dl_x", "event_id": "evt_x", "tenant_id": "acme", "key_id": "k"})
			rec := e.do(rt.Method, target, "", "{}")
			if rt.Public {
				// An e-mail link: its token is its credential, and a
				// request without one finds nothing.
				require.True(t, strings.HasPrefix(rt.Path, "/v1/email-links/"), "only e-mail links are public")
				requireProblem(t, rec, http.StatusNotFound)
				return
			}
			requireProblem(t, rec, http.StatusUnauthorized)
			require.Equal(t, `Bearer realm="hookline"`, rec.Header().Get("WWW-Authenticate"))
		})
	}
}

func TestOperatorAndTenantKeysAreSeparate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenantKey := e.newTenant("acme")
	values := map[string]string{"endpoint_id": "ep_x", "delivery_id": "dl_x", "event_id": "evt_x", "tenant_id": "acme", "key_id": "nokey"}
	for _, rt := range api.Routes() {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			target := fill(rt.Path, values)
			body := `{}`
			if rt.Method == "POST" && rt.Path == "/v1/admin/tenants" {
				body = `{"tenant_id":"other"}`
			}
			if rt.Public {
				return // TestEveryRouteNeedsAuth
			}
			if rt.Operator {
				rec := e.do(rt.Method, target, tenantKey, body)
				p := requireProblem(t, rec, http.StatusUnauthorized)
				require.Contains(t, p.Detail, "operator key")
				rec = e.do(rt.Method, target, operatorKey, body)
				require.NotEqual(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
				require.Less(t, rec.Code, 500, rec.Body.String())
			} else {
				rec := e.do(rt.Method, target, operatorKey, body)
				requireProblem(t, rec, http.StatusUnauthorized)
				rec = e.do(rt.Method, target, tenantKey, body)
				require.NotEqual(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
				require.Less(t, rec.Code, 500, rec.Body.String())
			}
		})
	}
}

func TestNoOperatorKeyMeansNoAdminAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenantKey := e.newTenant("acme")
	e.srv.OperatorKey = ""
	h := e.srv.Handler()
	for _, rt := range api.Routes() {
		if !rt.Operator {
			continue
		}
		for _, auth := range []string{"", "Bearer ", "Bearer " + operatorKey, "Bearer \"\"", "Bearer " + tenantKey} {
			t.Run(rt.Method+" "+rt.Path+" "+auth, func(t *testing.T) {
				req := httptest.NewRequest(rt.Method, fill(rt.Path, map[string]string{"tenant_id": "acme", "key_id": apikey.ID(tenantKey)}), strings.NewReader(`{"tenant_id":"new"}`))
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				requireProblem(t, rec, http.StatusUnauthorized)
			})
		}
	}
	// Nothing was created or revoked.
	rec := e.do("GET", "/v1/endpoints", tenantKey, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	_, err := e.store.Tenant(context.Background(), "new")
	require.ErrorIs(t, err, store.ErrNotFound, "no tenant was created")
}

// TestOperatorKeyFetchedOnFirstUse: OperatorKeyFunc is called by the first
// admin request with a token, not before and not by tenant routes; a failure
// answers 503 and is retried by the next request; a key is kept.
func TestOperatorKeyFetchedOnFirstUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenantKey := e.newTenant("acme")
	e.srv.OperatorKey = ""
	var calls int
	results := []struct {
		key string
		err error
	}{
		{"", errors.New("secrets manager: connection refused")},
		{"", nil}, // a secret without a value
		{operatorKey, nil},
	}
	e.srv.OperatorKeyFunc = func(ctx context.Context) (string, error) {
		require.NotNil(t, ctx)
		r := results[min(calls, len(results)-1)]
		calls++
		return r.key, r.err
	}
	newTenant := func(key, id string) *httptest.ResponseRecorder {
		return e.do("POST", "/v1/admin/tenants", key, map[string]any{"tenant_id": id})
	}

	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", tenantKey, nil).Code)
	requireProblem(t, newTenant("", "t1"), http.StatusUnauthorized)
	require.Zero(t, calls, "neither a tenant route nor a request without a token needs the operator key")

	for _, cause := range []string{"an error", "an empty key"} {
		p := requireProblem(t, newTenant(operatorKey, "t1"), http.StatusServiceUnavailable)
		require.Contains(t, p.Detail, "operator key is unavailable", cause)
	}
	require.Equal(t, 2, calls, "each failure is retried by the next request")

	require.Equal(t, http.StatusCreated, newTenant(operatorKey, "t1").Code)
	requireProblem(t, newTenant(tenantKey, "t2"), http.StatusUnauthorized)
	require.Equal(t, http.StatusCreated, newTenant(operatorKey, "t3").Code)
	require.Equal(t, 3, calls, "the key is kept once fetched")

	require.Contains(t, e.logs.String(), "connection refused", "the cause of the 503 is logged")
	require.NotContains(t, e.logs.String(), operatorKey)
}

// TestOperatorKeyRotationTakesEffectWithinTTL: a warm api instance reads the
// operator key again once it is OperatorKeyTTL old, so after a rotation the
// new key is accepted and the old one refused within the TTL (default one
// minute), and not a request earlier than needed.
func TestOperatorKeyRotationTakesEffectWithinTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{0, 10 * time.Second} {
		t.Run(fmt.Sprintf("ttl %s", ttl), func(t *testing.T) {
			e := newEnv(t)
			e.srv.OperatorKey, e.srv.OperatorKeyTTL = "", ttl
			want := ttl
			if want == 0 {
				want = api.DefaultOperatorKeyTTL
			}
			const oldKey, newKey = "op-old-key-0123456789abcdef", "op-new-key-0123456789abcdef"
			var mu sync.Mutex
			current, calls := oldKey, 0
			e.srv.OperatorKeyFunc = func(context.Context) (string, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				return current, nil
			}
			stats := func(key string) int { return e.do("GET", "/v1/admin/stats", key, nil).Code }

			require.Equal(t, http.StatusOK, stats(oldKey))
			mu.Lock()
			current = newKey // the secret is rotated
			mu.Unlock()
			e.clock.Advance(want - time.Second)
			require.Equal(t, http.StatusOK, stats(oldKey), "within the TTL the kept key still answers")
			require.Equal(t, http.StatusUnauthorized, stats(newKey))
			require.Equal(t, 1, calls, "no read of the secret before the TTL")

			e.clock.Advance(time.Second)
			require.Equal(t, http.StatusUnauthorized, stats(oldKey), "the old key is refused once the TTL is out")
			require.Equal(t, http.StatusOK, stats(newKey), "the rotated key is accepted once the TTL is out")
			require.Equal(t, 2, calls)
		})
	}
}

// --- admin ---------------------------------------------------------------

func TestCreateTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	t.Run("given id", func(t *testing.T) {
		rec := e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": "acme-1_x", "name": "Acme"})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		require.Equal(t, map[string]any{"tenant_id": "acme-1_x", "name": "Acme", "created_at": t0.Format(time.RFC3339)}, rawJSON(t, rec))
	})
	t.Run("generated id", func(t *testing.T) {
		rec := e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"name": "Gen"})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		m := rawJSON(t, rec)
		require.Regexp(t, `^tn_[a-z2-7]{16}$`, m["tenant_id"])
		rec2 := e.do("POST", "/v1/admin/tenants", operatorKey, `{}`)
		require.Equal(t, http.StatusCreated, rec2.Code, rec2.Body.String())
		require.NotEqual(t, m["tenant_id"], rawJSON(t, rec2)["tenant_id"])
	})
	invalid := []struct {
		name  string
		body  any
		field string
	}{
		{"space", map[string]any{"tenant_id": "a b"}, "tenant_id"},
		{"empty", map[string]any{"tenant_id": ""}, "tenant_id"},
		{"hash", map[string]any{"tenant_id": "a#KEYS"}, "tenant_id"},
		{"slash", map[string]any{"tenant_id": "a/b"}, "tenant_id"},
		{"too long", map[string]any{"tenant_id": strings.Repeat("a", 65)}, "tenant_id"},
		{"unicode", map[string]any{"tenant_id": "ténant"}, "tenant_id"},
		{"number", `{"tenant_id": 5}`, "tenant_id"},
		{"name too long", map[string]any{"name": strings.Repeat("n", 257)}, "name"},
		{"unknown field", map[string]any{"tenant_id": "ok", "plan": "gold"}, "plan"},
	}
	for _, tc := range invalid {
		t.Run("invalid "+tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", "/v1/admin/tenants", operatorKey, tc.body), http.StatusBadRequest)
			require.Equal(t, []string{tc.field}, fields(p))
			require.Contains(t, p.Detail, tc.field)
		})
	}
	t.Run("64 characters is fine", func(t *testing.T) {
		rec := e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": strings.Repeat("a", 64)})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	})
	t.Run("duplicate", func(t *testing.T) {
		// A second later: a create at the existing tenant's very instant is
		// taken by the store for its own write, retried.
		e.clock.Advance(time.Second)
		p := requireProblem(t, e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": "acme-1_x", "name": "Other"}), http.StatusConflict)
		require.Contains(t, p.Detail, `"acme-1_x"`)
		existing, err := e.store.Tenant(context.Background(), "acme-1_x")
		require.NoError(t, err)
		require.Equal(t, "Acme", existing.Name, "the existing tenant is untouched")
	})
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": "acme"})
	require.Equal(t, http.StatusCreated, rec.Code)

	rec = e.do("POST", "/v1/admin/tenants/acme/keys", operatorKey, nil)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	kv := decodeJSON[api.KeyView](t, rec)
	require.Regexp(t, keyRE, kv.Key)
	require.Equal(t, apikey.ID(kv.Key), kv.KeyID)
	require.Equal(t, "acme", kv.TenantID)
	require.Equal(t, t0, kv.CreatedAt)

	stored := e.store.apiKeys()
	require.Len(t, stored, 1)
	require.Equal(t, domain.APIKey{KeyID: kv.KeyID, TenantID: "acme", Hash: apikey.Hash(kv.Key), CreatedAt: t0}, stored[0],
		"only the hash is stored")

	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", kv.Key, nil).Code, "the new key authenticates")

	second := e.newKey("acme")
	require.NotEqual(t, kv.Key, second)

	t.Run("missing tenant", func(t *testing.T) {
		p := requireProblem(t, e.do("POST", "/v1/admin/tenants/nobody/keys", operatorKey, nil), http.StatusNotFound)
		require.Contains(t, p.Detail, `"nobody"`)
		require.Len(t, e.store.apiKeys(), 2)
	})
	t.Run("revoke unknown key", func(t *testing.T) {
		requireProblem(t, e.do("DELETE", "/v1/admin/tenants/acme/keys/nosuchkeyid", operatorKey, nil), http.StatusNotFound)
	})
	t.Run("revoke with the wrong tenant", func(t *testing.T) {
		require.Equal(t, http.StatusCreated, e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": "other"}).Code)
		requireProblem(t, e.do("DELETE", "/v1/admin/tenants/other/keys/"+kv.KeyID, operatorKey, nil), http.StatusNotFound)
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", kv.Key, nil).Code)
	})
	t.Run("revoke", func(t *testing.T) {
		rec := e.do("DELETE", "/v1/admin/tenants/acme/keys/"+kv.KeyID, operatorKey, nil)
		require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		require.Empty(t, rec.Body.String())
		rec = e.do("GET", "/v1/endpoints", kv.Key, nil)
		requireProblem(t, rec, http.StatusUnauthorized)
		require.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", second, nil).Code, "the tenant's other key still works")
		// Revoking again is harmless, as in the store.
		require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/admin/tenants/acme/keys/"+kv.KeyID, operatorKey, nil).Code)
	})
}

// --- endpoints -------------------------------------------------------------

func TestCreateEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	rec := e.do("POST", "/v1/endpoints", key, validEndpoint())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	v := decodeJSON[api.EndpointView](t, rec)
	require.Regexp(t, `^ep_[a-z2-7]{16}$`, v.ID)
	require.Equal(t, "/v1/endpoints/"+v.ID, rec.Header().Get("Location"))
	require.Regexp(t, secretRE, v.Secret)
	require.Equal(t, api.EndpointView{
		ID: v.ID, URL: "https://hooks.example.com/x", Description: "orders",
		EventTypes: []string{"order.created", "payment.*"}, Headers: map[string]string{"X-Team": "billing"},
		CreatedAt: t0, Secret: v.Secret, Type: domain.TypeHTTP, Signatures: []string{"v1"},
	}, v)

	stored, ok := e.store.endpoint("acme", v.ID)
	require.True(t, ok)
	current, _ := e.secrets("acme", v.ID)
	require.Equal(t, []string{v.Secret}, current, "the secret returned is the one stored, sealed")
	require.Equal(t, "acme", stored.TenantID)

	// The secret is never shown again.
	noSecret := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		require.Less(t, rec.Code, 300, rec.Body.String())
		require.NotContains(t, rec.Body.String(), v.Secret)
		require.NotContains(t, rec.Body.String(), "whsec_")
		require.NotContains(t, rec.Body.String(), `"secret"`)
	}
	noSecret(t, e.do("GET", "/v1/endpoints/"+v.ID, key, nil))
	noSecret(t, e.do("GET", "/v1/endpoints", key, nil))
	noSecret(t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, map[string]any{"description": "x"}))
	noSecret(t, e.do("POST", "/v1/endpoints/"+v.ID+"/disable", key, nil))
	noSecret(t, e.do("POST", "/v1/endpoints/"+v.ID+"/enable", key, nil))

	t.Run("minimal body", func(t *testing.T) {
		rec := e.do("POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/min"}`, "Content-Type", "application/json; charset=utf-8")
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		m := rawJSON(t, rec)
		require.Equal(t, []any{}, m["event_types"], "empty lists are [], not null")
		require.Equal(t, map[string]any{}, m["headers"])
		require.Equal(t, "", m["description"])
		require.Equal(t, false, m["disabled"])
		require.NotContains(t, m, "updated_at")
		require.NotContains(t, m, "previous_secret_until")
	})
	t.Run("no content type", func(t *testing.T) {
		rec := e.do("POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/nt"}`, "Content-Type", "")
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	})
}

func TestCreateEndpointValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	const url = `"url":"https://hooks.example.com/x"`
	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	tests := []struct {
		name   string
		body   any
		hdr    []string
		status int
		fields []string // the fields the problem names, in order
		detail string   // a substring of the detail
	}{
		{name: "missing url", body: `{"description":"x"}`, status: 400, fields: []string{"url"}, detail: "url is required"},
		{name: "null body", body: `null`, status: 400, detail: "JSON object"},
		{name: "null header value", body: `{` + url + `,"headers":{"X-A":null}}`, status: 400, fields: []string{"headers.X-A"}},
		{name: "null among event types", body: `{` + url + `,"event_types":["a",null]}`, status: 400, fields: []string{"event_types[1]"}},
		{name: "http", body: `{"url":"http://hooks.example.com/x"}`, status: 400, fields: []string{"url"}, detail: "https"},
		{name: "user info", body: `{"url":"https://user:pw@hooks.example.com/x"}`, status: 400, fields: []string{"url"}, detail: "user info"},
		{name: "metadata address", body: `{"url":"https://169.254.169.254/latest/meta-data"}`, status: 400, fields: []string{"url"}},
		{name: "localhost", body: `{"url":"https://localhost/x"}`, status: 400, fields: []string{"url"}},
		{name: "sub.localhost", body: `{"url":"https://a.localhost./x"}`, status: 400, fields: []string{"url"}},
		{name: "loopback", body: `{"url":"https://127.0.0.1/x"}`, status: 400, fields: []string{"url"}},
		{name: "loopback v6", body: `{"url":"https://[::1]/x"}`, status: 400, fields: []string{"url"}},
		{name: "decimal loopback", body: `{"url":"https://2130706433/x"}`, status: 400, fields: []string{"url"}},
		{name: "private", body: `{"url":"https://10.0.0.1/x"}`, status: 400, fields: []string{"url"}},
		{name: "ftp", body: `{"url":"ftp://hooks.example.com/x"}`, status: 400, fields: []string{"url"}},
		{name: "empty url", body: `{"url":""}`, status: 400, fields: []string{"url"}},
		{name: "relative url", body: `{"url":"/x"}`, status: 400, fields: []string{"url"}},
		{name: "bad port", body: `{"url":"https://hooks.example.com:99999/x"}`, status: 400, fields: []string{"url"}},
		{name: "url too long", body: `{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, status: 400, fields: []string{"url"}},
		{name: "url wrong type", body: `{"url":5}`, status: 400, fields: []string{"url"}, detail: "url must be a string"},
		{name: "url null", body: `{"url":null}`, status: 400, fields: []string{"url"}},
		{name: "bad event type", body: `{` + url + `,"event_types":["order.created","bad type"]}`, status: 400, fields: []string{"event_types[1]"}},
		{name: "empty event type", body: `{` + url + `,"event_types":[""]}`, status: 400, fields: []string{"event_types[0]"}},
		{name: "null event type", body: `{` + url + `,"event_types":[null]}`, status: 400, fields: []string{"event_types[0]"}},
		{name: "inner wildcard", body: `{` + url + `,"event_types":["a.*.b","a..b","*.a"]}`, status: 400, fields: []string{"event_types[0]", "event_types[1]", "event_types[2]"}},
		{name: "event type too long", body: `{` + url + `,"event_types":["` + strings.Repeat("a", 129) + `"]}`, status: 400, fields: []string{"event_types[0]"}},
		{name: "rate limit zero", body: `{` + url + `,"rate_limit":0}`, status: 400, fields: []string{"rate_limit"}, detail: "from 1 to 1000"},
		{name: "rate limit negative", body: `{` + url + `,"rate_limit":-5}`, status: 400, fields: []string{"rate_limit"}},
		{name: "rate limit too high", body: `{` + url + `,"rate_limit":1001}`, status: 400, fields: []string{"rate_limit"}},
		{name: "rate limit fraction", body: `{` + url + `,"rate_limit":1.5}`, status: 400, fields: []string{"rate_limit"}},
		{name: "rate limit string", body: `{` + url + `,"rate_limit":"10"}`, status: 400, fields: []string{"rate_limit"}},
		{name: "too many event types", body: `{` + url + `,"event_types":[` + many(51, func(i int) string { return fmt.Sprintf(`"t%d"`, i) }) + `]}`, status: 400, fields: []string{"event_types"}},
		{name: "event types wrong type", body: `{` + url + `,"event_types":"order.created"}`, status: 400, fields: []string{"event_types"}},
		{name: "reserved header", body: `{` + url + `,"headers":{"webhook-signature":"v1,x"}}`, status: 400, fields: []string{"headers.webhook-signature"}},
		{name: "content type header", body: `{` + url + `,"headers":{"Content-Type":"text/plain"}}`, status: 400, fields: []string{"headers.Content-Type"}},
		{name: "host header", body: `{` + url + `,"headers":{"host":"internal"}}`, status: 400, fields: []string{"headers.host"}},
		{name: "CRLF in header value", body: `{` + url + `,"headers":{"X-Ok":"a\r\nX-Injected: 1"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "LF in header value", body: `{` + url + `,"headers":{"X-Ok":"a\nb"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "NUL in header value", body: `{` + url + `,"headers":{"X-Ok":"a\u0000b"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "control character in header value", body: `{` + url + `,"headers":{"X-Ok":"a\u0001b"}}`, status: 400, fields: []string{"headers.X-Ok"}, detail: "control character"},
		{name: "DEL in header value", body: `{` + url + `,"headers":{"X-Ok":"a\u007f"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "escape in header value", body: `{` + url + `,"headers":{"X-Ok":"\u001b[31m"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "control character in header name", body: `{` + url + `,"headers":{"X-\u0001":"x"}}`, status: 400, fields: []string{"headers.X-\x01"}},
		{name: "same header twice", body: `{` + url + `,"headers":{"X-Ok":"a","x-ok":"b"}}`, status: 400, fields: []string{"headers.x-ok"}, detail: "case-insensitive"},
		{name: "bad header name", body: `{` + url + `,"headers":{"Bad Name":"x"}}`, status: 400, fields: []string{"headers.Bad Name"}},
		{name: "empty header name", body: `{` + url + `,"headers":{"":"x"}}`, status: 400, fields: []string{"headers."}},
		{name: "header value too long", body: `{` + url + `,"headers":{"X-Ok":"` + strings.Repeat("v", 1025) + `"}}`, status: 400, fields: []string{"headers.X-Ok"}},
		{name: "too many headers", body: `{` + url + `,"headers":{` + many(21, func(i int) string { return fmt.Sprintf(`"X-H%d":"v"`, i) }) + `}}`, status: 400, fields: []string{"headers"}},
		{name: "headers wrong type", body: `{` + url + `,"headers":[]}`, status: 400, fields: []string{"headers"}},
		{name: "description too long", body: `{` + url + `,"description":"` + strings.Repeat("d", 513) + `"}`, status: 400, fields: []string{"description"}},
		{name: "several at once", body: `{"url":"http://x.example.com","event_types":["bad type"]}`, status: 400, fields: []string{"url", "event_types[0]"}},
		{name: "unknown field", body: `{` + url + `,"colour":"red"}`, status: 400, fields: []string{"colour"}, detail: "colour is not a known field"},
		{name: "own secret refused", body: `{` + url + `,"secret":"whsec_aGVsbG8="}`, status: 400, fields: []string{"secret"}},
		{name: "tenant_id refused", body: `{` + url + `,"tenant_id":"other"}`, status: 400, fields: []string{"tenant_id"}},
		{name: "malformed", body: `{"url":`, status: 400, detail: "JSON"},
		{name: "bad token", body: `{"url":"https://hooks.example.com/x",}`, status: 400, detail: "JSON"},
		{name: "empty body", body: ``, status: 400, detail: "empty"},
		{name: "no body", body: nil, status: 400, detail: "empty"},
		{name: "whitespace only", body: " \n\t ", status: 400, detail: "empty"},
		{name: "trailing garbage", body: `{` + url + `} x`, status: 400, detail: "after the JSON object"},
		{name: "two objects", body: `{` + url + `}{}`, status: 400, detail: "after the JSON object"},
		{name: "trailing brace", body: `{` + url + `}}`, status: 400},
		{name: "array", body: `[{` + url + `}]`, status: 400, detail: "JSON object"},
		{name: "string", body: `"https://hooks.example.com/x"`, status: 400, detail: "JSON object"},
		{name: "number", body: `42`, status: 400, detail: "JSON object"},
		{name: "too big", body: `{` + url + `,"description":"` + strings.Repeat("d", api.MaxBodyBytes) + `"}`, status: 413},
		{name: "too big by padding", body: `{` + url + `}` + strings.Repeat(" ", api.MaxBodyBytes), status: 413},
		{name: "wrong content type", body: `{` + url + `}`, hdr: []string{"Content-Type", "text/plain"}, status: 415},
		{name: "form content type", body: `url=https://hooks.example.com/x`, hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", "/v1/endpoints", key, tc.body, tc.hdr...)
			p := requireProblem(t, rec, tc.status)
			if tc.fields != nil {
				require.Equal(t, tc.fields, fields(p))
				for _, f := range tc.fields {
					require.Contains(t, p.Detail, f)
				}
			} else {
				require.Empty(t, p.Errors)
			}
			if tc.detail != "" {
				require.Contains(t, p.Detail, tc.detail)
			}
			require.Empty(t, rec.Header().Get("Location"))
			require.Zero(t, e.store.endpointCount("acme"), "nothing was stored")
		})
	}
}

func TestListEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	other := e.newTenant("other")
	e.createEndpoint(other, nil)
	var created []string
	for i := 0; i < 5; i++ {
		created = append(created, e.createEndpoint(key, nil).ID)
	}
	slices.Sort(created)

	type page struct {
		Data       []api.EndpointView `json:"data"`
		NextCursor string             `json:"next_cursor"`
	}
	var seen []string
	var sizes []int
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10, "pagination does not end")
		target := "/v1/endpoints?limit=2"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		rec := e.do("GET", target, key, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		p := decodeJSON[page](t, rec)
		sizes = append(sizes, len(p.Data))
		for _, v := range p.Data {
			require.Empty(t, v.Secret)
			seen = append(seen, v.ID)
		}
		if p.NextCursor == "" {
			require.NotContains(t, rawJSON(t, rec), "next_cursor", "no next_cursor on the last page")
			break
		}
		cursor = p.NextCursor
	}
	require.Equal(t, []int{2, 2, 1}, sizes)
	require.Equal(t, created, seen, "every endpoint once, in id order, none of another tenant's")

	t.Run("default limit", func(t *testing.T) {
		p := decodeJSON[page](t, e.do("GET", "/v1/endpoints", key, nil))
		require.Len(t, p.Data, 5)
		require.Empty(t, p.NextCursor)
	})
	t.Run("empty tenant", func(t *testing.T) {
		third := e.newTenant("third")
		rec := e.do("GET", "/v1/endpoints", third, nil)
		require.Equal(t, http.StatusOK, rec.Code)
		require.JSONEq(t, `{"data":[]}`, rec.Body.String())
	})
	for _, limit := range []string{"0", "-1", "101", "abc", "1.5", "1e2", "99999999999999999999", "%00", "+"} {
		t.Run("bad limit "+limit, func(t *testing.T) {
			p := requireProblem(t, e.do("GET", "/v1/endpoints?limit="+limit, key, nil), http.StatusBadRequest)
			require.Equal(t, []string{"limit"}, fields(p))
		})
	}
	for _, cursor := range []string{"!!!", "%25%25", "a", "====", "not%20base64*"} {
		t.Run("bad cursor "+cursor, func(t *testing.T) {
			p := requireProblem(t, e.do("GET", "/v1/endpoints?cursor="+cursor, key, nil), http.StatusBadRequest)
			require.Equal(t, []string{"cursor"}, fields(p))
		})
	}
	t.Run("100 is the largest limit", func(t *testing.T) {
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints?limit=100", key, nil).Code)
	})
}

func TestGetEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	created := e.createEndpoint(key, nil)
	got := e.getEndpoint(key, created.ID)
	want := created
	want.Secret = ""
	require.Equal(t, want, got)
	// A new endpoint's health: nothing attempted, nothing failed.
	require.Equal(t, &api.HealthView{Breaker: api.BreakerView{State: domain.BreakerClosed}}, e.getEndpointWithHealth(key, created.ID).Health)

	p := requireProblem(t, e.do("GET", "/v1/endpoints/ep_nonexistent", key, nil), http.StatusNotFound)
	require.Equal(t, `endpoint "ep_nonexistent" not found`, p.Detail)
}

func TestPatchEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	tests := []struct {
		name   string
		body   string
		change func(v *api.EndpointView)
	}{
		{"description", `{"description":"new"}`, func(v *api.EndpointView) { v.Description = "new" }},
		{"clear description", `{"description":""}`, func(v *api.EndpointView) { v.Description = "" }},
		{"url", `{"url":"https://other.example.com/y"}`, func(v *api.EndpointView) { v.URL = "https://other.example.com/y" }},
		{"event types", `{"event_types":["a.b"]}`, func(v *api.EndpointView) { v.EventTypes = []string{"a.b"} }},
		{"clear event types", `{"event_types":[]}`, func(v *api.EndpointView) { v.EventTypes = []string{} }},
		{"headers replace", `{"headers":{"X-New":"1"}}`, func(v *api.EndpointView) { v.Headers = map[string]string{"X-New": "1"} }},
		{"clear headers", `{"headers":{}}`, func(v *api.EndpointView) { v.Headers = map[string]string{} }},
		{"rate limit", `{"rate_limit":25}`, func(v *api.EndpointView) { v.RateLimit = 25 }},
		{"rate limit 0 on an unlimited endpoint", `{"rate_limit":0}`, func(*api.EndpointView) {}},
		{"nulls change nothing", `{"url":null,"description":null,"event_types":null,"headers":null}`, func(*api.EndpointView) {}},
		{"empty object", `{}`, func(*api.EndpointView) {}},
		{"several", `{"description":"d2","url":"https://z.example.com/"}`, func(v *api.EndpointView) {
			v.Description, v.URL = "d2", "https://z.example.com/"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			created := e.createEndpoint(key, nil)
			before, _ := e.store.endpoint("acme", created.ID)
			e.clock.Advance(time.Minute)
			rec := e.do("PATCH", "/v1/endpoints/"+created.ID, key, tc.body)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			got := decodeJSON[api.EndpointView](t, rec)

			want := created
			want.Secret = ""
			tc.change(&want)
			now := e.clock.Now()
			want.UpdatedAt = &now
			require.Equal(t, want, got)
			require.Equal(t, want, e.getEndpoint(key, created.ID), "GET agrees with the PATCH answer")

			after, _ := e.store.endpoint("acme", created.ID)
			require.Equal(t, before.SealedSecrets, after.SealedSecrets, "PATCH never changes the secret")
			require.Equal(t, before.Disabled, after.Disabled)
		})
	}
	t.Run("invalid changes nothing", func(t *testing.T) {
		created := e.createEndpoint(key, nil)
		before, _ := e.store.endpoint("acme", created.ID)
		for _, body := range []string{
			`{"url":"http://hooks.example.com/x","description":"changed"}`,
			`{"description":"changed","secret":"whsec_aGVsbG8="}`,
			`{"description":"changed","disabled":true}`,
			`{"headers":{"Webhook-Id":"x"},"description":"changed"}`,
			`{"description":"changed","rate_limit":-1}`,
			`{"description":"changed","rate_limit":5000}`,
			`{"description":5}`,
			``,
			`{"description":"changed"} trailing`,
		} {
			rec := e.do("PATCH", "/v1/endpoints/"+created.ID, key, body)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", body, rec.Body.String())
			checkProblem(t, rec)
		}
		after, _ := e.store.endpoint("acme", created.ID)
		require.Equal(t, before, after)
	})
	// net/http's client refuses to send a header with a control character
	// (tab aside): such a header would fail every delivery to the endpoint.
	t.Run("control characters in a custom header are 400 naming it", func(t *testing.T) {
		created := e.createEndpoint(key, nil)
		before, _ := e.store.endpoint("acme", created.ID)
		for body, field := range map[string]string{
			`{"headers":{"X-A":"a\u0001b"}}`:          "headers.X-A",
			`{"headers":{"X-A":"\u007f"}}`:            "headers.X-A",
			`{"headers":{"X-A":"a\u001fb"}}`:          "headers.X-A",
			`{"headers":{"X-A":"a\rb"}}`:              "headers.X-A",
			`{"headers":{"X-\u0001":"v"}}`:            "headers.X-\x01",
			`{"headers":{"X-A\u007f":"v"}}`:           "headers.X-A\x7f",
			`{"headers":{"X-Ok":"v","X-B":"\u0000"}}`: "headers.X-B",
		} {
			p := requireProblem(t, e.do("PATCH", "/v1/endpoints/"+created.ID, key, body), http.StatusBadRequest)
			require.Equal(t, []string{field}, fields(p), body)
			require.Contains(t, p.Detail, field, "the detail names the header")
		}
		after, _ := e.store.endpoint("acme", created.ID)
		require.Equal(t, before, after)
		rec := e.do("PATCH", "/v1/endpoints/"+created.ID, key, `{"headers":{"X-A":"tab\tis fine, and so is é"}}`)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	})
	t.Run("rate limit set, shown, changed and removed", func(t *testing.T) {
		rec := e.do("POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/rl","rate_limit":10}`)
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		v := decodeJSON[api.EndpointView](t, rec)
		require.Equal(t, 10, v.RateLimit)
		require.Equal(t, float64(10), rawJSON(t, e.do("GET", "/v1/endpoints/"+v.ID, key, nil))["rate_limit"])
		stored, _ := e.store.endpoint("acme", v.ID)
		require.Equal(t, 10, stored.RateLimit)
		require.Equal(t, 3, decodeJSON[api.EndpointView](t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, `{"rate_limit":3}`)).RateLimit)
		require.Equal(t, 3, e.getEndpoint(key, v.ID).RateLimit, "null leaves it")
		e.do("PATCH", "/v1/endpoints/"+v.ID, key, `{"rate_limit":null}`)
		require.Equal(t, 3, e.getEndpoint(key, v.ID).RateLimit, "null leaves it")
		rec = e.do("PATCH", "/v1/endpoints/"+v.ID, key, `{"rate_limit":0}`)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rawJSON(t, rec), "rate_limit", "0 removes the limit; an unlimited endpoint shows none")
		stored, _ = e.store.endpoint("acme", v.ID)
		require.Zero(t, stored.RateLimit)
	})
	t.Run("unknown endpoint", func(t *testing.T) {
		p := requireProblem(t, e.do("PATCH", "/v1/endpoints/ep_nope", key, `{"description":"x"}`), http.StatusNotFound)
		require.Contains(t, p.Detail, `"ep_nope"`)
	})
}

func TestDeleteEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	v := e.createEndpoint(key, nil)
	rec := e.do("DELETE", "/v1/endpoints/"+v.ID, key, nil)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.Empty(t, rec.Body.String())
	requireProblem(t, e.do("GET", "/v1/endpoints/"+v.ID, key, nil), http.StatusNotFound)
	requireProblem(t, e.do("DELETE", "/v1/endpoints/"+v.ID, key, nil), http.StatusNotFound)
	require.Zero(t, e.store.endpointCount("acme"))
}

func TestRotateSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	type rotation struct {
		body   any
		hdr    []string
		grace  time.Duration // expected; < 0: no previous_secret_until
		status int
		field  string
	}
	tests := map[string]rotation{
		"no body":                 {body: nil, grace: api.DefaultGrace, status: 200},
		"empty body":              {body: "", grace: api.DefaultGrace, status: 200},
		"empty body, no type":     {body: "", hdr: []string{"Content-Type", ""}, grace: api.DefaultGrace, status: 200},
		"empty object":            {body: `{}`, grace: api.DefaultGrace, status: 200},
		"null grace":              {body: `{"grace_seconds":null}`, grace: api.DefaultGrace, status: 200},
		"one hour":                {body: `{"grace_seconds":3600}`, grace: time.Hour, status: 200},
		"seven days":              {body: `{"grace_seconds":604800}`, grace: 7 * 24 * time.Hour, status: 200},
		"no grace":                {body: `{"grace_seconds":0}`, grace: -1, status: 200},
		"over seven days":         {body: `{"grace_seconds":604801}`, status: 400, field: "grace_seconds"},
		"negative":                {body: `{"grace_seconds":-1}`, status: 400, field: "grace_seconds"},
		"huge":                    {body: `{"grace_seconds":9223372036854775807}`, status: 400, field: "grace_seconds"},
		"overflow":                {body: `{"grace_seconds":1e400}`, status: 400, field: "grace_seconds"},
		"fraction":                {body: `{"grace_seconds":1.5}`, status: 400, field: "grace_seconds"},
		"string":                  {body: `{"grace_seconds":"3600"}`, status: 400, field: "grace_seconds"},
		"unknown field":           {body: `{"grace":3600}`, status: 400, field: "grace"},
		"malformed":               {body: `{"grace_seconds":`, status: 400},
		"wrong content type":      {body: `{}`, hdr: []string{"Content-Type", "text/plain"}, status: 415},
		"empty body, wrong type":  {body: "", hdr: []string{"Content-Type", "text/plain"}, grace: api.DefaultGrace, status: 200},
		"trailing garbage":        {body: `{} {}`, status: 400},
		"too big":                 {body: `{"grace_seconds":1` + strings.Repeat("0", api.MaxBodyBytes) + `}`, status: 413},
		"too big, leading spaces": {body: strings.Repeat(" ", api.MaxBodyBytes+1) + `{}`, status: 413},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v := e.createEndpoint(key, nil)
			before, _ := e.store.endpoint("acme", v.ID)
			rec := e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, tc.body, tc.hdr...)
			if tc.status != 200 {
				p := requireProblem(t, rec, tc.status)
				if tc.field != "" {
					require.Equal(t, []string{tc.field}, fields(p))
				}
				after, _ := e.store.endpoint("acme", v.ID)
				require.Equal(t, before, after, "a refused rotation changes nothing")
				return
			}
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			got := decodeJSON[api.EndpointView](t, rec)
			require.Regexp(t, secretRE, got.Secret)
			require.NotEqual(t, v.Secret, got.Secret)
			now := e.clock.Now()
			if tc.grace < 0 {
				require.Nil(t, got.PreviousSecretUntil)
			} else {
				require.NotNil(t, got.PreviousSecretUntil)
				require.Equal(t, now.Add(tc.grace), *got.PreviousSecretUntil)
			}
			current, retiring := e.secrets("acme", v.ID)
			require.Equal(t, []string{got.Secret}, current)
			require.Equal(t, v.Secret, retiring, "the old secret retires, sealed")

			again := e.getEndpoint(key, v.ID)
			require.Empty(t, again.Secret, "the new secret is not shown again")
			require.Equal(t, got.PreviousSecretUntil, again.PreviousSecretUntil)
		})
	}
	t.Run("previous_secret_until disappears when the grace ends", func(t *testing.T) {
		v := e.createEndpoint(key, nil)
		rec := e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, `{"grace_seconds":60}`)
		require.Equal(t, http.StatusOK, rec.Code)
		e.clock.Advance(59 * time.Second)
		require.NotNil(t, e.getEndpoint(key, v.ID).PreviousSecretUntil)
		e.clock.Advance(time.Second)
		require.Nil(t, e.getEndpoint(key, v.ID).PreviousSecretUntil)
	})
	t.Run("conflict", func(t *testing.T) {
		v := e.createEndpoint(key, nil)
		e.store.setConflictOnRotate(true)
		defer e.store.setConflictOnRotate(false)
		before, _ := e.store.endpoint("acme", v.ID)
		rec := e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, nil)
		p := requireProblem(t, rec, http.StatusConflict)
		require.Contains(t, p.Detail, "try again")
		require.NotContains(t, rec.Body.String(), "whsec_")
		after, _ := e.store.endpoint("acme", v.ID)
		require.Equal(t, before, after)
	})
	t.Run("unknown endpoint", func(t *testing.T) {
		requireProblem(t, e.do("POST", "/v1/endpoints/ep_nope/rotate-secret", key, nil), http.StatusNotFound)
	})
}

// An endpoint written before secrets were sealed holds its secret in
// plaintext: a rotation seals the new secret and the old one, and leaves no
// plaintext behind.
func TestRotatePlaintextSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	v := e.createEndpoint(key, nil)
	const old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAAAAAAAAAAA="
	stored, _ := e.store.endpoint("acme", v.ID)
	stored.SealedSecrets, stored.Secrets = nil, []string{old}
	e.store.setEndpoint(stored)

	rec := e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decodeJSON[api.EndpointView](t, rec)
	require.NotContains(t, rec.Body.String(), old, "the old secret is not shown")
	current, retiring := e.secrets("acme", v.ID)
	require.Equal(t, []string{got.Secret}, current)
	require.Equal(t, old, retiring, "the plaintext secret retires sealed")
}

// When KMS cannot seal, nothing is stored and nothing about the secret is
// shown or logged.
func TestSealFailureStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	v := e.createEndpoint(key, nil)
	before, _ := e.store.endpoint("acme", v.ID)
	e.kms.Fail = errors.New("KMSInternalException: try again")

	rec := e.do("POST", "/v1/endpoints", key, validEndpoint())
	requireProblem(t, rec, http.StatusInternalServerError)
	rec = e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, nil)
	requireProblem(t, rec, http.StatusInternalServerError)
	require.NotContains(t, rec.Body.String(), "whsec_")

	list := decodeJSON[struct{ Data []api.EndpointView }](t, e.do("GET", "/v1/endpoints", key, nil))
	require.Len(t, list.Data, 1, "no endpoint was created")
	after, _ := e.store.endpoint("acme", v.ID)
	require.Equal(t, before, after, "the rotation changed nothing")
	require.Contains(t, e.logs.String(), "KMSInternalException", "the cause is logged for the operator")
	require.NotContains(t, e.logs.String(), "whsec_")
}

func TestDisableEnable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	v := e.createEndpoint(key, nil)

	e.clock.Advance(time.Minute)
	rec := e.do("POST", "/v1/endpoints/"+v.ID+"/disable", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decodeJSON[api.EndpointView](t, rec)
	require.True(t, got.Disabled)
	require.Equal(t, "disabled_by_tenant", string(got.DisabledReason))
	require.Equal(t, got, e.getEndpoint(key, v.ID))

	// The endpoint also gathered failures; enabling clears them.
	stored, _ := e.store.endpoint("acme", v.ID)
	stored.ConsecutiveFailures = 7
	e.store.setEndpoint(stored)

	rec = e.do("POST", "/v1/endpoints/"+v.ID+"/enable", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	m := rawJSON(t, rec)
	require.Equal(t, false, m["disabled"])
	require.NotContains(t, m, "disabled_reason")
	got = e.getEndpoint(key, v.ID)
	require.False(t, got.Disabled)
	require.Empty(t, got.DisabledReason)
	stored, _ = e.store.endpoint("acme", v.ID)
	require.Zero(t, stored.ConsecutiveFailures)
	current, _ := e.secrets("acme", v.ID)
	require.Equal(t, []string{v.Secret}, current)

	for _, action := range []string{"enable", "disable"} {
		requireProblem(t, e.do("POST", "/v1/endpoints/ep_nope/"+action, key, nil), http.StatusNotFound)
	}
}

// --- tenant isolation --------------------------------------------------------

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	type tc struct {
		body any
		// disabledFirst starts A's endpoint disabled, so that a successful
		// enable by B would show.
		disabledFirst bool
		// own is the status A gets for its own resource; 0: a success.
		own int
	}
	// Every tenant route that takes an endpoint or delivery id.
	table := map[string]tc{
		"GET /v1/endpoints/{endpoint_id}":                {},
		"PATCH /v1/endpoints/{endpoint_id}":              {body: map[string]any{"url": "https://evil.example.com/steal", "description": "", "headers": map[string]string{}}},
		"DELETE /v1/endpoints/{endpoint_id}":             {},
		"POST /v1/endpoints/{endpoint_id}/rotate-secret": {body: map[string]any{"grace_seconds": 0}},
		"PUT /v1/endpoints/{endpoint_id}/auth":           {body: map[string]any{"type": "basic", "username": "evil", "password": "x"}},
		"DELETE /v1/endpoints/{endpoint_id}/auth":        {},
		"POST /v1/endpoints/{endpoint_id}/enable":        {disabledFirst: true},
		"POST /v1/endpoints/{endpoint_id}/disable":       {},
		"GET /v1/deliveries/{delivery_id}":               {},
		"GET /v1/endpoints/{endpoint_id}/stats":          {},
		// A's delivery is pending: A is told so (409), B that it does not exist.
		"POST /v1/deliveries/{delivery_id}/resend":        {own: http.StatusConflict},
		"POST /v1/endpoints/{endpoint_id}/test":           {},
		"POST /v1/endpoints/{endpoint_id}/cancel-pending": {body: map[string]any{}},
	}
	covered := 0
	for _, rt := range api.Routes() {
		if rt.Operator || !(strings.Contains(rt.Path, "{endpoint_id}") || strings.Contains(rt.Path, "{delivery_id}")) {
			continue
		}
		name := rt.Method + " " + rt.Path
		c, ok := table[name]
		require.True(t, ok, "route %s is not in the isolation table", name)
		covered++
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
			epA := e.createEndpoint(keyA, nil)
			e.createEndpoint(keyB, nil) // B has data of its own
			if c.disabledFirst {
				require.Equal(t, http.StatusOK, e.do("POST", "/v1/endpoints/"+epA.ID+"/disable", keyA, nil).Code)
			}
			e.store.putDelivery(domain.Delivery{
				DeliveryID: "dl_a1", TenantID: "tenant-a", EndpointID: epA.ID, EventID: "evt_a", EventType: "order.created",
				State: domain.StatePending, CreatedAt: t0, Attempts: 1,
				AttemptLog: []domain.Attempt{{Number: 1, At: t0, Status: 500, LatencyMS: 12, Excerpt: "tenant-a private response"}},
			})
			storedBefore, _ := e.store.endpoint("tenant-a", epA.ID)
			delivBefore, _ := e.store.delivery("dl_a1")
			viewBefore := e.getEndpoint(keyA, epA.ID)

			isDelivery := strings.Contains(rt.Path, "{delivery_id}")
			realID, missingID := epA.ID, "ep_aaaaaaaaaaaaaaaa"
			if isDelivery {
				realID, missingID = "dl_a1", "dl_zz"
			}
			send := func(key, id string) *httptest.ResponseRecorder {
				return e.do(rt.Method, fill(rt.Path, map[string]string{"endpoint_id": id, "delivery_id": id}), key, c.body)
			}

			cross := send(keyB, realID)
			missing := send(keyB, missingID)
			pCross := requireProblem(t, cross, http.StatusNotFound)
			pMissing := requireProblem(t, missing, http.StatusNotFound)
			require.Equal(t,
				strings.ReplaceAll(missing.Body.String(), missingID, "{id}"),
				strings.ReplaceAll(cross.Body.String(), realID, "{id}"),
				"another tenant's resource answers exactly as a missing one")
			require.Equal(t, missing.Header(), cross.Header())
			require.Equal(t, strings.ReplaceAll(pMissing.Detail, missingID, "{id}"), strings.ReplaceAll(pCross.Detail, realID, "{id}"))
			for _, leak := range []string{epA.URL, epA.Secret, "tenant-a", "private"} {
				require.NotContains(t, cross.Body.String(), leak)
			}

			storedAfter, ok := e.store.endpoint("tenant-a", epA.ID)
			require.True(t, ok, "A's endpoint still exists")
			require.Equal(t, storedBefore, storedAfter, "A's endpoint is unchanged")
			delivAfter, _ := e.store.delivery("dl_a1")
			require.Equal(t, delivBefore, delivAfter)
			require.Equal(t, viewBefore, e.getEndpoint(keyA, epA.ID))
			current, _ := e.secrets("tenant-a", epA.ID)
			require.Equal(t, []string{epA.Secret}, current)

			// Control: the same request with A's key does reach A's data.
			own := send(keyA, realID)
			if c.own != 0 {
				require.Equal(t, c.own, own.Code, own.Body.String())
			} else {
				require.Less(t, own.Code, 300, own.Body.String())
			}
		})
	}
	require.Equal(t, len(table), covered, "the isolation table lists a route that no longer exists")

	t.Run("GET /v1/events/{event_id}", func(t *testing.T) {
		e := newEnv(t)
		keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
		e.srv.MessageLog.(*storefake.MessageLog).Put(domain.Event{ID: "evt_a", TenantID: "tenant-a", Type: "order.created", OccurredAt: t0, Payload: []byte(`{"private":true}`)})
		cross, missing := e.do("GET", "/v1/events/evt_a", keyB, nil), e.do("GET", "/v1/events/evt_z", keyB, nil)
		requireProblem(t, cross, http.StatusNotFound)
		requireProblem(t, missing, http.StatusNotFound)
		require.Equal(t, strings.ReplaceAll(missing.Body.String(), "evt_z", "{id}"), strings.ReplaceAll(cross.Body.String(), "evt_a", "{id}"),
			"another tenant's event answers exactly as a missing one")
		require.NotContains(t, cross.Body.String(), "private")
		require.Equal(t, http.StatusOK, e.do("GET", "/v1/events/evt_a", keyA, nil).Code)
		require.JSONEq(t, `{"data":[]}`, e.do("GET", "/v1/events", keyB, nil).Body.String())
	})
	t.Run("GET /v1/events/{event_id}/deliveries", func(t *testing.T) {
		e := newEnv(t)
		keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
		epA := e.createEndpoint(keyA, nil)
		e.messageLog().Put(domain.Event{ID: "evt_shared", TenantID: "tenant-a", Type: "order.created", OccurredAt: t0})
		e.store.putDelivery(domain.Delivery{DeliveryID: domain.DeliveryID("tenant-a", "evt_shared", epA.ID, t0), TenantID: "tenant-a", EndpointID: epA.ID, EventID: "evt_shared", EventType: "order.created", State: domain.StatePending, CreatedAt: t0})
		cross, missing := e.do("GET", "/v1/events/evt_shared/deliveries", keyB, nil), e.do("GET", "/v1/events/evt_z/deliveries", keyB, nil)
		requireProblem(t, cross, http.StatusNotFound)
		require.Equal(t, strings.ReplaceAll(missing.Body.String(), "evt_z", "{id}"), strings.ReplaceAll(cross.Body.String(), "evt_shared", "{id}"),
			"another tenant's event answers exactly as a missing one")
		rec := e.do("GET", "/v1/events/evt_shared/deliveries", keyA, nil)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Len(t, rawJSON(t, rec)["data"], 1)
	})
	t.Run("GET /v1/endpoints", func(t *testing.T) {
		e := newEnv(t)
		keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
		e.createEndpoint(keyA, nil)
		rec := e.do("GET", "/v1/endpoints", keyB, nil)
		require.JSONEq(t, `{"data":[]}`, rec.Body.String())
		// A's cursor does not reach A's endpoints for B either.
		e.createEndpoint(keyA, nil)
		recA := e.do("GET", "/v1/endpoints?limit=1", keyA, nil)
		cursor := rawJSON(t, recA)["next_cursor"].(string)
		rec = e.do("GET", "/v1/endpoints?cursor="+cursor, keyB, nil)
		require.JSONEq(t, `{"data":[]}`, rec.Body.String())
	})
}

// --- deliveries --------------------------------------------------------------

func TestGetDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	at1, at2 := t0.Add(time.Second), t0.Add(time.Minute)
	e.store.putDelivery(domain.Delivery{
		DeliveryID: "dl_1", TenantID: "acme", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created",
		State: domain.StateDead, CreatedAt: t0, Attempts: 2, LastStatus: 503, LastError: "HTTP 503",
		DeadAt: &at2, DeadReason: "max_attempts",
		AttemptLog: []domain.Attempt{
			{Number: 1, At: at1, Error: "connection refused", LatencyMS: 3},
			{Number: 2, At: at2, Status: 503, LatencyMS: 120, Excerpt: "try later"},
		},
	})
	rec := e.do("GET", "/v1/deliveries/dl_1", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{
		"id": "dl_1", "event_id": "evt_1", "event_type": "order.created", "endpoint_id": "ep_1",
		"state": "dead", "attempts": 2, "last_status": 503, "last_error": "HTTP 503", "dead_reason": "max_attempts",
		"created_at": "2026-03-14T15:09:26Z", "dead_at": "2026-03-14T15:10:26Z",
		"attempt_log": [
			{"attempt": 1, "at": "2026-03-14T15:09:27Z", "error": "connection refused", "latency_ms": 3},
			{"attempt": 2, "at": "2026-03-14T15:10:26Z", "status": 503, "latency_ms": 120, "response": "try later"}
		]
	}`, rec.Body.String())
	v := decodeJSON[api.DeliveryView](t, rec)
	require.Len(t, v.AttemptLog, 2)

	t.Run("no attempts yet", func(t *testing.T) {
		e.store.putDelivery(domain.Delivery{DeliveryID: "dl_2", TenantID: "acme", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created", State: domain.StatePending, CreatedAt: t0})
		rec := e.do("GET", "/v1/deliveries/dl_2", key, nil)
		require.Equal(t, http.StatusOK, rec.Code)
		m := rawJSON(t, rec)
		require.Equal(t, []any{}, m["attempt_log"], "an empty log is [], not null")
		for _, absent := range []string{"delivered_at", "dead_at", "replayed_at", "last_status", "last_error", "dead_reason"} {
			require.NotContains(t, m, absent)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		p := requireProblem(t, e.do("GET", "/v1/deliveries/dl_nope", key, nil), http.StatusNotFound)
		require.Equal(t, `delivery "dl_nope" not found`, p.Detail)
	})
	t.Run("deliveries of an event", func(t *testing.T) {
		// The store lists an event's deliveries to the tenant's endpoints:
		// a delivery's id derives from its event's id and time and its
		// endpoint's, so the event is read first.
		e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0.Add(-time.Minute)})
		var want []string
		for _, ep := range []string{"ep_1", "ep_2"} {
			e.store.setEndpoint(domain.Endpoint{TenantID: "acme", EndpointID: ep, URL: "https://example.com/" + ep})
			id := domain.DeliveryID("acme", "evt_1", ep, t0.Add(-time.Minute))
			e.store.putDelivery(domain.Delivery{DeliveryID: id, TenantID: "acme", EndpointID: ep, EventID: "evt_1", EventType: "order.created", State: domain.StatePending, CreatedAt: t0})
			want = append(want, id)
		}
		rec := e.do("GET", "/v1/events/evt_1/deliveries", key, nil)
		require.Equal(t, http.StatusOK, rec.Code)
		var out struct {
			Data []api.DeliveryView `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		require.Len(t, out.Data, 2)
		require.ElementsMatch(t, want, []string{out.Data[0].ID, out.Data[1].ID})
		p := requireProblem(t, e.do("GET", "/v1/events/evt_none/deliveries", key, nil), http.StatusNotFound)
		require.Equal(t, `event "evt_none" not found`, p.Detail)
	})
}

// --- routing, hostile input, failures ---------------------------------------

// A path no route has is 404; a method a route's path does not take is 405
// with Allow naming the methods it does, whatever the key (routing comes
// before authentication: the routes are public in the OpenAPI document).
func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	tests := []struct {
		method, target string
		status         int
		allow          string
	}{
		{"GET", "/", 404, ""},
		{"GET", "/v2/endpoints", 404, ""},
		{"GET", "/v1", 404, ""},
		{"GET", "/v1/endpoint", 404, ""},
		{"GET", "/v1/endpoints/ep_1/secret", 404, ""},
		{"GET", "/v1/delivery", 404, ""},
		{"POST", "/v1/deliveries", 405, "GET"},
		{"PUT", "/v1/admin/tenants", 405, "GET, POST"},
		{"PUT", "/v1/endpoints", 405, "GET, POST"},
		{"DELETE", "/v1/endpoints", 405, "GET, POST"},
		{"HEAD", "/v1/endpoints", 405, "GET, POST"},
		{"PUT", "/v1/endpoints/ep_1", 405, "DELETE, GET, PATCH"},
		{"POST", "/v1/endpoints/ep_1", 405, "DELETE, GET, PATCH"},
		{"GET", "/v1/endpoints/ep_1/rotate-secret", 405, "POST"},
		{"POST", "/v1/deliveries/dl_1", 405, "GET"},
		{"HEAD", "/v1/deliveries/dl_1", 405, "GET"},
		{"OPTIONS", "/v1/endpoints", 405, "GET, POST"},
		{"POST", "/v1/dlq", 405, "GET"},
		{"GET", "/v1/dlq/replay", 405, "POST"},
		{"PATCH", "/v1/admin/tenants/acme/keys/k", 405, "DELETE"},
		{"GET", "/v1/admin/dlq/redrive", 405, "POST"},
		{"DELETE", "/v1/admin/stats", 405, "GET"},
		{"BREW", "/v1/endpoints", 405, "GET, POST"},
	}
	for _, tc := range tests {
		for _, k := range []string{"", key, operatorKey} {
			t.Run(tc.method+" "+tc.target+" key="+fmt.Sprint(k != ""), func(t *testing.T) {
				rec := e.do(tc.method, tc.target, k, nil)
				require.Equal(t, tc.status, rec.Code, rec.Body.String())
				require.Equal(t, tc.allow, rec.Header().Get("Allow"))
				if tc.method == "HEAD" {
					return // no body to check
				}
				p := checkProblem(t, rec)
				if tc.status == http.StatusMethodNotAllowed {
					require.Contains(t, p.Detail, tc.allow, "the detail names the methods too")
				}
			})
		}
	}
}

// An unclean path (an empty, . or .. segment, a trailing slash) is 404, where
// http.ServeMux would redirect (301, or 307 with a body) to the clean one: a
// client must not be sent on with its key to another URL, and API Gateway
// would not route it either.
func TestUncleanPathsAre404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	for _, tc := range []struct{ method, target string }{
		{"GET", "//v1/endpoints"},
		{"GET", "/v1//endpoints"},
		{"GET", "/v1/endpoints/"},
		{"GET", "/v1/./endpoints"},
		{"GET", "/v1/endpoints/."},
		{"GET", "/v1/x/../endpoints"},
		{"GET", "/v1/endpoints/" + ep.ID + "/"},
		{"GET", "/v1/endpoints/%2e%2e/endpoints"},
		{"POST", "/v1/endpoints/"},
		{"POST", "/v1//dlq/replay"},
		{"DELETE", "/v1/endpoints//" + ep.ID},
		{"GET", "/v1/endpoints/../admin/stats"},
		{"GET", "/v1/dlq/?since=2026-01-01T00:00:00Z"},
	} {
		for _, k := range []string{key, operatorKey} {
			t.Run(tc.method+" "+tc.target, func(t *testing.T) {
				rec := e.do(tc.method, tc.target, k, nil)
				require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
				require.Empty(t, rec.Header().Get("Location"), "no redirect")
				checkProblem(t, rec)
			})
		}
	}
	_, ok := e.store.endpoint("acme", ep.ID)
	require.True(t, ok, "nothing was deleted")
}

func TestHostileInputsNever5xx(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	long := strings.Repeat("x", 4000)
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	tests := []struct {
		method, target, key string
		body                any
		hdr                 []string
	}{
		{"GET", "/v1/endpoints/%00", key, nil, nil},
		{"GET", "/v1/endpoints/%ff%fe", key, nil, nil},
		{"GET", "/v1/endpoints/" + long, key, nil, nil},
		{"PATCH", "/v1/endpoints/" + long, key, `{"description":"x"}`, nil},
		{"DELETE", "/v1/endpoints/" + long, key, nil, nil},
		{"POST", "/v1/endpoints/" + long + "/rotate-secret", key, nil, nil},
		{"POST", "/v1/endpoints/" + long + "/disable", key, nil, nil},
		{"GET", "/v1/deliveries/" + long, key, nil, nil},
		{"GET", "/v1/events/" + long + "/deliveries", key, nil, nil},
		{"GET", "/v1/endpoints/a%2Fb%2F..%2F..", key, nil, nil},
		{"GET", "/v1/endpoints/..%2F..%2Fadmin%2Ftenants", key, nil, nil},
		{"GET", "/v1/endpoints/%E2%80%AE", key, nil, nil},
		{"GET", "/v1/deliveries/%00%00", key, nil, nil},
		{"GET", "/v1/events/%0d%0aX-Injected:%201/deliveries", key, nil, nil},
		{"GET", "/v1/endpoints?limit=" + long, key, nil, nil},
		{"GET", "/v1/endpoints?cursor=" + long, key, nil, nil},
		{"GET", "/v1/endpoints?cursor=" + base64.RawURLEncoding.EncodeToString([]byte(long)), key, nil, nil},
		{"GET", "/v1/endpoints?cursor=_w", key, nil, nil},
		{"GET", "/v1/endpoints?cursor=%00&limit=%ff", key, nil, nil},
		{"GET", "/v1/endpoints?limit=1&limit=2&cursor=a&cursor=b", key, nil, nil},
		{"GET", "/v1/endpoints", "", nil, []string{"Authorization", "Bearer " + long + long + long}},
		{"GET", "/v1/endpoints", "", nil, []string{"Authorization", "Bearer hk_aaaaaaaaaaaa_" + strings.Repeat("A", 43)}},
		{"GET", "/v1/endpoints", "", nil, []string{"Authorization", "Bearer \x01\x02"}},
		{"GET", "/v1/admin/tenants", "", nil, []string{"Authorization", "Bearer " + operatorKey + "\t"}},
		{"POST", "/v1/endpoints", key, deep, nil},
		{"POST", "/v1/endpoints", key, `{"url":` + deep + `}`, nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/\ud800"}`, nil},
		{"POST", "/v1/endpoints", key, "\xef\xbb\xbf{\"url\":\"https://hooks.example.com/x\"}", nil},
		{"POST", "/v1/endpoints", key, "{\"url\":\"https://hooks.example.com/\xff\"}", nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x","headers":{"X-A":null}}`, nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://[fe80::1%25eth0]/x"}`, nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x"}`, []string{"Content-Type", "application/json; charset=\x00"}},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x"}`, []string{"Content-Length", "-5"}},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x"}`, []string{"Content-Encoding", "gzip"}},
		{"POST", "/v1/endpoints", key, "\x00\x01\x02", nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x","event_types":{"a":1}}`, nil},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x","headers":{"X-A":{"b":1}}}`, nil},
		{"POST", "/v1/endpoints", key, `{"URL":"https://hooks.example.com/x","Url":5}`, nil},
		{"PATCH", "/v1/endpoints/" + ep.ID, key, deep, nil},
		{"PATCH", "/v1/endpoints/" + ep.ID, key, `{"event_types":[1,2,3]}`, nil},
		{"PATCH", "/v1/endpoints/" + ep.ID, key, `{"headers":{"X-A":"` + long + `"}}`, nil},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", key, `{"grace_seconds":-9223372036854775808}`, nil},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", key, `{"grace_seconds":[]}`, nil},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", key, "\x00", nil},
		{"POST", "/v1/admin/tenants", operatorKey, `{"tenant_id":{"$ne":null}}`, nil},
		{"POST", "/v1/admin/tenants", operatorKey, `{"tenant_id":"` + long + `"}`, nil},
		{"POST", "/v1/admin/tenants", operatorKey, `{"name":` + deep + `}`, nil},
		{"POST", "/v1/admin/tenants/" + long + "/keys", operatorKey, nil, nil},
		{"POST", "/v1/admin/tenants/%00/keys", operatorKey, nil, nil},
		{"DELETE", "/v1/admin/tenants/" + long + "/keys/" + long, operatorKey, nil, nil},
		{"DELETE", "/v1/admin/tenants/acme/keys/%ff", operatorKey, nil, nil},
		{"POST", "/v1/endpoints/" + long + "/test", key, nil, nil},
		{"POST", "/v1/events", key, deep, nil},
		{"POST", "/v1/events", key, `{"type":"x","payload":` + deep + `}`, nil},
		{"POST", "/v1/events", key, `{"type":"x","payload":{}}`, []string{"Idempotency-Key", long}},
		{"POST", "/v1/events", key, `{"type":"x","payload":{},"id":"` + long + `"}`, nil},
		{"POST", "/v1/events", key, `{"type":"x","payload":{},"endpoint_id":"` + long + `"}`, nil},
		{"POST", "/v1/events", key, `{"type":"x","payload":{},"sequence":1e400}`, nil},
		{"POST", "/v1/events", key, `{"type":"x","payload":"\ud800"}`, nil},
		{"POST", "/v1/events", key, "{\"type\":\"x\",\"payload\":\"\xff\"}", nil},
		{"GET", "/v1//endpoints", key, nil, nil},
		{"GET", "/v1/endpoints/../admin/tenants", key, nil, nil},
	}
	for i, tc := range tests {
		name := fmt.Sprintf("%d %s %.60s", i, tc.method, tc.target)
		t.Run(name, func(t *testing.T) {
			rec := e.do(tc.method, tc.target, tc.key, tc.body, tc.hdr...)
			require.Less(t, rec.Code, 500, rec.Body.String())
			if rec.Code >= 400 {
				checkProblem(t, rec)
			}
		})
	}
	// The endpoint survived all of that unchanged but for valid edits.
	_, ok := e.store.endpoint("acme", ep.ID)
	require.True(t, ok)
	require.NotContains(t, e.logs.String(), "api internal error")
	require.NotContains(t, e.logs.String(), "api panic")
}

func TestStorePanicIs500WithoutDetail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0})
	tests := []struct {
		method, target, key, panicIn string
		body                         any
	}{
		{"GET", "/v1/endpoints", key, "*", nil},
		{"GET", "/v1/endpoints", key, "ListEndpoints", nil},
		{"POST", "/v1/endpoints", key, "CreateEndpoint", validEndpoint()},
		{"GET", "/v1/endpoints/" + ep.ID, key, "Endpoint", nil},
		{"PATCH", "/v1/endpoints/" + ep.ID, key, "UpdateEndpoint", `{"description":"x"}`},
		{"DELETE", "/v1/endpoints/" + ep.ID, key, "DeleteEndpoint", nil},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", key, "RotateSecret", nil},
		{"POST", "/v1/endpoints/" + ep.ID + "/disable", key, "SetEndpointEnabled", nil},
		{"GET", "/v1/deliveries/dl_1", key, "Delivery", nil},
		{"GET", "/v1/events/evt_1/deliveries", key, "DeliveriesOfEvent", nil},
		{"POST", "/v1/admin/tenants", operatorKey, "CreateTenant", `{}`},
		{"POST", "/v1/admin/tenants/acme/keys", operatorKey, "PutAPIKey", nil},
		{"DELETE", "/v1/admin/tenants/acme/keys/k", operatorKey, "RevokeAPIKey", nil},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target+" "+tc.panicIn, func(t *testing.T) {
			e.store.setPanic(tc.panicIn)
			defer e.store.setPanic("")
			rec := e.do(tc.method, tc.target, tc.key, tc.body)
			p := requireProblem(t, rec, http.StatusInternalServerError)
			require.Equal(t, "internal error", p.Detail)
			require.NotContains(t, rec.Body.String(), "exploded")
			require.NotContains(t, rec.Body.String(), "s3cr3t")
		})
	}
	require.Contains(t, e.logs.String(), "api panic")
	require.NotContains(t, e.logs.String(), "s3cr3t", "the panic value is not logged either")
	// The server still works.
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints/"+ep.ID, key, nil).Code)
}

func TestStoreFailureIs500WithoutDetail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	e.store.setFail(errTableDown)
	for _, tc := range []struct{ method, target, key string }{
		{"GET", "/v1/endpoints", key},
		{"GET", "/v1/endpoints/" + ep.ID, key},
		{"POST", "/v1/admin/tenants/acme/keys", operatorKey},
		{"DELETE", "/v1/admin/tenants/acme/keys/k", operatorKey},
	} {
		rec := e.do(tc.method, tc.target, tc.key, nil)
		p := requireProblem(t, rec, http.StatusInternalServerError)
		require.Equal(t, "internal error; try again", p.Detail)
		require.NotContains(t, rec.Body.String(), "unreachable")
		require.Empty(t, rec.Header().Get("WWW-Authenticate"), "a store failure is not an authentication failure")
	}
	require.Contains(t, e.logs.String(), "table unreachable", "the cause is logged for the operator")
}

func TestZeroConfigServer(t *testing.T) {
	t.Parallel()
	fs := newFakeStore(time.Now)
	k, err := apikey.New(rand.Reader)
	require.NoError(t, err)
	fs.addKey("acme", k.ID, k.Hash)
	h := (&api.Server{Store: fs.ports()}).Handler() // no Log, Rand, Now, Sealer or operator key
	for _, tc := range []struct {
		method, target, body string
		status               int
	}{
		// Without a Sealer a secret is never stored: in plaintext it would
		// be readable by whoever reads the table.
		{"POST", "/v1/endpoints", `{"url":"https://hooks.example.com/x"}`, http.StatusInternalServerError},
		{"GET", "/v1/endpoints", "", http.StatusOK},
		{"GET", "/v1/endpoints/ep_nope", "", http.StatusNotFound},
		{"POST", "/v1/admin/tenants", `{}`, http.StatusUnauthorized},
	} {
		req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+k.Plain)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, tc.status, rec.Code, "%s %s: %s", tc.method, tc.target, rec.Body.String())
	}
}

// --- logs -----------------------------------------------------------------------

func TestLogsNeverHoldKeysOrSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var keys, secrets []string
	var keyIDs []string

	for _, tenant := range []string{"acme", "globex"} {
		require.Equal(t, http.StatusCreated, e.do("POST", "/v1/admin/tenants", operatorKey, map[string]any{"tenant_id": tenant}).Code)
		for i := 0; i < 2; i++ {
			rec := e.do("POST", "/v1/admin/tenants/"+tenant+"/keys", operatorKey, nil)
			require.Equal(t, http.StatusCreated, rec.Code)
			kv := decodeJSON[api.KeyView](t, rec)
			keys = append(keys, kv.Key)
			keyIDs = append(keyIDs, kv.KeyID)
		}
	}
	key := keys[0]
	for i := 0; i < 3; i++ {
		v := e.createEndpoint(key, nil)
		secrets = append(secrets, v.Secret)
		for j := 0; j < 2; j++ {
			rec := e.do("POST", "/v1/endpoints/"+v.ID+"/rotate-secret", key, `{"grace_seconds":60}`)
			require.Equal(t, http.StatusOK, rec.Code)
			secrets = append(secrets, decodeJSON[api.EndpointView](t, rec).Secret)
		}
		e.do("PATCH", "/v1/endpoints/"+v.ID, key, `{"description":"x"}`)
		e.do("GET", "/v1/endpoints/"+v.ID, key, nil)
		e.do("POST", "/v1/endpoints/"+v.ID+"/disable", key, nil)
		e.do("POST", "/v1/endpoints/"+v.ID+"/enable", key, nil)
		// Someone pastes the signing secret as an API key, or into a body.
		e.do("GET", "/v1/endpoints", secrets[len(secrets)-1], nil)
		e.do("POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x","secret":"`+secrets[len(secrets)-1]+`"}`)
	}
	e.do("GET", "/v1/endpoints", key, nil)
	e.do("GET", "/v1/endpoints", keys[1]+"x", nil)                     // near-miss key
	e.do("POST", "/v1/admin/tenants", keys[2], `{"tenant_id":"nope"}`) // tenant key on admin
	e.do("GET", "/v1/endpoints", operatorKey, nil)                     // operator key on tenant route
	e.do("DELETE", "/v1/admin/tenants/acme/keys/"+keyIDs[1], operatorKey, nil)
	e.do("GET", "/v1/endpoints", keys[1], nil) // revoked
	e.store.setFail(errTableDown)
	e.do("GET", "/v1/endpoints", key, nil)
	e.store.setFail(nil)
	e.store.setPanic("*")
	e.do("GET", "/v1/endpoints", key, nil)
	e.store.setPanic("")

	logs := e.logs.String()
	require.NotEmpty(t, logs)
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		require.True(t, json.Valid([]byte(line)), line)
	}
	for _, k := range keys {
		require.NotContains(t, logs, k)
		require.NotContains(t, logs, k[16:], "not even the secret part of a key")
	}
	for _, s := range secrets {
		require.NotContains(t, logs, s)
		require.NotContains(t, logs, strings.TrimPrefix(s, "whsec_"))
	}
	require.NotContains(t, logs, "whsec_")
	require.NotContains(t, logs, operatorKey)
	// Nor their ciphertexts.
	list := decodeJSON[struct{ Data []api.EndpointView }](t, e.do("GET", "/v1/endpoints", key, nil))
	require.NotEmpty(t, list.Data)
	for _, v := range list.Data {
		stored, _ := e.store.endpoint("acme", v.ID)
		for _, sealed := range append(stored.SealedSecrets, stored.SealedRetiringSecret) {
			require.NotEmpty(t, sealed)
			require.NotContains(t, logs, sealed)
		}
	}
	// Key ids are what identifies a caller in the logs.
	require.Contains(t, logs, `"key_id":"`+keyIDs[0]+`"`)
	require.Contains(t, logs, `"tenant_id":"acme"`)
}

// --- fuzzing ---------------------------------------------------------------------

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.com/x"}`,
		`{"url":"https://hooks.example.com/x","description":"d","event_types":["a.b","c.*","*"],"headers":{"X-A":"1"}}`,
		`{"url":"http://hooks.example.com/x"}`,
		`{"url":"https://169.254.169.254/"}`,
		`{"url":"https://u:p@hooks.example.com/"}`,
		`{"event_types":["bad type"],"headers":{"Content-Type":"x"}}`,
		`{"headers":{"X-A":"a\r\nb"}}`,
		`{"url":5}`,
		`{"description":""}`,
		`{"event_types":[]}`,
		`{"headers":{}}`,
		`{"unknown":1}`,
		`{"url":"https://hooks.example.com/x"} x`,
		`{"url":`,
		`[]`,
		`null`,
		``,
		`{"url":"https://[::1]/"}`,
		`{"url":"https://0x7f000001/"}`,
	} {
		f.Add([]byte(s))
	}
}

func FuzzCreateEndpointBody(f *testing.F) {
	fuzzSeeds(f)
	e := newEnv(f)
	key := e.newTenant("acme")
	f.Fuzz(func(t *testing.T, body []byte) {
		e.tb = t
		rec := e.do("POST", "/v1/endpoints", key, body)
		switch {
		case rec.Code == http.StatusCreated:
			v := decodeJSON[api.EndpointView](t, rec)
			require.Regexp(t, secretRE, v.Secret)
			stored, ok := e.store.endpoint("acme", v.ID)
			require.True(t, ok)
			require.NoError(t, e.srv.URLs.CheckURL(stored.URL), "only acceptable URLs are stored")
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/endpoints/"+v.ID, key, nil).Code)
		case rec.Code >= 400 && rec.Code < 500:
			checkProblem(t, rec)
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}

func FuzzPatchEndpointBody(f *testing.F) {
	fuzzSeeds(f)
	e := newEnv(f)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		e.tb = t
		rec := e.do("PATCH", "/v1/endpoints/"+ep.ID, key, body)
		switch {
		case rec.Code == http.StatusOK:
			v := decodeJSON[api.EndpointView](t, rec)
			require.Empty(t, v.Secret)
			require.Equal(t, ep.ID, v.ID)
			require.NoError(t, e.srv.URLs.CheckURL(v.URL))
		case rec.Code >= 400 && rec.Code < 500:
			checkProblem(t, rec)
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
		current, _ := e.secrets("acme", ep.ID)
		require.Equal(t, []string{ep.Secret}, current, "PATCH never touches the secret")
	})
}

// A listing that reads an index DynamoDB is still creating after an
// upgrade answers 503 with a Retry-After and says which index, never 500.
func TestIndexNotReadyIs503WithRetryAfter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	e.store.setFail(&store.IndexNotReadyError{Index: "by_log", Message: "Cannot read from backfilling global secondary index: by_log"})
	for _, target := range []string{"/v1/deliveries", "/v1/dlq"} {
		rec := e.do("GET", target, key, nil)
		p := requireProblem(t, rec, http.StatusServiceUnavailable)
		require.Contains(t, p.Detail, "by_log")
		require.Contains(t, p.Detail, "still being created")
		require.Equal(t, strconv.Itoa(int(store.IndexRetryAfter.Seconds())), rec.Header().Get("Retry-After"))
	}
	require.NotContains(t, e.logs.String(), "api internal error")
}
