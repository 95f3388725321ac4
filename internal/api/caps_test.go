package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/stretchr/testify/require"
)

// requireCap: rec is a refusal by the named cap at limit, with status.
func requireCap(t *testing.T, rec *httptest.ResponseRecorder, status int, name string, limit int) api.Problem {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
	var p api.Problem
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	require.Equal(t, name, p.Cap)
	require.Equal(t, limit, p.Limit)
	require.Contains(t, p.Detail, fmt.Sprintf("%s %d", name, limit), "the detail names the cap and its value")
	return p
}

// A tenant at its endpoint cap is refused another with 409 naming the cap;
// a delete makes room; another tenant's endpoints do not count.
func TestEndpointsPerTenantCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Caps.MaxEndpoints = 3
	key, other := e.newTenant("acme"), e.newTenant("globex")
	var ids []string
	for range 3 {
		ids = append(ids, e.createEndpoint(key, nil).ID)
	}
	rec := e.do("POST", "/v1/endpoints", key, validEndpoint())
	p := requireCap(t, rec, http.StatusConflict, api.CapEndpointsPerTenant, 3)
	require.Contains(t, p.Detail, "has 3 endpoints")
	require.Equal(t, 3, e.store.endpointCount("acme"), "nothing was written")

	e.createEndpoint(other, nil) // another tenant's room is its own

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/endpoints/"+ids[1], key, nil).Code)
	e.createEndpoint(key, nil)
	requireCap(t, e.do("POST", "/v1/endpoints", key, validEndpoint()), http.StatusConflict, api.CapEndpointsPerTenant, 3)
}

// The default cap is domain.DefaultMaxEndpoints: the 101st endpoint is
// refused.
func TestEndpointsPerTenantCapDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	for range 100 {
		e.createEndpoint(key, nil)
	}
	requireCap(t, e.do("POST", "/v1/endpoints", key, validEndpoint()), http.StatusConflict, api.CapEndpointsPerTenant, 100)
}

// headersOf are n headers of size bytes each (value), named X-H0...
func headersOf(n, size int) map[string]string {
	h := map[string]string{}
	for i := range n {
		h[fmt.Sprintf("X-H%d", i)] = strings.Repeat("v", size)
	}
	return h
}

// An endpoint holding more of the tenant's bytes than endpoint_bytes is
// refused with 400 naming the cap, on create and on an update whose
// result would be over it (the fields it leaves counted as stored); each
// field within its own cap.
func TestEndpointBytesCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")

	big := validEndpoint()
	big["headers"] = headersOf(17, 1000) // 17 KB: every header within its 1 KiB
	p := requireCap(t, e.do("POST", "/v1/endpoints", key, big), http.StatusBadRequest, api.CapEndpointBytes, 16<<10)
	require.Equal(t, "endpoint", p.Errors[0].Field)
	require.Zero(t, e.store.endpointCount("acme"))

	e.srv.Caps.MaxEndpointBytes = 9_500
	body := validEndpoint()
	body["headers"] = headersOf(9, 1000) // 9,036 bytes of headers, about 9.1 KB in all
	ep := e.createEndpoint(key, body)

	// Each field of the update is valid; the endpoint they make is not.
	rec := e.do("PATCH", "/v1/endpoints/"+ep.ID, key, map[string]any{"description": strings.Repeat("d", 500), "event_types": []string{strings.Repeat("a", 120), strings.Repeat("b", 120), strings.Repeat("c", 120)}})
	requireCap(t, rec, http.StatusBadRequest, api.CapEndpointBytes, 9_500)
	require.Equal(t, "orders", e.getEndpoint(key, ep.ID).Description, "the refused update changed nothing")

	// Replacing the headers with fewer makes room for the same fields.
	rec = e.do("PATCH", "/v1/endpoints/"+ep.ID, key, map[string]any{"headers": headersOf(2, 1000), "description": strings.Repeat("d", 500)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
