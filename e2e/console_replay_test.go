//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// replayTenant is a tenant with two endpoints, their descriptions
// hostile: one whose receiver got 3 deliveries, one whose receiver is down
// with 2 deliveries pending (retries 30 s apart). It returns the tenant's
// id, the endpoints' ids, the time before the events and the pending
// deliveries' ids.
func replayTenant(t *testing.T) (tenantID, upEP, downEP string, since time.Time, pending []string) {
	t.Helper()
	all := strings.Join(hostile, " ")
	tenantID, key := apiTenant(t, "consolereplay")
	ok := newReceiver(t, status(http.StatusOK))
	down := newReceiver(t, status(http.StatusServiceUnavailable))
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": ok.URL, "description": all, "event_types": []string{"order.*"}})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	upEP = body["id"].(string)
	status, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": down.URL, "description": "retiring " + all,
		"event_types": []string{"invoice.*"}, "retry_schedule": []int{30, 30, 30}})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	downEP = body["id"].(string)
	since = time.Now().UTC().Add(-time.Second)
	var delivered []string
	for i := range 3 {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_order_%d_%s", i, tenantID), "order.created", fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		delivered = append(delivered, domain.DeliveryID(ev.TenantID, ev.ID, upEP, ev.OccurredAt))
	}
	for i := range 2 {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_invoice_%d_%s", i, tenantID), "invoice.sent", fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		pending = append(pending, domain.DeliveryID(ev.TenantID, ev.ID, downEP, ev.OccurredAt))
	}
	for _, id := range delivered {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
	for _, id := range pending {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StatePending && d.Attempts >= 1 })
	}
	return tenantID, upEP, downEP, since, pending
}

// The Replay view at desktop and phone widths: a replay since a time,
// confirmed, shows the job's progress until it completes with what it
// replayed; a cancel of the down endpoint's pending deliveries, confirmed,
// shows how many it cancelled and names them, and the Messages page's
// cancelled filter lists them, cancelled, and nothing else. Hostile endpoint
// descriptions and a hostile event type typed into the form are shown as
// text, nothing runs, and the phone's page is no wider than the phone.
func TestConsoleReplaySinceAndCancelPending(t *testing.T) {
	t.Parallel()
	tenantID, upEP, downEP, since, pending := replayTenant(t)
	for _, c := range []struct {
		name          string
		width, height int
		shots         string
	}{{"desktop", desktopWidth, desktopHeight, ""}, {"phone", phoneWidth, phoneHeight, "-phone"}} {
		t.Run(c.name, func(t *testing.T) {
			b := newBrowser(t, c.width, c.height)
			signInByPortal(t, b, tenantID, domain.ScopeEndpointsWrite, domain.ScopeDeliveriesReplay)
			b.click(dt("nav-replay"))
			b.wait(dt("since-form"))
			b.waitJS("the endpoints offered", stepTimeout, `(id) => !!document.querySelector('[data-test="cancel-endpoint"] option[value="' + id + '"]')`, downEP)
			require.Contains(t, b.bodyText(), hostile[0], "an endpoint's description, as text")
			b.assertSafe("the Replay view")

			// A hostile event type: refused by nothing, echoed as text, and
			// the job it would start is not started.
			b.typ(dt("since-since"), since.Format(time.RFC3339))
			b.typ(dt("since-type"), hostile[1])
			b.click(dt("since-ask"))
			b.waitText(dt("jobs-confirm-what"), hostile[1])
			b.assertSafe("the confirmation of a hostile type")
			b.click(dt("jobs-confirm-no"))

			// Replay since: the delivered endpoint's deliveries again.
			b.typ(dt("since-type"), "order.created")
			b.must("choose the endpoint", chromedp.SetValue(chromedp.CSS(dt("since-endpoint")), upEP))
			b.click(dt("since-ask"))
			b.waitText(dt("jobs-confirm-what"), upEP)
			b.screenshot("replay-since-confirm" + c.shots)
			b.click(dt("jobs-confirm-go"))
			b.waitAttr(dt("jobs-job"), "data-status", string(domain.StatusCompleted), 90*time.Second)
			replayed := b.text(dt("jobs-replayed"))
			require.Equal(t, "3", replayed, "the 3 deliveries replayed")
			require.Equal(t, "0", b.text(dt("jobs-not-rebuilt")))
			b.screenshot("replay-since" + c.shots)
			b.noHorizontalOverflow("a replay since a time")

			// Cancel pending: confirmed, then counted and named.
			b.must("choose the endpoint", chromedp.SetValue(chromedp.CSS(dt("cancel-endpoint")), downEP))
			b.click(dt("cancel-ask"))
			b.waitText(dt("jobs-confirm-what"), downEP)
			b.click(dt("jobs-confirm-go"))
			b.waitAttr(dt("jobs-job"), "data-kind", "cancel", stepTimeout)
			b.waitAttr(dt("jobs-job"), "data-status", string(domain.StatusCompleted), 90*time.Second)
			if c.name == "desktop" {
				require.Equal(t, "2", b.text(dt("jobs-cancelled")), "both pending deliveries cancelled")
			} else {
				// The desktop run cancelled them: found cancelled already.
				require.Contains(t, b.text(dt("jobs-job")), "not_pending 2")
			}
			b.screenshot("cancel-pending" + c.shots)
			b.noHorizontalOverflow("a cancel")
			b.assertSafe("the Replay view's jobs")

			// The Messages page's cancelled filter: the two, cancelled.
			b.click(dt("nav-messages"))
			b.wait(dt("message-row"))
			filterMessages(b, map[string]string{"messages-state": "cancelled"})
			rows(b, pending, true)
			for _, id := range pending {
				require.Equal(t, "cancelled", b.attr(`[data-test="message-row"][data-delivery="`+id+`"] `+dt("message-state"), "data-state"), id)
			}
			filterMessages(b, map[string]string{"messages-state": "cancelled", "messages-endpoint": upEP})
			require.Zero(t, b.count(dt("message-row")), "none cancelled of the endpoint that answered")
			b.noHorizontalOverflow("the cancelled deliveries")
			b.assertSafe("the Messages page's cancelled deliveries")
		})
	}
}
