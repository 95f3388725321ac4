//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Through the deployed HTTP API: a JSON body sent as a form (curl -d's
// default type) or with no type is read; a type that cannot carry JSON is a
// 415 problem with an Accept-Post header, as the gateway passes it through.
func TestAPIBodyContentTypes(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "ctype")
	cases := []struct {
		name, contentType, body string
		status                  int
	}{
		{"form carrying JSON", "application/x-www-form-urlencoded", `{"url":"https://hooks.example.com/form"}`, http.StatusCreated},
		{"no content type", "", `{"url":"https://hooks.example.com/none"}`, http.StatusCreated},
		{"a real form", "application/x-www-form-urlencoded", `url=https%3A%2F%2Fhooks.example.com%2Fx`, http.StatusUnsupportedMediaType},
		{"XML", "text/xml", `<endpoint url="https://hooks.example.com/x"/>`, http.StatusUnsupportedMediaType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", strings.TrimSuffix(env.endpointURL, "/")+"/_aws/execute-api/"+env.out.ApiID+"/v1/endpoints", strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			} else {
				req.Header["Content-Type"] = nil // net/http sends none
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, resp.StatusCode, "%s", raw)
			var out map[string]any
			require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
			if tc.status == http.StatusUnsupportedMediaType {
				require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
				require.Equal(t, "application/json", resp.Header.Get("Accept-Post"))
				require.NotEmpty(t, out["detail"])
				return
			}
			require.NotEmpty(t, out["id"], "the endpoint was created: %s", raw)
		})
	}
}
