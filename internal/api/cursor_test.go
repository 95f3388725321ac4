package api_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every listing's cursor decodes to a page or to a 400 naming the cursor,
// never a 5xx: a cursor altered, truncated, made for another listing, or
// of no shape at all.
func TestEveryListingCursorIsA400NotA500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	e.createEndpoint(key, nil)
	_, next := e.firstPageCursor(key)
	listings := []struct {
		path, cred string
	}{
		{"/v1/endpoints?limit=1", key}, {"/v1/deliveries?limit=1", key}, {"/v1/dlq?limit=1", key}, {"/v1/events?limit=1", key},
		{"/v1/metrics/attempts?group_by=endpoint", key}, {"/v1/admin/tenants?limit=1", operatorKey},
	}
	cursors := []string{"x", "\x00", "e30", "%", strings.Repeat("A", 3000), base64.RawURLEncoding.EncodeToString([]byte("\xff\xfe\xfd")),
		base64.RawURLEncoding.EncodeToString([]byte(`{"k":"2026-01-01T00:00:00.000000000Z#","f":"x"}`)), next, next[:len(next)/2]}
	for _, l := range listings {
		for _, c := range cursors {
			rec := e.do("GET", l.path+"&cursor="+url.QueryEscape(c), l.cred, nil)
			require.Less(t, rec.Code, 500, "%s cursor %q: %s", l.path, c, rec.Body.String())
			if rec.Code != http.StatusOK {
				p := requireProblem(t, rec, http.StatusBadRequest)
				require.Contains(t, p.Detail, "cursor", "%s cursor %q", l.path, c)
			}
		}
	}
}

// firstPageCursor lists the tenant's endpoints one a page after making a
// second one, and answers the first page's next cursor (a cursor of
// another listing for the others).
func (e *env) firstPageCursor(key string) (int, string) {
	e.tb.Helper()
	e.createEndpoint(key, nil)
	rec := e.do("GET", "/v1/endpoints?limit=1", key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code)
	p := decodeJSON[struct {
		Data []map[string]any `json:"data"`
		Next string           `json:"next_cursor"`
	}](e.tb, rec)
	require.NotEmpty(e.tb, p.Next)
	return rec.Code, p.Next
}
