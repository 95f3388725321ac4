//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tenant names an address for notices in the console: it shows pending,
// waiting for its confirmation link; the local cloud's SES has the link,
// which confirms it, and the console's Refresh shows it verified. An
// address the API refuses (a hostile one, a second of the same) shows the
// API's message as text; Remove deletes one. Nothing planted runs, and the
// panel fits a phone.
func TestConsoleNotices(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "consolenotices")
	endpointWith(t, key, "http://127.0.0.1:9/notices", map[string]any{"failure_rate_alert": map[string]any{"threshold_percent": 20}})
	base := strings.ToLower(strings.ReplaceAll(tenant, "_", "-"))
	first, second := base+"@receiver.example", base+"-oncall@receiver.example"

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)
	b.wait(dt("notices"))
	b.wait(dt("notices-add"))
	require.Zero(t, b.count(dt("notice-row")))

	// A hostile address: refused with the API's message, or shown as text.
	const hostile = `"<img src=x onerror=alert(1)>"@x.example`
	b.typ(dt("notices-address"), hostile)
	b.click(dt("notices-add"))
	b.waitJS("the API's answer to a hostile address", stepTimeout, `() => {
		const err = document.querySelector('[data-test="error"]');
		return (!!err && !err.hidden && err.textContent.includes('address')) || !!document.querySelector('[data-test="notice-row"]');
	}`)
	if b.count(dt("notice-row")) > 0 {
		require.Equal(t, hostile, b.text(dt("notice-address")), "the address shown as text")
		b.click(dt("notice-remove"))
		b.waitJS("the hostile address removed", stepTimeout, `() => !document.querySelector('[data-test="notice-row"]')`)
	} else {
		require.Contains(t, b.text(dt("error")), "is not an e-mail address")
	}
	b.assertSafe("a hostile address")

	// Named: pending until its link is followed.
	b.typ(dt("notices-address"), first)
	b.click(dt("notices-add"))
	b.waitText(dt("notice-row"), first)
	b.waitText(dt("notice-status"), "waiting for its confirmation link")
	require.Equal(t, "pending", b.attr(dt("notice-row"), "data-status"))
	require.Empty(t, evalIn[string](b, `document.querySelector('[data-test="notices-address"]').value`), "the box empties once the address is named")
	require.True(t, evalIn[bool](b, `document.querySelector('[data-test="error"]').hidden`), "the earlier refusal is gone")

	// The same address again: the API's 409, as an error (the stack sends e-mail).
	b.typ(dt("notices-address"), first)
	b.click(dt("notices-add"))
	b.waitText(dt("error"), "is already named")
	require.True(t, evalIn[bool](b, `document.querySelector('[data-test="notices-off"]').hidden`))
	require.Equal(t, 1, b.count(dt("notice-row")))

	// The confirmation link from the local cloud's SES, then Refresh.
	verify := mailTo(t, first, "Confirm notices", 30*time.Second)
	code, page := emailPage(t, "GET", linkIn(t, verify.BodyText, "verify"))
	require.Equal(t, http.StatusOK, code, page)
	require.Contains(t, page, "Confirmed")
	b.click(dt("endpoints-refresh"))
	b.waitAttr(dt("notice-row"), "data-status", "verified", stepTimeout)
	require.Contains(t, b.text(dt("notice-status")), "verified")

	b.typ(dt("notices-address"), second)
	b.click(dt("notices-add"))
	b.waitJS("two addresses", stepTimeout, `() => document.querySelectorAll('[data-test="notice-row"]').length === 2`)
	b.waitJS("the endpoint's health", stepTimeout, `() => {
		const e = document.querySelector('[data-test="endpoint-health"]');
		return !!e && !e.textContent.includes('loading');
	}`)
	b.waitText(dt("endpoint-alert-text"), "alert at 20% over 1 h (min 20 attempts)")
	b.screenshot("notices")

	// Removed from the console, gone from the API.
	status, body := call(t, "GET", "/v1/notification-emails", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	var firstID string
	for _, n := range body["data"].([]any) {
		if m := n.(map[string]any); m["address"] == first {
			firstID = m["id"].(string)
		}
	}
	require.NotEmpty(t, firstID, "%v", body)
	b.click(row("notice-row", firstID) + " " + dt("notice-remove"))
	b.waitJS("the address removed", stepTimeout, `() => document.querySelectorAll('[data-test="notice-row"]').length === 1`)
	require.Contains(t, b.text(dt("notice-row")), second)
	status, body = call(t, "GET", "/v1/notification-emails", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	data := body["data"].([]any)
	require.Len(t, data, 1)
	require.Equal(t, second, data[0].(map[string]any)["address"])
	b.assertSafe("notices")

	// At phone width the panel fits, its address wrapping.
	p := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, p, key)
	p.wait(dt("notice-row"))
	p.noHorizontalOverflow("notices at phone width")
	p.screenshot("phone-notices")
	p.assertSafe("notices at phone width")
}
