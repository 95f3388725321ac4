package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/apigw"
)

func (e *env) mintPortalLink(tenant string, body any) api.PortalLinkView {
	e.tb.Helper()
	rec := e.do("POST", "/v1/admin/tenants/"+tenant+"/portal-links", operatorKey, body)
	require.Equal(e.tb, http.StatusCreated, rec.Code, rec.Body.String())
	return decodeJSON[api.PortalLinkView](e.tb, rec)
}

func detailOf(tb testing.TB, rec *httptest.ResponseRecorder) string {
	tb.Helper()
	require.Equal(tb, "application/problem+json", rec.Header().Get("Content-Type"))
	var p struct {
		Detail string `json:"detail"`
	}
	require.NoError(tb, json.Unmarshal(rec.Body.Bytes(), &p))
	return p.Detail
}

// A portal link's token is a tenant credential: it reaches its tenant's
// routes and resources only, never an operator route, and is never logged.
func TestPortalLinkSignsInAsItsTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA, keyB := e.newTenant("acme"), e.newTenant("globex")
	ep := e.createEndpoint(keyA, validEndpoint())
	other := e.createEndpoint(keyB, validEndpoint())

	link := e.mintPortalLink("acme", nil)
	require.Regexp(t, `^pl_`, link.ID)
	require.Regexp(t, `^plt_[A-Za-z0-9_-]{43}$`, link.Token)
	require.Equal(t, "acme", link.TenantID)
	require.Equal(t, t0.Add(api.DefaultPortalTTL), link.ExpiresAt)
	require.Equal(t, "http://example.com/console/#portal="+link.Token, link.URL, "httptest's host; no stage")

	rec := e.do("GET", "/v1/endpoints/"+ep.ID, link.Token, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = e.do("GET", "/v1/endpoints", link.Token, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), ep.ID)
	require.NotContains(t, rec.Body.String(), other.ID)
	rec = e.do("GET", "/v1/endpoints/"+other.ID, link.Token, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "another tenant's endpoint is as good as missing")
	for _, target := range []string{"/v1/admin/stats", "/v1/admin/tenants/acme/keys"} {
		method := "GET"
		if strings.HasSuffix(target, "keys") {
			method = "POST"
		}
		rec = e.do(method, target, link.Token, nil)
		require.Equal(t, http.StatusUnauthorized, rec.Code, target)
		require.Equal(t, "this route needs the operator key", detailOf(t, rec))
	}
	require.NotContains(t, e.logs.String(), link.Token, "the token is never logged")
	require.NotContains(t, e.logs.String(), strings.TrimPrefix(link.Token, "plt_"))
	require.Contains(t, e.logs.String(), link.ID, "the link's id is, as a key's id is")
}

func TestPortalLinkExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.newTenant("acme")
	link := e.mintPortalLink("acme", map[string]any{"ttl_seconds": 60})
	require.Equal(t, t0.Add(time.Minute), link.ExpiresAt)
	e.clock.Advance(59 * time.Second)
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", link.Token, nil).Code)
	e.clock.Advance(time.Second)
	rec := e.do("GET", "/v1/endpoints", link.Token, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "the portal link has expired", detailOf(t, rec))
	require.Equal(t, `Bearer realm="hookline"`, rec.Header().Get("WWW-Authenticate"))
}

func TestPortalLinkRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.newTenant("acme")
	e.newTenant("globex")
	link := e.mintPortalLink("acme", nil)
	keep := e.mintPortalLink("acme", nil)

	rec := e.do("DELETE", "/v1/admin/tenants/globex/portal-links/"+link.ID, operatorKey, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "another tenant's link")
	rec = e.do("DELETE", "/v1/admin/tenants/acme/portal-links/pl_missing", operatorKey, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = e.do("DELETE", "/v1/admin/tenants/acme/portal-links/"+link.ID, keep.Token, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code, "a portal token cannot revoke")
	rec = e.do("DELETE", "/v1/admin/tenants/acme/portal-links/"+link.ID, operatorKey, nil)
	require.Equal(t, http.StatusNoContent, rec.Code)

	rec = e.do("GET", "/v1/endpoints", link.Token, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "the portal link was revoked", detailOf(t, rec))
	require.Equal(t, http.StatusOK, e.do("GET", "/v1/endpoints", keep.Token, nil).Code, "the other link still works")

	rec = e.do("GET", "/v1/endpoints", "plt_"+strings.Repeat("A", 43), nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "the API key is not valid (unknown or revoked)", detailOf(t, rec), "an unknown token: the usual 401")
}

