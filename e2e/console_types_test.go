//go:build e2e

package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The console's Event types view shows the local stack's catalog: each
// type's description, validation, deprecated badge, schema and example as
// text; Send a test event sends a type's example to the endpoint chosen,
// and its delivery arrives with that type. The view fits a phone.
func TestConsoleEventTypes(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "consoletypes")
	rcv := newReceiver(t, status(200))
	apiEndpoint(t, key, rcv.URL+"/types", "order.*")

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)
	b.click(dt("nav-types"))
	sel := `[data-test="type"][data-name="shipment.delivered"]`
	b.wait(sel)
	require.Equal(t, "reject", b.attr(sel, "data-validation"))
	require.Contains(t, b.text(sel+` [data-test="type-validation"]`), "rejected (schema_mismatch)")
	require.Contains(t, b.text(sel+` [data-test="type-example"]`), `"weight_grams": 1250`)
	require.Contains(t, b.text(sel+` [data-test="type-schema"]`), `"additionalProperties": false`)
	require.Equal(t, 1, b.count(`[data-test="type"][data-name="payment.refunded"] [data-test="type-deprecated"]`), "a deprecated type says so")
	require.Zero(t, b.count(sel+` [data-test="type-deprecated"]`))
	require.Zero(t, b.count(dt("types-none")))
	code, body := call(t, "GET", "/v1/event-types?limit=100", key, nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, len(body["data"].([]any)), b.count(`[data-test="type"]`), "every type of the catalog is shown")
	b.assertSafe("the event types")
	b.screenshot("event-types")

	b.click(sel + ` [data-test="type-send"]`)
	b.waitText(sel+` [data-test="type-sent"]`, "delivery")
	got := rcv.waitFor(t, 1, 60*time.Second)
	require.Equal(t, "shipment.delivered", got[0].Header.Get("X-Event-Type"), "the endpoint subscribes to order.* only: a test event goes to it whatever its types")
	require.Contains(t, string(got[0].Body), `"weight_grams":1250`)

	p := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, p, key)
	p.click(dt("nav-types"))
	p.wait(sel)
	p.noHorizontalOverflow("the event types at phone width")
}
