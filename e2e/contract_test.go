//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawCall sends one request through API Gateway on the local cloud with the
// path exactly as given (not cleaned) and returns the answer's status,
// headers and problem document (nil unless the answer is one).
func rawCall(t *testing.T, method, path, key, body string) (int, http.Header, map[string]any) {
	t.Helper()
	base := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID
	u, err := url.Parse(base)
	require.NoError(t, err)
	p, q, _ := strings.Cut(path, "?")
	u.Path, u.RawPath, u.RawQuery = u.Path+p, u.Path+p, q
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u.String(), rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var doc map[string]any
	if resp.Header.Get("Content-Type") == "application/problem+json" {
		require.NoError(t, json.Unmarshal(raw, &doc), "%s", raw)
	}
	return resp.StatusCode, resp.Header, doc
}

// The API honours its contract on the deployed stack: what no route takes is
// a problem document (405 with Allow, or 404, never a redirect), and the
// inputs that answered 500 are 400s naming the fault.
func TestAPIContract(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "contract")

	t.Run("a wrong method is 405 with Allow", func(t *testing.T) {
		for _, tc := range []struct{ method, path, allow string }{
			{"PUT", "/v1/endpoints", "GET, POST"},
			{"DELETE", "/v1/dlq", "GET"},
			{"POST", "/v1/endpoints/ep_x", "DELETE, GET, PATCH"},
		} {
			status, hdr, doc := rawCall(t, tc.method, tc.path, key, "")
			require.Equal(t, http.StatusMethodNotAllowed, status, "%s %s", tc.method, tc.path)
			require.Equal(t, tc.allow, hdr.Get("Allow"))
			require.NotEmpty(t, doc["detail"], "a problem document")
		}
	})
	t.Run("an unknown or unclean path is 404, not a redirect", func(t *testing.T) {
		for _, path := range []string{"/v1/endpoints/", "/v1/./endpoints", "/v1/x/../endpoints", "/v1/nothing"} {
			status, hdr, doc := rawCall(t, "GET", path, key, "")
			require.Equal(t, http.StatusNotFound, status, path)
			require.Empty(t, hdr.Get("Location"), path)
			require.NotEmpty(t, doc["detail"], "%s: a problem document", path)
		}
	})

	rcv := newReceiver(t, status(http.StatusBadRequest)) // every delivery dead at once
	ep, _ := apiEndpoint(t, key, rcv.URL+"/hook")

	t.Run("control characters in a custom header are 400 naming it", func(t *testing.T) {
		for body, field := range map[string]string{
			`{"headers":{"X-A":"a\u0001b"}}`: "headers.X-A",
			`{"headers":{"X-A":"\u007f"}}`:   "headers.X-A",
			`{"headers":{"X\u0001":"v"}}`:    "headers.X\x01",
		} {
			status, _, doc := rawCall(t, "PATCH", "/v1/endpoints/"+ep, key, body)
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Contains(t, fmt.Sprint(doc["errors"]), field, body)
		}
		status, _, doc := rawCall(t, "POST", "/v1/endpoints", key, `{"url":"https://example.com/x","headers":{"X-A":"a\u001bb"}}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, fmt.Sprint(doc["errors"]), "headers.X-A")
	})
	t.Run("an update of the url, or of nothing, is not a 500", func(t *testing.T) {
		// url is a reserved word in DynamoDB expressions, and an empty
		// ExpressionAttributeNames is refused: both answered 500.
		status, body := call(t, "PATCH", "/v1/endpoints/"+ep, key, map[string]any{"url": rcv.URL + "/hook2"})
		require.Equal(t, http.StatusOK, status, "%v", body)
		require.Equal(t, rcv.URL+"/hook2", body["url"])
		status, body = call(t, "PATCH", "/v1/endpoints/"+ep, key, map[string]any{})
		require.Equal(t, http.StatusOK, status, "%v", body)
	})

	t.Run("dates and cursors outside the query's range are 400", func(t *testing.T) {
		deadEvents(t, tenantID, ep, 3, "contract.dead")
		var first map[string]any
		require.Eventually(t, func() bool {
			var status int
			status, first = call(t, "GET", "/v1/dlq?limit=1", key, nil)
			return status == http.StatusOK && first["next_cursor"] != nil
		}, 30*time.Second, 500*time.Millisecond, "the listing holds the dead deliveries")
		cursor := first["next_cursor"].(string)
		deadAt, err := time.Parse(time.RFC3339Nano, first["data"].([]any)[0].(map[string]any)["dead_at"].(string))
		require.NoError(t, err)

		status, body := call(t, "GET", "/v1/dlq?limit=1&cursor="+cursor, key, nil)
		require.Equal(t, http.StatusOK, status, "the cursor with its own query: %v", body)

		later := url.QueryEscape(deadAt.Add(time.Millisecond).Format(time.RFC3339Nano))
		for q, field := range map[string]string{
			"?since=9000-01-01T00:00:00Z":                         "since",
			"?until=9999-12-31T23:59:59-01:00":                    "until",
			"?until=":                                             "until",
			"?limit=1&cursor=" + cursor + "&since=" + later:       "cursor",
			"?limit=1&cursor=" + cursor + "&event_type=other.one": "cursor",
		} {
			status, body := call(t, "GET", "/v1/dlq"+q, key, nil)
			require.Equal(t, http.StatusBadRequest, status, "%s: %v", q, body)
			require.Contains(t, body["detail"], field, q)
		}
		// A replay job with such a filter is refused at creation.
		for _, in := range []map[string]any{{"since": "9000-01-01T00:00:00Z"}, {"until": "9999-12-31T23:59:59-01:00"}, {"since": ""}} {
			status, body := call(t, "POST", "/v1/dlq/replay", key, in)
			require.Equal(t, http.StatusBadRequest, status, "%v: %v", in, body)
			require.Empty(t, body["id"], "no job")
		}
	})
}
