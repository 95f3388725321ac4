//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The console's tables keep words whole: at desktop and phone widths no
// endpoint status, dead letter's reason or event type breaks inside a word
// ("enable d"), however wide the row's other cells are. The endpoint's long
// description, URL and list of long event types are what once squeezed the
// status column below the width of "enabled" at 1280 px.
func TestConsoleTablesKeepWordsWhole(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consolewords")
	rcv, _ := failingUntilUp(t, http.StatusBadRequest)
	dying := "customer.subscription.pending_update_expired"
	types := []string{
		dying, "order.created", "invoice.payment_action_required",
		"billing.portal_configuration.customer_tax_identifier_verification_updated",
		"checkout.session.async_payment_succeeded", "payment_intent.partially_funded",
	}
	description := strings.TrimSpace(strings.Repeat("a receiver of every billing and checkout event the shop sends ", 8))
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{
		"url":         rcv.URL + "/hooks/" + strings.Repeat("segment/", 12),
		"description": description, "event_types": types,
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	epID := body["id"].(string)
	// A second endpoint, disabled, for the longer status.
	offID, _ := apiEndpoint(t, key, rcv.URL, "order.created")
	status, body = call(t, "POST", "/v1/endpoints/"+offID+"/disable", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	dead := deadEvents(t, tenantID, epID, 1, dying)[0]

	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", desktopWidth, desktopHeight}, {"phone", phoneWidth, phoneHeight}} {
		// Not parallel: one browser at a time is enough, and the two
		// widths share the tenant's data.
		t.Run(size.name, func(t *testing.T) {
			b := newBrowser(t, size.width, size.height)
			signInByPortal(t, b, tenantID)
			b.wait(row("endpoint-row", epID) + " " + dt("endpoint-status"))
			b.waitText(row("endpoint-row", offID)+" "+dt("endpoint-status"), "disabled")
			b.waitText(row("endpoint-row", epID)+" "+dt("endpoint-types"), types[3])
			requireWordsWhole(t, b, "endpoints", dt("endpoint-status"), dt("endpoint-types"))
			if size.width == phoneWidth {
				b.noHorizontalOverflow("endpoints")
			}

			b.click(dt("nav-dlq"))
			b.wait(row("dlq-row", dead))
			b.waitText(row("dlq-row", dead)+" "+dt("dlq-type"), dying)
			requireWordsWhole(t, b, "dead letters", dt("dlq-type"), dt("dlq-reason"))
			if size.width == phoneWidth {
				b.noHorizontalOverflow("dead letters")
			}
		})
	}
}

// requireWordsWhole fails if a word of a visible element the selectors
// match is laid out on more than one line, and if a selector matches no
// visible element (a check of nothing).
func requireWordsWhole(t *testing.T, b *browser, view string, selectors ...string) {
	t.Helper()
	for _, sel := range selectors {
		n := evalIn[int](b, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter((e) => e.getClientRects().length > 0).length`, sel))
		require.Positive(t, n, "%s: no visible %s to check", view, sel)
		broken := evalIn[[]string](b, fmt.Sprintf(brokenWords, sel))
		require.Empty(t, broken, "%s at %d px: words broken across lines", view, evalIn[int](b, `window.innerWidth`))
	}
}

// brokenWords lists the words (runs of non-space characters within a text
// node) of the visible elements a selector (%q) matches whose rendered
// boxes sit on more than one line: a Range over a word gives one client
// rectangle per line fragment, so two distinct tops mean the word wraps
// inside itself.
const brokenWords = `(() => {
  const out = [];
  for (const e of document.querySelectorAll(%q)) {
    if (e.getClientRects().length === 0) continue;
    const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/\S+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set();
        for (const rect of r.getClientRects()) {
          if (rect.width > 0) tops.add(Math.round(rect.top));
        }
        if (tops.size > 1) out.push(JSON.stringify(m[0]) + ' in ' + (e.dataset.test || e.tagName) + ' on ' + tops.size + ' lines');
      }
    }
  }
  return out;
})()`
