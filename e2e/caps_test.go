//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireCapRefusal: an answer is a refusal by the named tenant cap, with
// the status and the cap's value in the problem (cap, limit) and its
// detail.
func requireCapRefusal(t *testing.T, status int, body map[string]any, wantStatus int, name string) int {
	t.Helper()
	require.Equal(t, wantStatus, status, "%v", body)
	require.Equal(t, name, body["cap"], "%v", body)
	limit, ok := body["limit"].(float64)
	require.True(t, ok && limit > 0, "the problem carries the cap's value: %v", body)
	require.Contains(t, body["detail"], fmt.Sprintf("%s %d", name, int(limit)))
	return int(limit)
}

// fullHeaders are n custom headers of 1 KiB values, each within its own cap.
func fullHeaders(n int) map[string]string {
	h := map[string]string{}
	for i := range n {
		h[fmt.Sprintf("X-Caps-%d", i)] = strings.Repeat("v", 1024)
	}
	return h
}

// A tenant creates endpoints until the deployed stack refuses one with 409
// naming endpoints_per_tenant; the limit it names is how many it created;
// a delete makes room for exactly one more. Another tenant is not refused.
func TestCapEndpointsPerTenant(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(200))
	_, key := apiTenant(t, "caps_count")
	var ids []string
	var status int
	var body map[string]any
	for range 1000 { // far above any cap a test stack deploys
		status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL + "/hook"})
		if status != http.StatusCreated {
			break
		}
		ids = append(ids, body["id"].(string))
	}
	limit := requireCapRefusal(t, status, body, http.StatusConflict, "endpoints_per_tenant")
	require.Len(t, ids, limit, "the cap refused the first endpoint past it, no earlier")

	status, body = call(t, "DELETE", "/v1/endpoints/"+ids[0], key, nil)
	require.Equal(t, http.StatusNoContent, status, "%v", body)
	status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL + "/hook"})
	require.Equal(t, http.StatusCreated, status, "a delete makes room: %v", body)
	status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL + "/hook"})
	requireCapRefusal(t, status, body, http.StatusConflict, "endpoints_per_tenant")

	_, other := apiTenant(t, "caps_count_other")
	apiEndpoint(t, other, rcv.URL+"/hook")
}

// An endpoint whose fields are each within their caps but together hold
// more than endpoint_bytes is refused with 400 naming it, on create and on
// an update; the field caps each answer 400 naming their field.
func TestCapEndpointBytesAndFields(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(200))
	_, key := apiTenant(t, "caps_bytes")

	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL + "/hook", "headers": fullHeaders(20)})
	limit := requireCapRefusal(t, status, body, http.StatusBadRequest, "endpoint_bytes")
	require.Less(t, limit, 20*1024, "20 headers of 1 KiB are over the deployed cap")

	id, _ := apiEndpoint(t, key, rcv.URL+"/hook")
	status, body = call(t, "PATCH", "/v1/endpoints/"+id, key, map[string]any{"headers": fullHeaders(20)})
	requireCapRefusal(t, status, body, http.StatusBadRequest, "endpoint_bytes")
	status, body = call(t, "PATCH", "/v1/endpoints/"+id, key, map[string]any{"headers": fullHeaders(2)})
	require.Equal(t, http.StatusOK, status, "within the cap: %v", body)

	types := make([]string, 51)
	for i := range types {
		types[i] = fmt.Sprintf("caps.t%d", i)
	}
	many := map[string]string{}
	for i := range 21 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, c := range []struct {
		name  string
		in    map[string]any
		field string
	}{
		{"21 headers", map[string]any{"url": rcv.URL, "headers": many}, "headers"},
		{"51 event types", map[string]any{"url": rcv.URL, "event_types": types}, "event_types"},
		{"a header value over 1 KiB", map[string]any{"url": rcv.URL, "headers": map[string]string{"X-Big": strings.Repeat("v", 1025)}}, "headers.X-Big"},
	} {
		status, body := call(t, "POST", "/v1/endpoints", key, c.in)
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", c.name, body)
		errs, _ := body["errors"].([]any)
		require.NotEmpty(t, errs, "%s: %v", c.name, body)
		require.Equal(t, c.field, errs[0].(map[string]any)["field"], "%s: %v", c.name, body)
	}
}
