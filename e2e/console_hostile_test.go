//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// Hostile data in every field the console shows: the tenant's name, the
// endpoint's URL (its query: the API takes only http(s) URLs), description
// and header values, event ids and types, the payload, and the receiver's
// answer (the attempt's response excerpt). Every view shows the strings as
// text, and nothing runs.
func TestConsoleHostileDataRendersAsText(t *testing.T) {
	t.Parallel()
	all := strings.Join(hostile, " ")
	op, err := operatorKey()
	require.NoError(t, err)
	tenantID := fmt.Sprintf("consolehostile_%d", time.Now().UnixNano())
	status, body := call(t, "POST", "/v1/admin/tenants", op, map[string]any{"tenant_id": tenantID, "name": all})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = call(t, "POST", "/v1/admin/tenants/"+tenantID+"/keys", op, nil)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	key := body["key"].(string)

	rcv := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(all))
	})
	// A URL's query may hold a javascript: URL and an escaped tag (a raw
	// space would not reach the receiver).
	url := rcv.URL + "/hook?u=" + hostile[2] + "&h=" + neturl.PathEscape(hostile[0])
	status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{
		"url": url, "description": all, "headers": map[string]string{"X-Hostile": all},
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	epID := body["id"].(string)

	// Two dead events: hostile ids, types and payloads.
	events := []outbox.Event{
		{ID: hostile[0] + " " + tenantID, Type: hostile[1]},
		{ID: hostile[2] + "_" + tenantID, Type: hostile[0]},
	}
	payload, err := json.Marshal(map[string]string{"html": hostile[0], "script": hostile[1], "url": hostile[2]})
	require.NoError(t, err)
	var ids []string
	for _, e := range events {
		e.TenantID, e.Payload, e.OccurredAt = tenantID, payload, time.Now().UTC()
		write(t, e)
		ids = append(ids, domain.DeliveryID(e.TenantID, e.ID, epID, e.OccurredAt))
	}
	for _, id := range ids {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	}

	b := newBrowser(t, desktopWidth, desktopHeight)
	// A link that may write endpoints: header values are shown only to
	// such credentials (others see the names), and the hostile value must
	// be shown as text.
	signInByPortal(t, b, tenantID, domain.ScopeEndpointsWrite)
	shows := func(view string, want ...string) {
		t.Helper()
		b.assertSafe(view)
		text := b.bodyText()
		for _, w := range want {
			require.Contains(t, text, w, "%s shows %q as text", view, w)
		}
	}

	epRow := row("endpoint-row", epID)
	b.wait(epRow)
	b.waitJS("the endpoint's health", stepTimeout,
		`(sel) => { const e = document.querySelector(sel); return !!e && !e.textContent.includes("loading"); }`, epRow)
	shows("endpoints", url, all)

	b.click(dt("nav-dlq"))
	for _, id := range ids {
		b.wait(row("dlq-row", id))
	}
	shows("dead letters", ids[0], ids[1], hostile[1], hostile[0])
	b.screenshot("hostile-dead-letters")

	for i, id := range ids {
		b.click(dt("nav-dlq"))
		b.click(row("dlq-row", id) + " " + dt("dlq-open"))
		b.waitText("#delivery-id", id)
		b.waitText(dt("delivery-state"), string(domain.StateDead))
		b.wait(dt("attempt-row"))
		b.waitText(dt("payload"), "__pwned")
		b.waitText(dt("headers"), "X-Hostile")
		shows("delivery "+id, events[i].ID, events[i].Type, all)
		require.Contains(t, b.text(dt("attempts")), all, "the response excerpt")
		require.Contains(t, b.text(dt("headers")), all, "the endpoint's header value")
		var shown map[string]string
		require.NoError(t, json.Unmarshal([]byte(b.text(dt("payload"))), &shown), "the payload is shown as JSON text")
		require.Equal(t, map[string]string{"html": hostile[0], "script": hostile[1], "url": hostile[2]}, shown)
	}

	for i, e := range events {
		b.click(dt("nav-lookup"))
		b.typ(dt("lookup-event"), e.ID)
		b.click(dt("lookup-go"))
		b.wait(row("lookup-row", ids[i]))
		shows("lookup "+e.ID, ids[i])
	}

	// An API error's detail, as text: an event id no one wrote.
	b.typ(dt("lookup-event"), hostile[1])
	b.click(dt("lookup-go"))
	b.waitJS("the lookup's answer", stepTimeout, `() => {
		const r = document.querySelector('[data-test="lookup-results"]'), e = document.querySelector('[data-test="error"]');
		return (r && r.textContent.includes("__pwned")) || (e && e.offsetParent !== null && e.textContent.trim() !== "");
	}`)
	b.assertSafe("lookup of an unknown hostile id")

	// The Messages page: the events, the deliveries and an opened event.
	messagesHostile(t, b, epID, events, shows)
	b.screenshot("hostile-messages")

	// The operator's view of the tenant, whose name is hostile.
	waitTenantDepth(t, tenantID, len(ids))
	o := newBrowser(t, desktopWidth, desktopHeight)
	signInOperator(t, o)
	tenantRow := row("tenant-row", tenantID)
	for page := 0; o.count(tenantRow) == 0; page++ {
		require.Less(t, page, 50, "tenant %s is not listed", tenantID)
		before := evalIn[string](o, `document.querySelector('[data-test="tenants"] tbody').textContent`)
		o.click(dt("tenants-next-page"))
		o.waitJS("the next page of tenants", stepTimeout,
			`(before) => document.querySelector('[data-test="tenants"] tbody').textContent !== before`, before)
	}
	// The list names tenants by id (letters, digits, _ and -); a name, if it
	// is shown, is the hostile one, as text.
	if text := o.text(tenantRow); strings.Contains(text, "__pwned") {
		require.Contains(t, text, all)
	}
	o.assertSafe("operator")
}

// At 390 px wide the main views fit: the page body never scrolls sideways
// (wide tables scroll inside their own box).
func TestConsolePhoneWidthHasNoHorizontalOverflow(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consolephone")
	rcv := newReceiver(t, status(http.StatusBadRequest))
	epID, _ := apiEndpoint(t, key, rcv.URL+"/a/rather/long/path/for/a/webhook/receiver?with=a&query=string")
	id := deadEvents(t, tenantID, epID, 1, "order.created.with.a.long.type.name")[0]

	b := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, b, key)
	b.wait(row("endpoint-row", epID))
	b.noHorizontalOverflow("endpoints")
	b.screenshot("phone-endpoints")

	b.click(dt("nav-dlq"))
	b.wait(row("dlq-row", id))
	b.noHorizontalOverflow("dead letters")
	b.screenshot("phone-dead-letters")

	b.click(row("dlq-row", id) + " " + dt("dlq-open"))
	b.wait(dt("attempt-row"))
	b.waitText(dt("payload"), `"i": 0`)
	b.noHorizontalOverflow("delivery")

	b.click(dt("nav-lookup"))
	b.wait(dt("lookup-event"))
	b.noHorizontalOverflow("lookup")

	o := newBrowser(t, phoneWidth, phoneHeight)
	signInOperator(t, o)
	o.wait(dt("tenant-row"))
	o.noHorizontalOverflow("operator")
	b.assertSafe("phone")
}
