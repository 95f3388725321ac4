//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTenantLimitOnTheCloud: a tenant flooding an expensive route (40
// listings at once) gets some 429s, each a problem with Retry-After and
// the limit named, through API Gateway and across the api function's
// instances; meanwhile another tenant's listing, the flooding tenant's
// publish and the operator's route answer as usual.
func TestTenantLimitOnTheCloud(t *testing.T) {
	t.Parallel()
	_, noisy := apiTenant(t, "limit_noisy")
	_, quiet := apiTenant(t, "limit_quiet")
	op, err := operatorKey()
	require.NoError(t, err)

	var mu sync.Mutex
	statuses := map[int]int{}
	var limited []string
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, hdr, body, err := getOnce("/v1/endpoints", noisy)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[-1]++ // the network: counted, never a 429
				return
			}
			statuses[status]++
			if status == http.StatusTooManyRequests {
				limited = append(limited, hdr.Get("Retry-After")+" "+string(body))
			}
		}()
	}
	wg.Wait()
	require.NotZero(t, statuses[http.StatusTooManyRequests], "a flood of 40 at once is limited: %v", statuses)
	require.NotZero(t, statuses[http.StatusOK], "the tenant's share is served: %v", statuses)
	for _, l := range limited {
		secs, err := strconv.Atoi(l[:1])
		require.NoError(t, err, "Retry-After in seconds: %s", l)
		require.GreaterOrEqual(t, secs, 1)
		require.Contains(t, l, "expensive requests a second")
	}

	status, _ := call(t, "GET", "/v1/endpoints", quiet, nil)
	require.Equal(t, http.StatusOK, status, "another tenant's listing")
	status, _ = call(t, "POST", "/v1/events", noisy, map[string]any{"type": "order.created", "payload": map[string]any{"n": 1}})
	require.Equal(t, http.StatusAccepted, status, "publishing is not limited per tenant")
	status, _ = call(t, "GET", "/v1/admin/stats", op, nil)
	require.Equal(t, http.StatusOK, status, "the operator's routes are not limited per tenant")
}

// getOnce sends one GET with a tenant key: safe from any goroutine (no
// testing.T), no retry.
func getOnce(path, key string) (int, http.Header, []byte, error) {
	url := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID + path
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body, err
}
