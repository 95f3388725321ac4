//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// messageLog is a tenant with known events and outcomes: 24 events a second
// apart, the ones at paidAt "order.paid" (to ok, and to bad, which answers
// 401: dead at once), the others "order.created" (to ok alone, 200).
type messageLog struct {
	tenantID, key string
	ok, bad       string   // endpoint ids
	events        []string // event ids, oldest first
	base          time.Time
	pageSize      string // of listed
}

// messageEvents is how many events messageLog writes; paidAt which are paid.
const messageEvents = 24

var paidAt = map[int]bool{5: true, 15: true}

func newMessageLog(t *testing.T) messageLog {
	t.Helper()
	m := messageLog{pageSize: "10"}
	m.tenantID, m.key = apiTenant(t, "consolemsg")
	m.ok, _ = apiEndpoint(t, m.key, newReceiver(t, status(http.StatusOK)).URL)
	m.bad, _ = apiEndpoint(t, m.key, newReceiver(t, status(http.StatusUnauthorized)).URL, "order.paid")
	m.base = time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Second) // within the local cloud's 1 h age cap
	var waits []string
	for i := range messageEvents {
		typ := "order.created"
		if paidAt[i] {
			typ = "order.paid"
		}
		id := fmt.Sprintf("evt_msg_%02d_%s", i, m.tenantID)
		m.events = append(m.events, id)
		write(t, outbox.Event{ID: id, TenantID: m.tenantID, Type: typ, Payload: []byte(fmt.Sprintf(`{"i": %d}`, i)), OccurredAt: m.base.Add(time.Duration(i) * time.Second)})
		if paidAt[i] {
			waits = append(waits, deliveryID(t, id, m.bad))
		}
		waits = append(waits, deliveryID(t, id, m.ok))
	}
	for _, id := range waits {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State != domain.StatePending && d.State != "" })
	}
	// The delivery log's index is eventually consistent; the deaths'
	// delivery.dead events have deliveries of their own.
	require.Eventually(t, func() bool {
		listed := map[string]bool{}
		for _, id := range m.listed(t, "") {
			listed[id] = true
		}
		for _, id := range waits {
			if !listed[id] {
				return false
			}
		}
		return true
	}, 30*time.Second, 250*time.Millisecond)
	return m
}

// listed is every delivery GET /v1/deliveries lists under query, page by page.
func (m messageLog) listed(t *testing.T, query string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for pages := 0; pages < 100; pages++ {
		path := "/v1/deliveries?limit=" + m.pageSize + "&" + query
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		code, body := call(t, "GET", path, m.key, nil)
		require.Equal(t, http.StatusOK, code, "%v", body)
		for _, d := range body["data"].([]any) {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			return ids
		}
		cursor = next
	}
	t.Fatalf("the listing of %q does not end", query)
	return nil
}

// newest are the event ids at indexes is, as the listing orders them.
func (m messageLog) newest(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, m.events[i])
	}
	return out
}

// rows waits until the Messages list shows exactly the rows want: events
// (their data-id) in that order, or deliveries (data-delivery, with
// byDelivery) in any order, as they are listed by when their first attempt
// was made, which the deliver function's batches decide.
func rows(b *browser, want []string, byDelivery bool) {
	b.t.Helper()
	attr := "data-id"
	if byDelivery {
		attr = "data-delivery"
	}
	b.waitJS(fmt.Sprintf("the messages %v", want), stepTimeout, `(attr, want, anyOrder) => {
		const got = [...document.querySelectorAll('[data-test="message-row"]')].map((r) => r.getAttribute(attr));
		if (anyOrder) { got.sort(); want = [...want].sort(); }
		return got.length === want.length && got.every((v, i) => v === want[i]);
	}`, attr, want, byDelivery)
}

// deliveryRows are the delivery ids of the Messages rows.
func deliveryRows(b *browser) []string {
	b.t.Helper()
	return evalIn[[]string](b, `[...document.querySelectorAll('[data-test="message-row"]')].map((r) => r.dataset.delivery)`)
}

// ownRows are the event ids of the Messages rows but hookline's own
// operational events' (hl_...).
func ownRows(b *browser) []string {
	b.t.Helper()
	var out []string
	for _, id := range evalIn[[]string](b, `[...document.querySelectorAll('[data-test="message-row"]')].map((r) => r.dataset.id)`) {
		if !strings.HasPrefix(id, "hl_") {
			out = append(out, id)
		}
	}
	return out
}

