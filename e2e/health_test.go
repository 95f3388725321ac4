//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scripted is a receiver whose answer depends on the event id's prefix:
// fast_ (200 after 30 ms), slow_ (200 after 250 ms), err_ (500, then 200),
// busy_ (429, then 200). It counts the requests it got.
func scripted(t *testing.T) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		id, first := r.Header.Get("X-Event-Id"), r.Header.Get("X-Attempt") == "1"
		switch {
		case strings.HasPrefix(id, "fast_"):
			time.Sleep(30 * time.Millisecond)
		case strings.HasPrefix(id, "slow_"):
			time.Sleep(250 * time.Millisecond)
		case strings.HasPrefix(id, "err_") && first:
			w.WriteHeader(http.StatusInternalServerError)
			return
		case strings.HasPrefix(id, "busy_") && first:
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// An endpoint's attempts show in its stats route, counted exactly by
// class, with latency percentiles that match what the receiver did, and in
// its health.
func TestEndpointStatsCountTheAttempts(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "stats")
	_, otherKey := apiTenant(t, "stats_other")
	srv, requests := scripted(t)
	epID, _ := apiEndpoint(t, key, srv.URL)
	prefixes := map[string]int{"fast_": 6, "slow_": 4, "err_": 3, "busy_": 2}
	for p, n := range prefixes {
		for i := range n {
			write(t, event(tenant{ID: tenantID}, fmt.Sprintf("%s%d_%d", p, i, time.Now().UnixNano()), "order.created", `{"n":1}`))
		}
	}
	// 15 first attempts, 5 of them failed and retried once: 20 attempts.
	path := "/v1/endpoints/" + epID + "/stats"
	var totals map[string]any
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		status, body := call(t, "GET", path, key, nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		totals = body["totals"].(map[string]any)
		if totals["attempts"].(float64) >= 20 && totals["delivered"].(float64) >= 15 {
			break
		}
		time.Sleep(time.Second)
	}
	require.Equal(t, 20, requests(), "the receiver got 20 requests")
	require.Equal(t, 20.0, totals["attempts"], "%v", totals)
	require.Equal(t, 15.0, totals["delivered"])
	require.Equal(t, 0.75, totals["success_rate"])
	require.Equal(t, map[string]any{"timeout": 0.0, "network": 0.0, "http_4xx": 0.0, "http_429": 2.0, "http_5xx": 3.0, "http_other": 0.0, "refused": 0.0}, totals["failures"])
	lat := totals["latency_ms"].(map[string]any)
	p50, p95, p99 := lat["p50"].(float64), lat["p95"].(float64), lat["p99"].(float64)
	t.Logf("latency p50 %.1f ms, p95 %.1f ms, p99 %.1f ms", p50, p95, p99)
	// Ten fast answers (the failures and their retries), six after 30 ms,
	// four after 250 ms: the median is among the first, the 95th and 99th
	// among the slow ones.
	require.Less(t, p50, 50.0)
	require.GreaterOrEqual(t, p95, 200.0)
	require.LessOrEqual(t, p95, p99)
	require.Less(t, p99, 1000.0)

	status, body := call(t, "GET", "/v1/endpoints/"+epID, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	h := body["health"].(map[string]any)
	require.Equal(t, 20.0, h["attempts_24h"])
	require.Equal(t, 0.75, h["success_rate_24h"])
	require.Equal(t, p95, h["p95_latency_ms_24h"])
	require.NotNil(t, h["last_success_at"])
	last := h["last_failure"].(map[string]any)
	require.Contains(t, []any{"http_500", "http_429"}, last["error"])
	require.Contains(t, []any{500.0, 429.0}, last["status"])
	require.Nil(t, h["disabled_at"])
	require.Nil(t, h["disabled_reason"])

	status, body = call(t, "GET", path, otherKey, nil)
	require.Equal(t, http.StatusNotFound, status, "another tenant's endpoint: %v", body)
	status, body = call(t, "GET", path+"?since=yesterday", key, nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "since", body["errors"].([]any)[0].(map[string]any)["field"])
}
