//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

// An endpoint whose receiver answers 503 has its circuit breaker opened by
// the failures: the endpoints view shows the breaker's line, as text, at
// desktop and phone widths. Once the receiver answers 200, the breaker's
// probe succeeds, the line is gone at the next refresh, and every delivery
// that waited is delivered.
func TestConsoleShowsAnOpenCircuitBreaker(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consolebreaker")
	var up atomic.Bool
	var mu sync.Mutex
	delivered := map[string]int{} // webhook-id: requests answered 200
	var rcv *receiver
	rcv = newReceiver(t, func(n int, w http.ResponseWriter) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		id := rcv.requests()[n-1].Header.Get(signing.HeaderID)
		mu.Lock()
		delivered[id]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	epID, _ := apiEndpoint(t, key, rcv.URL+"/hook")

	// 12 events: their first attempts pass the failing threshold (10
	// consecutive failures, the last retryable) and open the breaker.
	const events = 12
	want := map[string]bool{}
	for i := range events {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_breaker_%d_%s", i, tenantID), "order.created", fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		want[domain.DeliveryID(ev.TenantID, ev.ID, epID, ev.OccurredAt)] = true
	}
	var br map[string]any
	require.Eventually(t, func() bool {
		br = breakerOf(t, key, epID)
		return br["state"] == string(domain.BreakerOpen) || br["state"] == string(domain.BreakerHalfOpen)
	}, 60*time.Second, 250*time.Millisecond, "the breaker opens: %v", br)

	// While the receiver fails the breaker stays open or half open: the
	// endpoint's row says so, as text.
	epRow := row("endpoint-row", epID)
	line := epRow + " " + dt("endpoint-breaker")
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInByPortal(t, b, tenantID)
	b.wait(line)
	requireBreakerLine(t, b, line)
	b.screenshot("breaker-open")
	b.assertSafe("endpoints, breaker open")

	p := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, p, key)
	p.wait(line)
	requireBreakerLine(t, p, line)
	p.noHorizontalOverflow("endpoints, breaker open")
	p.assertSafe("phone endpoints, breaker open")

	// Recovered: the next probe succeeds and closes the breaker, which the
	// console shows at a refresh of the endpoints view.
	up.Store(true)
	recovered := time.Now()
	for {
		refreshEndpoints(b, epRow)
		if b.count(line) == 0 {
			break
		}
		if time.Since(recovered) > 45*time.Second {
			t.Fatalf("the breaker line is still shown %s after the receiver recovered: %q (API: %v)",
				time.Since(recovered).Round(time.Second), b.text(line), breakerOf(t, key, epID))
		}
		time.Sleep(time.Second)
	}
	t.Logf("breaker line gone %s after the receiver recovered", time.Since(recovered).Round(100*time.Millisecond))
	require.Equal(t, string(domain.BreakerClosed), breakerOf(t, key, epID)["state"])
	b.assertSafe("endpoints, breaker closed")

	// Every delivery that waited for the breaker went out and was answered 200.
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for id := range want {
			if delivered[id] == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(missing()) == 0 }, 120*time.Second, 250*time.Millisecond,
		"deliveries the receiver never accepted: %v", missing)
	mu.Lock()
	for id := range delivered {
		require.True(t, want[id], "the receiver accepted %s, which is not one of the test's deliveries", id)
	}
	mu.Unlock()
	t.Logf("all %d deliveries accepted %s after the receiver recovered (%d requests in all)",
		events, time.Since(recovered).Round(100*time.Millisecond), len(rcv.requests()))
	for id := range want {
		waitDelivery(t, id, 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
}

// breakerOf is an endpoint's health.breaker as the API answers it.
func breakerOf(t *testing.T, key, endpointID string) map[string]any {
	t.Helper()
	status, body := call(t, "GET", "/v1/endpoints/"+endpointID, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	health, _ := body["health"].(map[string]any)
	br, _ := health["breaker"].(map[string]any)
	require.NotNil(t, br, "the endpoint's health has a breaker: %v", body)
	return br
}

// requireBreakerLine checks the breaker's line of an endpoint's row: it
// says the circuit is open (deliveries wait) or half open (probing), and it
// is text only.
func requireBreakerLine(t *testing.T, b *browser, sel string) {
	t.Helper()
	text := b.text(sel)
	require.Contains(t, text, "circuit", "the breaker line: %q", text)
	require.True(t, strings.Contains(text, "deliveries wait") || strings.Contains(text, "probing"),
		"the breaker line says the deliveries wait or a probe is out: %q", text)
	require.Contains(t, text, "failed probes", "the breaker line: %q", text)
	require.Equal(t, 0, evalIn[int](b, fmt.Sprintf(`document.querySelector(%q).children.length`, sel)),
		"the breaker line is text, with no element in it")
	require.Contains(t, b.attr(sel, "class"), "bad", "the breaker line is marked bad")
}

// refreshEndpoints clicks the endpoints view's Refresh and waits until the
// row of the endpoint is rebuilt and its health filled in.
func refreshEndpoints(b *browser, epRow string) {
	b.t.Helper()
	b.wait(epRow)
	evalIn[bool](b, fmt.Sprintf(`(() => { document.querySelector(%q).dataset.stale = "1"; return true; })()`, epRow))
	b.click(dt("endpoints-refresh"))
	b.waitJS("the endpoint's row refreshed", stepTimeout, `(sel) => {
		const e = document.querySelector(sel);
		if (!e || e.dataset.stale) return false;
		const h = e.querySelector('[data-test="endpoint-health"]');
		return !!h && h.textContent.includes("consecutive failures");
	}`, epRow)
}
