package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
)

// scopeCase is a request of one tenant route that succeeds with an API key
// in scopeEnv.
type scopeCase struct {
	body any
	// want is the API key's status.
	want int
}

// scopeCases holds a request for every tenant route; TestPortalLinkScopes
// fails when a route is missing here.
var scopeCases = map[string]scopeCase{
	"POST /v1/endpoints":                              {body: validEndpoint(), want: http.StatusCreated},
	"GET /v1/endpoints":                               {want: http.StatusOK},
	"GET /v1/endpoints/{endpoint_id}":                 {want: http.StatusOK},
	"GET /v1/endpoints/{endpoint_id}/stats":           {want: http.StatusOK},
	"GET /v1/metrics/attempts":                        {want: http.StatusOK},
	"GET /v1/jwks.json":                               {want: http.StatusOK},
	"PATCH /v1/endpoints/{endpoint_id}":               {body: map[string]any{"description": "changed"}, want: http.StatusOK},
	"DELETE /v1/endpoints/{endpoint_id}":              {want: http.StatusNoContent},
	"POST /v1/endpoints/{endpoint_id}/rotate-secret":  {want: http.StatusOK},
	"PUT /v1/endpoints/{endpoint_id}/auth":            {body: map[string]any{"type": "basic", "username": "u", "password": "p"}, want: http.StatusOK},
	"POST /v1/notification-emails":                    {body: map[string]any{"address": "ops@example.com"}, want: http.StatusCreated},
	"GET /v1/notification-emails":                     {want: http.StatusOK},
	"DELETE /v1/notification-emails/{notify_id}":      {want: http.StatusNotFound},
	"DELETE /v1/endpoints/{endpoint_id}/auth":         {want: http.StatusOK},
	"POST /v1/endpoints/{endpoint_id}/enable":         {want: http.StatusOK},
	"POST /v1/endpoints/{endpoint_id}/disable":        {want: http.StatusOK},
	"POST /v1/endpoints/{endpoint_id}/test":           {want: http.StatusAccepted},
	"POST /v1/events":                                 {body: `{"type":"order.created","payload":{"n":1}}`, want: http.StatusAccepted},
	"GET /v1/deliveries/{delivery_id}":                {want: http.StatusOK},
	"GET /v1/events/{event_id}/deliveries":            {want: http.StatusOK},
	"POST /v1/deliveries/{delivery_id}/resend":        {want: http.StatusAccepted},
	"GET /v1/events":                                  {want: http.StatusOK},
	"GET /v1/events/{event_id}":                       {want: http.StatusOK},
	"GET /v1/dlq":                                     {want: http.StatusOK},
	"GET /v1/deliveries":                              {want: http.StatusOK},
	"POST /v1/dlq/replay":                             {body: map[string]any{"endpoint_id": "{endpoint_id}"}, want: http.StatusAccepted},
	"GET /v1/replays/{job_id}":                        {want: http.StatusOK},
	"GET /v1/session":                                 {want: http.StatusOK},
	"GET /v1/egress-ips":                              {want: http.StatusOK},
	"GET /v1/event-types":                             {want: http.StatusOK},
	"POST /v1/endpoints/{endpoint_id}/cancel-pending": {body: map[string]any{}, want: http.StatusAccepted},
	"POST /v1/replays":                                {body: map[string]any{"since": "2026-03-01T00:00:00Z"}, want: http.StatusAccepted},
}

// scopeEnv is a tenant "acme" with an endpoint, a delivered delivery of an
// event in the message log, a dead one and a replay job: every tenant route
// has something to act on. It answers the env, the API key and the path
// values.
func scopeEnv(t *testing.T) (*env, string, map[string]string) {
	e, _, key, ep := resendEnv(t)
	e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0, Payload: json.RawMessage(`{"n":1}`)})
	delivered := e.putDeliveryOf(ep, "evt_1", domain.StateDelivered)
	e.putDeliveryOf(ep, "evt_2", domain.StateDead)
	rec := e.do("POST", "/v1/dlq/replay", key, map[string]any{"endpoint_id": ep.ID})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	job := decodeJSON[api.JobView](t, rec)
	return e, key, map[string]string{"endpoint_id": ep.ID, "delivery_id": delivered, "event_id": "evt_1", "job_id": job.ID}
}

// state is what a refused write must leave as it was: the tenant's
// endpoints as GET shows them (with their secrets' versions) and the outbox.
func (e *env) state(key, endpointID string) (string, int) {
	e.tb.Helper()
	rec := e.do("GET", "/v1/endpoints/"+endpointID, key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code)
	list := e.do("GET", "/v1/endpoints", key, nil)
	e.outbox().mu.Lock()
	defer e.outbox().mu.Unlock()
	return rec.Body.String() + list.Body.String(), e.outbox().puts
}

