//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tenant gives a new endpoint a failure-rate alert in the console's form
// (50% of at least 2 attempts, the window left at its default): the API
// stores it, the row says it, and once the endpoint's receiver answers 503
// to two events the row says since when it is degraded. An edit of another
// field leaves the alert and its episode; emptying the threshold removes
// the alert (null), and with it the degraded mark.
func TestConsoleFailureRateAlert(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "consolealert")
	down := newReceiver(t, status(http.StatusServiceUnavailable))
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)

	b.click(dt("endpoint-create"))
	b.typ(dt("endpoint-url"), down.URL+"/hook")
	// Out of bounds: the API's error names the field.
	b.typ(dt("alert-threshold"), "150")
	b.click(dt("endpoint-save"))
	b.waitText(dt("error"), "failure_rate_alert.threshold_percent")
	require.Zero(t, b.count(dt("endpoint-row")))

	b.typ(dt("alert-threshold"), "50")
	b.typ(dt("alert-min"), "2")
	b.click(dt("endpoint-save"))
	b.wait(dt("secret"))
	b.click(dt("secret-dismiss"))

	endpoint := func(id string) map[string]any {
		t.Helper()
		status, body := call(t, "GET", "/v1/endpoints/"+id, key, nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		return body
	}
	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	require.Len(t, list["data"], 1)
	epID := list["data"].([]any)[0].(map[string]any)["id"].(string)
	require.Equal(t, map[string]any{"threshold_percent": 50.0, "window_hours": 1.0, "min_attempts": 2.0},
		endpoint(epID)["failure_rate_alert"], "stored as typed, the window at its default")
	epRow := row("endpoint-row", epID)
	b.waitText(epRow+" "+dt("endpoint-alert-text"), "alert at 50% over 1 h (min 2 attempts)")

	// Two events answered 503: degraded, which the status says.
	for i := range 2 {
		publish(t, tenant, fmt.Sprintf("evt_console_alert_%d_%d", i, time.Now().UnixNano()))
	}
	degradedSince := func(ep map[string]any) any {
		health, _ := ep["health"].(map[string]any)
		return health["degraded_since"]
	}
	var ep map[string]any
	require.Eventually(t, func() bool {
		ep = endpoint(epID)
		return degradedSince(ep) != nil
	}, 90*time.Second, time.Second, "the endpoint was not marked degraded: %v", ep)
	b.click(dt("endpoints-refresh"))
	b.waitText(epRow+" "+dt("endpoint-degraded"), "degraded since")
	b.screenshot("endpoint-alert")

	// Another field edited: the alert is not sent, and the episode stays.
	b.click(epRow + " " + dt("endpoint-edit"))
	b.wait(dt("alert-threshold"))
	require.Equal(t, "50", evalIn[string](b, `document.querySelector('[data-test="alert-threshold"]').value`))
	require.Equal(t, "1", evalIn[string](b, `document.querySelector('[data-test="alert-window"]').value`))
	require.Equal(t, "2", evalIn[string](b, `document.querySelector('[data-test="alert-min"]').value`))
	b.screenshot("endpoint-alert-form")
	b.typ(dt("endpoint-description"), "watched")
	b.click(dt("endpoint-save"))
	b.waitText(epRow, "watched")
	ep = endpoint(epID)
	require.NotNil(t, ep["failure_rate_alert"], "%v", ep)
	require.NotNil(t, degradedSince(ep), "an edit that leaves the alert leaves its episode: %v", ep)

	// The threshold emptied: the alert removed, and its degraded mark.
	b.click(epRow + " " + dt("endpoint-edit"))
	b.wait(dt("alert-threshold"))
	b.typ(dt("alert-threshold"), "")
	b.click(dt("endpoint-save"))
	b.waitJS("the alert gone from the row", stepTimeout, `(sel) => {
		const r = document.querySelector(sel);
		return !!r && !r.querySelector('[data-test="endpoint-alert-text"]') && !r.textContent.includes('loading');
	}`, epRow)
	ep = endpoint(epID)
	require.Nil(t, ep["failure_rate_alert"], "%v", ep)
	require.Nil(t, degradedSince(ep), "%v", ep)
	require.Zero(t, b.count(epRow+" "+dt("endpoint-degraded")))
	b.assertSafe("failure-rate alert")
}