// filterMessages sets the Messages filters (the fields not given emptied)
// and applies them.
func filterMessages(b *browser, f map[string]string) {
	b.t.Helper()
	for _, name := range []string{"messages-type", "messages-endpoint", "messages-status", "messages-since", "messages-until"} {
		evalIn[bool](b, fmt.Sprintf(`(() => { document.querySelector('[data-test=%q]').value = ''; return true; })()`, name))
		if v := f[name]; v != "" {
			b.typ(dt(name), v)
		}
	}
	evalIn[bool](b, fmt.Sprintf(`(() => { document.querySelector('[data-test="messages-state"]').value = %q; return true; })()`, f["messages-state"]))
	// The rows shown are marked, so that the wait is for the new ones (or
	// none), and the button is enabled again (the load is done).
	b.waitJS("the filters can be applied", stepTimeout, `() => {
		const apply = document.querySelector('[data-test="messages-apply"]');
		if (apply.disabled) return false;
		for (const r of document.querySelectorAll('[data-test="message-row"]')) r.dataset.stale = '1';
		apply.click();
		return true;
	}`)
	b.waitJS("the filtered list, or the API's refusal", stepTimeout, `() => !document.querySelector('[data-test="messages-apply"]').disabled
		&& (!document.querySelector('[data-test="message-row"][data-stale]') || !document.querySelector('[data-test="error"]').hidden)`)
}

// The Messages page lists the tenant's events newest first with their
// deliveries' states, pages through them, takes each filter (type, endpoint,
// state, status, status class, time), and opens an event with its payload
// and deliveries, and from it a delivery.
func TestConsoleMessages(t *testing.T) {
	t.Parallel()
	m := newMessageLog(t)
	deadIDs := []string{deliveryID(t, m.events[15], m.bad), deliveryID(t, m.events[5], m.bad)}
	require.ElementsMatch(t, deadIDs, m.listed(t, "endpoint_id="+m.bad+"&status=401&since="+m.base.Format(time.RFC3339)),
		"the API: every delivery to this endpoint that got a 401 since then")

	var all []int
	for i := messageEvents - 1; i >= 0; i-- {
		all = append(all, i)
	}
	var created []string
	for _, i := range all {
		if !paidAt[i] {
			created = append(created, deliveryID(t, m.events[i], m.ok))
		}
	}
	for _, size := range []string{"1", "7", "20", "100"} {
		m.pageSize = size
		require.ElementsMatch(t, created, m.listed(t, "state=delivered&event_type=order.created"), "%s a page", size)
	}

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, m.key)
	b.click(dt("nav-messages"))
	all = nil
	for i := messageEvents - 1; i >= 0; i-- {
		all = append(all, i)
	}
	// The deaths' delivery.dead events (hookline's own, "now") are newer
	// than the test's (10 minutes ago): the test's follow them, in order,
	// over two pages.
	paid := row("message-row", m.events[15])
	b.wait(paid)
	first := ownRows(b)
	require.Equal(t, 20, b.count(dt("message-row")), "a page is 20")
	require.Equal(t, m.newest(all[:len(first)]...), first)
	require.Contains(t, b.text(paid), m.bad+": dead 401")
	require.Contains(t, b.text(paid), m.ok+": delivered 200")
	b.screenshot("messages")

	b.click(dt("messages-next-page"))
	rows(b, m.newest(all[len(first):]...), false)
	b.click(dt("messages-prev-page"))
	b.wait(paid)
	again := ownRows(b) // more delivery.dead events may have come meanwhile
	require.Equal(t, m.newest(all[:len(again)]...), again)

	// Each filter: the events' own (type, time), then the deliveries'.
	filterMessages(b, map[string]string{"messages-type": "order.paid"})
	rows(b, m.newest(15, 5), false)
	filterMessages(b, map[string]string{"messages-since": m.base.Add(20 * time.Second).Format(time.RFC3339),
		"messages-until": m.base.Add(time.Minute).Format(time.RFC3339)}) // the delivery.dead events are newer
	rows(b, m.newest(23, 22, 21, 20), false)
	filterMessages(b, map[string]string{"messages-until": m.base.Add(time.Second).Format(time.RFC3339)})
	rows(b, m.newest(1, 0), false)
	filterMessages(b, map[string]string{"messages-endpoint": m.bad})
	rows(b, deadIDs, true)
	require.Equal(t, "dead", b.attr(row("message-row", m.events[15])+" "+dt("message-state"), "data-state"))
	filterMessages(b, map[string]string{"messages-status": "401"})
	rows(b, deadIDs, true)
	filterMessages(b, map[string]string{"messages-state": "dead"})
	rows(b, deadIDs, true)
	filterMessages(b, map[string]string{"messages-status": "4xx", "messages-type": "order.paid"})
	rows(b, deadIDs, true)
	filterMessages(b, map[string]string{"messages-endpoint": m.ok, "messages-status": "2xx", "messages-type": "order.paid"})
	rows(b, []string{deliveryID(t, m.events[15], m.ok), deliveryID(t, m.events[5], m.ok)}, true)
	filterMessages(b, map[string]string{"messages-state": "delivered", "messages-type": "order.created"})
	b.waitJS("a page of 20", stepTimeout, `() => document.querySelectorAll('[data-test="message-row"][data-delivery]').length === 20`)
	pages := deliveryRows(b)
	b.click(dt("messages-next-page"))
	b.waitJS("the last 2", stepTimeout, `() => document.querySelectorAll('[data-test="message-row"][data-delivery]').length === 2`)
	require.ElementsMatch(t, created, append(pages, deliveryRows(b)...), "each once, over two pages")
	filterMessages(b, map[string]string{"messages-status": "teapot"})
	b.waitText(dt("error"), "status_class")

	// An event: its payload and deliveries; one of them opens.
	filterMessages(b, map[string]string{"messages-type": "order.paid"})
	rows(b, m.newest(15, 5), false)
	b.click(paid + " " + dt("message-open"))
	b.waitText(dt("message-payload"), `"i": 15`)
	require.Contains(t, b.text(dt("message-type")), "order.paid")
	require.Equal(t, 2, b.count(dt("message-delivery")))
	b.screenshot("message")
	b.click(row("message-delivery", deadIDs[0]) + " " + dt("message-delivery-open"))
	b.waitText(dt("delivery-state"), string(domain.StateDead))
	require.Contains(t, b.text(dt("attempts")), "401")
	b.assertSafe("messages")
}

