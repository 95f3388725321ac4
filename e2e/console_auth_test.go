//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// choose selects value in the select sel, as a user does (its change
// event fires).
func (b *browser) choose(sel, value string) {
	b.t.Helper()
	evalIn[bool](b, fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change')); return s.value === %q; })()`, sel, value, value))
}

// A tenant gives an endpoint Basic auth in the console: the receiver gets
// the credentials with the test event, the endpoint's row says how it
// authenticates (the user name, an attacker's string, rendered as text)
// and never shows the password, and choosing None removes it; the line
// under the endpoints says where requests come from.
func TestConsoleEndpointAuth(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "consoleauth")
	const user, password = `<img src=x onerror=alert(1)>`, "console-pa55word"
	var rcv *receiver
	rcv = newReceiver(t, func(n int, w http.ResponseWriter) {
		u, p, ok := basicOf(rcv.requests()[n-1].Header)
		if !ok || u != user || p != password {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)

	b.click(dt("endpoint-create"))
	b.typ(dt("endpoint-url"), rcv.URL+"/hook")
	b.choose(dt("endpoint-auth"), "basic")
	b.typ(dt("auth-username"), user)
	b.typ(dt("auth-password"), password)
	b.click(dt("endpoint-save"))
	b.wait(dt("secret"))
	b.click(dt("secret-dismiss"))

	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	ep := list["data"].([]any)[0].(map[string]any)
	epID := ep["id"].(string)
	require.Equal(t, map[string]any{"type": "basic", "username": user}, ep["auth"])
	epRow := row("endpoint-row", epID)
	b.waitText(epRow+" "+dt("endpoint-auth-text"), "Basic auth as "+user)
	require.NotContains(t, b.pageText(), password, "the password is not in the page")

	b.click(epRow + " " + dt("endpoint-test"))
	b.wait(dt("test-delivery"))
	r := rcv.waitFor(t, 1, 60*time.Second)[0]
	u, p, ok := basicOf(r.Header)
	require.True(t, ok)
	require.Equal(t, [2]string{user, password}, [2]string{u, p}, "the test event carries the credentials typed")
	// Under the endpoints, where requests come from: the local stack has no
	// static egress (GET /v1/egress-ips answers static false).
	b.waitText(dt("egress"), "Requests come from AWS's shared address ranges, which an IP allowlist cannot tell apart: verify the webhook-signature header.")
	b.screenshot("endpoint-auth")
	b.assertSafe("endpoint auth")

	// Editing keeps it unless another choice is made; None removes it.
	b.click(epRow + " " + dt("endpoint-edit"))
	require.Equal(t, "keep", evalIn[string](b, `document.querySelector('[data-test="endpoint-auth"]').value`))
	require.Equal(t, "", evalIn[string](b, `document.querySelector('[data-test="auth-password"]').value`), "the password is never filled in")
	b.choose(dt("endpoint-auth"), "")
	b.click(dt("endpoint-save"))
	b.waitJS("the auth line gone", stepTimeout, `(sel) => !document.querySelector(sel)`, epRow+" "+dt("endpoint-auth-text"))
	status, got := call(t, "GET", "/v1/endpoints/"+epID, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.Nil(t, got["auth"])
}