// A portal link minted without scopes reads and replays dead deliveries as
// an API key does and is refused every write (a replay since a time and a
// resend included: deliveries:replay) with 403 naming the scope, changing nothing; a
// link with a route's scope takes it as an API key does, and one with
// every other scope still gets 403.
func TestPortalLinkScopes(t *testing.T) {
	t.Parallel()
	covered := 0
	for _, rt := range api.Routes() {
		if rt.Operator || rt.Public {
			continue
		}
		name := rt.Method + " " + rt.Path
		c, ok := scopeCases[name]
		require.True(t, ok, "route %s has no case in scopeCases", name)
		covered++
		others := slices.DeleteFunc(domain.Scopes(), func(s domain.Scope) bool { return s == rt.Scope })
		run := func(t *testing.T, scopes []domain.Scope) (got int, e *env, key string, vals map[string]string, cred string) {
			e, key, vals = scopeEnv(t)
			cred = key
			if scopes != nil {
				cred = e.mintPortalLink("acme", map[string]any{"scopes": scopes}).Token
			}
			body := c.body
			if m, ok := body.(map[string]any); ok && m["endpoint_id"] == "{endpoint_id}" {
				body = map[string]any{"endpoint_id": vals["endpoint_id"]}
			}
			before, puts := e.state(key, vals["endpoint_id"])
			rec := e.do(rt.Method, fill(rt.Path, vals), cred, body)
			if rec.Code == http.StatusForbidden {
				p := requireProblem(t, rec, http.StatusForbidden)
				require.Equal(t, string(rt.Scope), p.MissingScope)
				require.Contains(t, p.Detail, string(rt.Scope), "the detail names the missing scope")
				after, putsAfter := e.state(key, vals["endpoint_id"])
				require.Equal(t, before, after, "a refused write changes nothing")
				require.Equal(t, puts, putsAfter, "a refused publish writes nothing")
			}
			return rec.Code, e, key, vals, cred
		}
		t.Run(name, func(t *testing.T) {
			got, _, _, _, _ := run(t, nil)
			require.Equal(t, c.want, got, "an API key")
			got, _, _, _, _ = run(t, []domain.Scope{})
			if rt.Scope == "" {
				require.Equal(t, c.want, got, "a read-and-replay link reads and replays")
				return
			}
			require.Equal(t, http.StatusForbidden, got, "a read-and-replay link may not write")
			got, _, _, _, _ = run(t, others)
			require.Equal(t, http.StatusForbidden, got, "every other scope is not %s", rt.Scope)
			got, _, _, _, _ = run(t, []domain.Scope{rt.Scope})
			require.Equal(t, c.want, got, "a link with %s", rt.Scope)
		})
	}
	require.Equal(t, len(scopeCases), covered, "scopeCases names only routes")
}

// The write routes and their scopes, as docs/openapi.yaml describes them.
func TestRouteScopes(t *testing.T) {
	t.Parallel()
	got := map[string]domain.Scope{}
	for _, rt := range api.Routes() {
		if rt.Scope != "" {
			require.False(t, rt.Operator, "%s %s: an operator route needs no scope", rt.Method, rt.Path)
			got[rt.Method+" "+rt.Path] = rt.Scope
		}
	}
	require.Equal(t, map[string]domain.Scope{
		"POST /v1/endpoints":                              domain.ScopeEndpointsWrite,
		"PATCH /v1/endpoints/{endpoint_id}":               domain.ScopeEndpointsWrite,
		"DELETE /v1/endpoints/{endpoint_id}":              domain.ScopeEndpointsWrite,
		"POST /v1/endpoints/{endpoint_id}/enable":         domain.ScopeEndpointsWrite,
		"POST /v1/endpoints/{endpoint_id}/disable":        domain.ScopeEndpointsWrite,
		"POST /v1/endpoints/{endpoint_id}/test":           domain.ScopeEndpointsWrite,
		"POST /v1/endpoints/{endpoint_id}/cancel-pending": domain.ScopeEndpointsWrite,
		"POST /v1/endpoints/{endpoint_id}/rotate-secret":  domain.ScopeSecretsRotate,
		"PUT /v1/endpoints/{endpoint_id}/auth":            domain.ScopeEndpointsWrite,
		"POST /v1/notification-emails":                    domain.ScopeEndpointsWrite,
		"DELETE /v1/notification-emails/{notify_id}":      domain.ScopeEndpointsWrite,
		"DELETE /v1/endpoints/{endpoint_id}/auth":         domain.ScopeEndpointsWrite,
		"POST /v1/events":                                 domain.ScopeEventsPublish,
		"POST /v1/replays":                                domain.ScopeDeliveriesReplay,
		"POST /v1/deliveries/{delivery_id}/resend":        domain.ScopeDeliveriesReplay,
	}, got)
}