// At 390 px the Messages page, under either listing, and an event fit the
// window.
func TestConsoleMessagesAtPhoneWidth(t *testing.T) {
	t.Parallel()
	m := newMessageLog(t)
	b := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, b, m.key)
	b.click(dt("nav-messages"))
	b.wait(row("message-row", m.events[messageEvents-1]))
	b.noHorizontalOverflow("messages")
	b.screenshot("phone-messages")
	filterMessages(b, map[string]string{"messages-endpoint": m.bad})
	rows(b, []string{deliveryID(t, m.events[15], m.bad), deliveryID(t, m.events[5], m.bad)}, true)
	b.noHorizontalOverflow("messages by endpoint")
	b.click(row("message-row", m.events[15]) + " " + dt("message-open"))
	b.waitText(dt("message-payload"), `"i": 15`)
	b.noHorizontalOverflow("an event")
	b.screenshot("phone-message")
	b.assertSafe("phone messages")
}

// clickText clicks the first visible element of a data-test kind whose text
// is text (hostile ids cannot go into a selector).
func clickText(b *browser, kind, text string) {
	b.t.Helper()
	b.waitJS("a "+kind+" reading "+text, stepTimeout, `(kind, text) => {
		for (const e of document.querySelectorAll('[data-test="' + kind + '"]')) {
			if (e.getClientRects().length === 0 || e.textContent !== text) continue;
			e.click();
			return true;
		}
		return false;
	}`, kind, text)
}

// messagesHostile checks the Messages page of the hostile test's tenant:
// the events, the deliveries to its endpoint and an opened event show the
// hostile ids, types and payload as text, and nothing runs.
func messagesHostile(t *testing.T, b *browser, epID string, events []outbox.Event, shows func(string, ...string)) {
	t.Helper()
	// Beside them, the delivery.dead events their deaths made (hl_...).
	b.click(dt("nav-messages"))
	b.waitJS("both events listed", stepTimeout, `() => [...document.querySelectorAll('[data-test="message-row"]')]
		.filter((r) => !r.dataset.id.startsWith('hl_')).length === 2`)
	shows("messages", events[0].ID, events[1].ID, events[0].Type, events[1].Type)
	filterMessages(b, map[string]string{"messages-endpoint": epID, "messages-state": "dead", "messages-status": "400"})
	b.waitJS("the deliveries listed", stepTimeout, `() => { const rs = [...document.querySelectorAll('[data-test="message-row"]')];
		return rs.length >= 2 && rs.every((r) => r.dataset.delivery); }`)
	shows("messages by endpoint", events[0].ID, events[1].ID, events[0].Type, events[1].Type)
	for _, e := range events {
		b.click(dt("nav-messages"))
		clickText(b, "message-open", e.ID)
		b.waitText(dt("message-payload"), "__pwned")
		shows("message "+e.ID, e.ID, e.Type)
		require.True(t, strings.Contains(b.text(dt("message-payload")), hostile[0]), "the payload as text")
	}
}
