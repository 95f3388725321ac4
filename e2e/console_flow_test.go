//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

// A tenant signed in by portal link sees its dead delivery, opens its
// attempt log, replays it once the receiver is fixed, watches the job
// complete, and finds the delivery delivered.
func TestConsoleReplayDeadDelivery(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consoleflow")
	rcv, up := failingUntilUp(t, http.StatusBadRequest)
	epID, _ := apiEndpoint(t, key, rcv.URL)
	id := deadEvents(t, tenantID, epID, 1, "order.created")[0]
	status, d := call(t, "GET", "/v1/deliveries/"+id, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", d)
	eventID := d["event_id"].(string)

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInByPortal(t, b, tenantID)

	// The dead letters: the row with its type, endpoint and last status.
	b.click(dt("nav-dlq"))
	dead := row("dlq-row", id)
	b.wait(dead)
	for _, want := range []string{"order.created", epID, "400"} {
		require.Contains(t, b.text(dead), want)
	}
	b.screenshot("dead-letters")

	// The delivery: dead, one attempt per try, each answered 400, and the payload.
	b.click(dead + " " + dt("dlq-open"))
	b.wait(dt("delivery"))
	b.waitText(dt("delivery-state"), string(domain.StateDead))
	b.wait(dt("attempt-row"))
	attempts := b.count(dt("attempt-row"))
	require.GreaterOrEqual(t, attempts, 1)
	require.Contains(t, b.text(dt("attempts")), "400")
	b.waitText(dt("payload"), `"i": 0`)
	headers := b.text(dt("headers"))
	require.Contains(t, headers, id, "the webhook-id sent is the delivery id")
	require.Contains(t, headers, "elided", "signatures are elided")
	b.screenshot("delivery")

	// Replay it once the receiver answers 200: the count before confirming,
	// then the job's progress until it completes.
	up.Store(true)
	b.click(dt("nav-dlq"))
	b.click(dead + " " + dt("dlq-select"))
	b.click(dt("replay-selected"))
	b.wait(dt("replay-confirm"))
	b.waitText(dt("replay-count"), "1")
	b.click(dt("replay-confirm"))
	b.wait(dt("job"))
	b.waitAttr(dt("job"), "data-status", string(domain.StatusCompleted), 60*time.Second)
	require.Contains(t, b.text(dt("job")), "replayed 1")
	// The list reloads when the job is done: the row is gone, or marked replayed.
	b.waitJS("the dead letters reloaded", stepTimeout,
		`(sel) => { const e = document.querySelector(sel); return !e || e.textContent.includes("replayed"); }`, dead)
	b.screenshot("replay-completed")

	// Delivered: the lookup by event id finds it, and its detail shows the
	// new attempt.
	rcv.waitFor(t, attempts+1, 60*time.Second)
	waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	b.click(dt("nav-lookup"))
	b.typ(dt("lookup-event"), eventID)
	b.click(dt("lookup-go"))
	found := row("lookup-row", id)
	b.wait(found)
	require.Contains(t, b.text(found), string(domain.StateDelivered))
	b.click(found + " " + dt("lookup-open"))
	b.waitText(dt("delivery-state"), string(domain.StateDelivered))
	b.waitJS("the replayed attempt", stepTimeout, `(n) => document.querySelectorAll('[data-test="attempt-row"]').length > n`, attempts)
	require.Contains(t, b.text(dt("attempts")), "200")
	b.assertSafe("replay flow")
}

// A tenant signed in with an API key creates an endpoint in the console, gets its signing secret once,
// and that secret verifies the test event the console sends; rotating shows
// a new secret, which verifies the next one.
func TestConsoleCreateEndpointAndRotateSecret(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "consoleep")
	rcv := newReceiver(t, status(http.StatusOK))
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)

	b.click(dt("endpoint-create"))
	// The API's refusal is shown with its problem detail.
	b.typ(dt("endpoint-url"), "ftp://example.com/hook")
	b.click(dt("endpoint-save"))
	b.wait(dt("error"))
	b.waitText(dt("error"), "url")
	require.Zero(t, b.count(dt("endpoint-row")))

	// A filter the API refuses: the error names the path in it.
	b.typ(dt("endpoint-url"), rcv.URL+"/hook")
	b.typ(dt("endpoint-filter"), `{"country": "DE"}`)
	b.click(dt("endpoint-save"))
	b.waitText(dt("error"), "filter.country")
	require.Zero(t, b.count(dt("endpoint-row")))

	b.typ(dt("endpoint-filter"), `{"country": ["DE"]}`)
	b.typ(dt("endpoint-event-types"), "order.created, payment.*")
	b.typ(dt("endpoint-description"), "made in the console")
	b.click(dt("endpoint-save"))
	b.wait(dt("secret"))
	b.wait(dt("secret-copy"))
	secret := strings.TrimSpace(b.text(dt("secret")))
	_, err := signing.ParseSecret(secret)
	require.NoError(t, err, "the secret shown is a signing secret: %q", secret)

	// The API has the endpoint as typed.
	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	data := list["data"].([]any)
	require.Len(t, data, 1)
	ep := data[0].(map[string]any)
	epID := ep["id"].(string)
	require.Equal(t, rcv.URL+"/hook", ep["url"])
	require.Equal(t, "made in the console", ep["description"])
	require.ElementsMatch(t, []any{"order.created", "payment.*"}, ep["event_types"])
	require.Equal(t, map[string]any{"country": []any{"DE"}}, ep["filter"])
	epRow := row("endpoint-row", epID)
	b.wait(epRow)
	require.Contains(t, b.text(epRow), rcv.URL+"/hook")
	b.waitJS("the endpoint's health", stepTimeout,
		`(sel) => { const e = document.querySelector(sel); return !!e && !e.textContent.includes("loading"); }`, epRow)
	b.screenshot("endpoints")

	// Shown once: dismissed, it is gone from the page.
	b.click(dt("secret-dismiss"))
	require.NotContains(t, b.pageText(), secret)

	// The test event is signed with the secret shown.
	verify := func(n int, secret string) {
		t.Helper()
		v, err := signing.NewVerifier(secret)
		require.NoError(t, err)
		r := rcv.waitFor(t, n, 60*time.Second)[n-1]
		require.NoError(t, v.VerifyRequest(r.Header, r.Body), "the secret the console showed verifies request %d", n)
	}
	b.click(epRow + " " + dt("endpoint-test"))
	b.wait(dt("test-delivery"))
	verify(1, secret)

	// Rotate: a new secret, shown once, which signs the next test event.
	b.click(epRow + " " + dt("endpoint-rotate"))
	b.waitJS("a new secret", stepTimeout,
		`(old) => { const e = document.querySelector('[data-test="secret"]'); return !!e && e.offsetParent !== null && e.textContent.trim() !== "" && e.textContent.trim() !== old; }`, secret)
	rotated := strings.TrimSpace(b.text(dt("secret")))
	require.NotEqual(t, secret, rotated)
	_, err = signing.ParseSecret(rotated)
	require.NoError(t, err)
	b.click(dt("secret-dismiss"))
	b.click(epRow + " " + dt("endpoint-test"))
	verify(2, rotated)
	b.assertSafe("endpoints")
}