// The mint request's scopes: stored, answered in domain order without
// duplicates ([] for none), and an unknown one is 400 with no link made.
func TestMintPortalLinkScopes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.newTenant("acme")
	for _, tc := range []struct {
		name string
		body any
		want []string
	}{
		{"no body", nil, []string{}},
		{"null", map[string]any{"scopes": nil}, []string{}},
		{"empty", map[string]any{"scopes": []string{}}, []string{}},
		{"some, out of order, repeated", map[string]any{"scopes": []string{"events:publish", "endpoints:write", "events:publish"}},
			[]string{"endpoints:write", "events:publish"}},
		{"all", map[string]any{"scopes": []string{"deliveries:replay", "endpoints:write", "secrets:rotate", "events:publish"}},
			[]string{"endpoints:write", "secrets:rotate", "events:publish", "deliveries:replay"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := e.mintPortalLink("acme", tc.body)
			require.Equal(t, tc.want, link.Scopes)
			s := decodeJSON[api.SessionView](t, e.do("GET", "/v1/session", link.Token, nil))
			require.Equal(t, tc.want, s.Scopes, "the session shows the stored scopes")
		})
	}
	for _, bad := range []any{[]string{"write"}, []string{"endpoints:read"}, []string{""}, "endpoints:write", []int{1}} {
		rec := e.do("POST", "/v1/admin/tenants/acme/portal-links", operatorKey, map[string]any{"scopes": bad})
		p := requireProblem(t, rec, http.StatusBadRequest)
		require.Contains(t, p.Detail, "scopes", "%v", bad)
	}
}

// GET /v1/session: the tenant and what its credential may write.
func TestSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	s := decodeJSON[api.SessionView](t, e.do("GET", "/v1/session", key, nil))
	require.Equal(t, api.SessionView{TenantID: "acme", Credential: api.CredentialAPIKey,
		Scopes: []string{"endpoints:write", "secrets:rotate", "events:publish", "deliveries:replay"}}, s, "an API key holds every scope")

	link := e.mintPortalLink("acme", map[string]any{"scopes": []string{"secrets:rotate"}})
	s = decodeJSON[api.SessionView](t, e.do("GET", "/v1/session", link.Token, nil))
	require.Equal(t, "acme", s.TenantID)
	require.Equal(t, api.CredentialPortalLink, s.Credential)
	require.Equal(t, []string{"secrets:rotate"}, s.Scopes)
	require.Equal(t, link.ID, s.LinkID)
	require.NotNil(t, s.ExpiresAt)
	require.True(t, link.ExpiresAt.Equal(*s.ExpiresAt))

	require.NoError(t, e.store.RevokePortalLink(t.Context(), "acme", link.ID))
	requireProblem(t, e.do("GET", "/v1/session", link.Token, nil), http.StatusUnauthorized)
}

// Custom header values (often the receiver's credentials) are shown only to
// a credential that may write the endpoint: an API key and a link with
// endpoints:write see them; a link without it sees the names, each value
// api.RedactedHeaderValue and headers_redacted set, in the endpoint's
// answer and in the list's.
func TestHeaderValuesNeedEndpointsWrite(t *testing.T) {
	t.Parallel()
	e, key, vals := scopeEnv(t)
	ep := vals["endpoint_id"]
	rec := e.do("PATCH", "/v1/endpoints/"+ep, key, map[string]any{"headers": map[string]string{"Authorization": "Bearer receiver-s3cret"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, tc := range []struct {
		name     string
		scopes   []domain.Scope
		redacted bool
	}{
		{"api key", nil, false},
		{"link without scopes", []domain.Scope{}, true},
		{"link with every scope but endpoints:write", []domain.Scope{domain.ScopeSecretsRotate, domain.ScopeEventsPublish, domain.ScopeDeliveriesReplay}, true},
		{"link with endpoints:write", []domain.Scope{domain.ScopeEndpointsWrite}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := key
			if tc.scopes != nil {
				cred = e.mintPortalLink("acme", map[string]any{"scopes": tc.scopes}).Token
			}
			one := e.do("GET", "/v1/endpoints/"+ep, cred, nil)
			require.Equal(t, http.StatusOK, one.Code)
			list := e.do("GET", "/v1/endpoints", cred, nil)
			require.Equal(t, http.StatusOK, list.Code)
			views := append([]api.EndpointView{decodeJSON[api.EndpointView](t, one)}, decodeJSON[struct {
				Data []api.EndpointView `json:"data"`
			}](t, list).Data...)
			for _, v := range views {
				want := "Bearer receiver-s3cret"
				if tc.redacted {
					want = api.RedactedHeaderValue
				}
				require.Equal(t, map[string]string{"Authorization": want}, v.Headers)
				require.Equal(t, tc.redacted, v.HeadersRedacted)
			}
			if tc.redacted {
				require.NotContains(t, one.Body.String()+list.Body.String(), "receiver-s3cret")
			}
		})
	}
}