func TestPortalLinkMinting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	for _, body := range []any{
		map[string]any{"ttl_seconds": 59},
		map[string]any{"ttl_seconds": 3601},
		map[string]any{"ttl_seconds": "900"},
		map[string]any{"ttl": 900},
		map[string]any{"ttl_seconds": -1},
		// Seconds past a Duration's range wrap when multiplied into one:
		// 900 ± 2^55 and 900 - 2^59 all become 900 s, a valid TTL
		// (schemathesis found 1 - 2^59, 1 s on the local cloud, with seed
		// 168879829370846061924417877777913441224: 201 Created).
		map[string]any{"ttl_seconds": 900 - 1<<59},
		map[string]any{"ttl_seconds": 900 + 1<<55},
		map[string]any{"ttl_seconds": 900 - 1<<55},
	} {
		rec := e.do("POST", "/v1/admin/tenants/acme/portal-links", operatorKey, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
	}
	require.Equal(t, t0.Add(time.Hour), e.mintPortalLink("acme", map[string]any{"ttl_seconds": 3600}).ExpiresAt)
	require.Equal(t, t0.Add(api.DefaultPortalTTL), e.mintPortalLink("acme", `{"ttl_seconds":null}`).ExpiresAt, "null: the default")
	require.Equal(t, t0.Add(api.DefaultPortalTTL), e.mintPortalLink("acme", `{}`).ExpiresAt)
	rec := e.do("POST", "/v1/admin/tenants/nobody/portal-links", operatorKey, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = e.do("POST", "/v1/admin/tenants/acme/portal-links", key, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code, "a tenant key cannot mint")

	e.srv.PortalMinTTL = time.Second
	h := e.srv.Handler()
	req := httptest.NewRequest("POST", "/v1/admin/tenants/acme/portal-links", strings.NewReader(`{"ttl_seconds":1}`))
	req.Header.Set("Authorization", "Bearer "+operatorKey)
	out := httptest.NewRecorder()
	h.ServeHTTP(out, req)
	require.Equal(t, http.StatusCreated, out.Code, "a deployment may lower the least life: %s", out.Body.String())
}

// The console URL is the one the client used: on AWS its host and scheme
// (X-Forwarded-Proto), on the local cloud its host and the
// /_aws/execute-api/{apiId} prefix under which the local cloud serves the API.
func TestPortalLinkURLFollowsTheRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.newTenant("acme")
	for _, tc := range []struct {
		name, host, proto, domain, want string
	}{
		{"AWS", "abc123.execute-api.eu-west-1.amazonaws.com", "https", "abc123.execute-api.eu-west-1.amazonaws.com", "https://abc123.execute-api.eu-west-1.amazonaws.com/console/"},
		{"custom domain", "hooks.example.com", "https", "hooks.example.com", "https://hooks.example.com/console/"},
		{"local cloud", "127.0.0.1:4566", "", "abc123.execute-api.localhost", "http://127.0.0.1:4566/_aws/execute-api/abc123/console/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayV2HTTPRequest{RawPath: "/v1/admin/tenants/acme/portal-links", Headers: map[string]string{
				"host": tc.host, "authorization": "Bearer " + operatorKey,
			}}
			if tc.proto != "" {
				ev.Headers["x-forwarded-proto"] = tc.proto
			}
			ev.RequestContext.HTTP.Method = "POST"
			ev.RequestContext.APIID, ev.RequestContext.DomainName, ev.RequestContext.Stage = "abc123", tc.domain, "$default"
			resp, err := apigw.Handler(e.h)(context.Background(), ev)
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, resp.StatusCode, resp.Body)
			var link api.PortalLinkView
			require.NoError(t, json.Unmarshal([]byte(resp.Body), &link))
			require.Equal(t, tc.want+"#portal="+link.Token, link.URL)
		})
	}
}
