//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	neturl "net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// chartCounts are the numbers a block of charts shows: the bars' counts
// summed over the periods, the bars drawn, and the largest gap between a
// bar's height and its attempts' share of the tallest (viewBox units).
type chartCounts struct {
	Bars      int     `json:"bars"`
	Attempts  int     `json:"attempts"`
	Delivered int     `json:"delivered"`
	HTTP5xx   int     `json:"http5xx"`
	HTTP4xx   int     `json:"http4xx"`
	Points    int     `json:"points"`
	HeightGap float64 `json:"heightGap"`
	Plot      float64 `json:"plot"`
	Summary   string  `json:"summary"`
	Titled    bool    `json:"titled"`
}

// readCharts reads the charts block sel shows.
func readCharts(b *browser, sel string) chartCounts {
	b.t.Helper()
	b.wait(sel)
	return evalIn[chartCounts](b, fmt.Sprintf(`(() => {
		const root = document.querySelector(%q);
		const out = {bars: 0, attempts: 0, delivered: 0, http5xx: 0, http4xx: 0, points: 0, heightGap: 0, summary: "", titled: true};
		const bars = [...root.querySelectorAll('[data-test="chart-bar"]')];
		const max = Math.max(1, ...bars.map((g) => +g.dataset.attempts));
		const chart = root.querySelector('[data-test="chart-attempts"]');
		const plot = chart ? +chart.dataset.plotHeight : 0;
		for (const g of bars) {
			out.bars++;
			out.attempts += +g.dataset.attempts;
			out.delivered += +g.dataset.delivered;
			out.http5xx += +g.dataset.http5xx;
			out.http4xx += +g.dataset.http4xx;
			let h = 0;
			for (const r of g.querySelectorAll('rect')) h += +r.getAttribute('height');
			out.heightGap = Math.max(out.heightGap, Math.abs(h - (+g.dataset.attempts / max) * plot));
		}
		out.plot = plot;
		out.points = root.querySelectorAll('[data-test="chart-point"]').length;
		out.summary = root.querySelector('[data-test="chart-summary"]').textContent;
		for (const svg of root.querySelectorAll('svg.chart')) {
			const ids = (svg.getAttribute('aria-labelledby') || '').split(' ');
			if (svg.getAttribute('role') !== 'img' || ids.length !== 2 || ids.some((id) => !document.getElementById(id) || !document.getElementById(id).textContent)) out.titled = false;
		}
		return out;
	})()`, sel))
}

// requireCharts holds the charts block sel to the attempts of want, over
// bars periods.
func requireCharts(t *testing.T, b *browser, sel string, bars int, want chartCounts) {
	t.Helper()
	got := readCharts(b, sel)
	require.Equal(t, bars, got.Bars, "%s: one bar a period", sel)
	require.Equal(t, want.Attempts, got.Attempts, "%s: attempts", sel)
	require.Equal(t, want.Delivered, got.Delivered, "%s: delivered", sel)
	require.Equal(t, want.HTTP5xx, got.HTTP5xx, "%s: HTTP 5xx", sel)
	require.Equal(t, want.HTTP4xx, got.HTTP4xx, "%s: HTTP 4xx", sel)
	require.Positive(t, got.Plot, "%s: the plot's height", sel)
	require.Less(t, got.HeightGap, 0.5, "%s: each bar's height is its attempts' share of the tallest", sel)
	require.GreaterOrEqual(t, got.Points, 1, "%s: a p95 point where there were attempts", sel)
	require.True(t, got.Titled, "%s: every chart is an image with a title and a description", sel)
	require.Contains(t, got.Summary, fmt.Sprintf("%d attempts, %d delivered", want.Attempts, want.Delivered), "%s: the text summary", sel)
}

// Deliveries with known outcomes (3 delivered, 3 dead after two 5xx each,
// 3 dead on a 400) are drawn by the overview and by each endpoint's
// charts: the bars' counts, heights and text summaries match, at desktop
// and phone widths; the endpoint's URL and description, hostile, are text.
// The metrics route counts them by event type too (two of the events are
// order.created, one invoice.paid).
func TestConsoleChartsShowTheOutcomes(t *testing.T) {
	t.Parallel()
	all := strings.Join(hostile, " ")
	tenantID, key := apiTenant(t, "consolecharts")
	ok, fails, refuses := newReceiver(t, status(200)), newReceiver(t, status(500)), newReceiver(t, status(400))
	hostileURL := ok.URL + "/ok?u=" + hostile[2] + "&h=" + neturl.PathEscape(hostile[0])
	endpoint := func(in map[string]any) string {
		status, body := call(t, "POST", "/v1/endpoints", key, in)
		require.Equal(t, http.StatusCreated, status, "%v", body)
		return body["id"].(string)
	}
	epOK := endpoint(map[string]any{"url": hostileURL, "description": all})
	ep5xx := endpoint(map[string]any{"url": fails.URL + "/5xx", "retry_schedule": []int{1}})
	ep4xx := endpoint(map[string]any{"url": refuses.URL + "/4xx"})
	const events = 3
	for i := range events {
		typ := "order.created"
		if i == events-1 {
			typ = "invoice.paid"
		}
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_charts_%d_%s", i, tenantID), typ, fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, epOK, ev.OccurredAt), 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, ep5xx, ev.OccurredAt), 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
		waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, ep4xx, ev.OccurredAt), 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	}
	// Counters are written at the end of each batch, after the delivery.
	var totals map[string]any
	require.Eventually(t, func() bool {
		_, body := call(t, "GET", "/v1/metrics/attempts", key, nil)
		totals, _ = body["totals"].(map[string]any)
		return totals != nil && totals["attempts"] == float64(12)
	}, 30*time.Second, 250*time.Millisecond, "the tenant's attempts are counted: %v", totals)
	tenantWide := chartCounts{Attempts: 12, Delivered: 3, HTTP5xx: 6, HTTP4xx: 3}
	requireTypeGroups(t, key, map[string]typeCounts{
		"order.created": {Attempts: 8, Delivered: 2, HTTP5xx: 4, HTTP4xx: 2, P95: true},
		"invoice.paid":  {Attempts: 4, Delivered: 1, HTTP5xx: 2, HTTP4xx: 1, P95: true},
	})

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInByPortal(t, b, tenantID)
	b.click(dt("nav-overview"))
	requireCharts(t, b, dt("overview-charts")+`[data-range="24h"]`, 24, tenantWide)
	require.Contains(t, b.text(dt("overview-charts")), "failures: 3 HTTP 4xx, 6 HTTP 5xx")
	for class, n := range map[string]string{"delivered": "3", "http_5xx": "6", "http_4xx": "3", "timeout": "0"} {
		require.Equal(t, n, b.attr(fmt.Sprintf(`%s[data-class=%q]`, dt("class-bar"), class), "data-count"), class)
	}
	require.Equal(t, 3, b.count(dt("overview-row")))
	require.Equal(t, "6", b.attr(row("overview-row", ep5xx), "data-attempts"))
	require.Equal(t, "3", b.attr(row("overview-row", ep4xx), "data-failed"))
	require.Contains(t, b.text(row("overview-row", epOK)), hostileURL, "the hostile URL as text")
	b.assertSafe("overview")
	b.screenshot("overview")
	b.click(dt("overview-range-7d"))
	requireCharts(t, b, dt("overview-charts")+`[data-range="7d"]`, 7, tenantWide)
	require.Equal(t, "true", b.attr(dt("overview-range-7d"), "aria-pressed"))

	b.click(dt("nav-endpoints"))
	b.waitJS("the endpoints' health", stepTimeout, `() => [...document.querySelectorAll('[data-test="endpoint-health"]')]
		.every((e) => e.textContent.includes("consecutive failures"))`)
	b.click(row("endpoint-row", ep5xx) + " " + dt("endpoint-charts-open"))
	b.waitAttr(dt("endpoint-charts"), "data-id", ep5xx, stepTimeout)
	of5xx := chartCounts{Attempts: 6, HTTP5xx: 6}
	requireCharts(t, b, dt("endpoint-charts-24h"), 24, of5xx)
	requireCharts(t, b, dt("endpoint-charts-7d"), 7, of5xx)
	b.screenshot("endpoint-charts")
	b.click(row("endpoint-row", epOK) + " " + dt("endpoint-charts-open"))
	b.waitAttr(dt("endpoint-charts"), "data-id", epOK, stepTimeout)
	requireCharts(t, b, dt("endpoint-charts-24h"), 24, chartCounts{Attempts: 3, Delivered: 3})
	require.Contains(t, b.text(dt("endpoint-charts")), hostileURL)
	b.assertSafe("endpoint charts")

	p := newBrowser(t, phoneWidth, phoneHeight)
	signInKey(t, p, key)
	p.click(dt("nav-overview"))
	requireCharts(t, p, dt("overview-charts")+`[data-range="24h"]`, 24, tenantWide)
	p.noHorizontalOverflow("phone overview")
	p.assertSafe("phone overview")
	p.screenshot("phone-overview")
	p.click(dt("nav-endpoints"))
	p.click(row("endpoint-row", ep4xx) + " " + dt("endpoint-charts-open"))
	p.waitAttr(dt("endpoint-charts"), "data-id", ep4xx, stepTimeout)
	requireCharts(t, p, dt("endpoint-charts-7d"), 7, chartCounts{Attempts: 3, HTTP4xx: 3})
	p.noHorizontalOverflow("phone endpoint charts")
	p.screenshot("phone-endpoint-charts")
}

// typeCounts are a group_by=event_type group's counts, and whether it has
// a p95 latency.
type typeCounts struct {
	Attempts, Delivered, HTTP5xx, HTTP4xx float64
	P95                                   bool
}

// requireTypeGroups waits for the metrics route's groups by event type
// (written at the end of each deliver batch) to be want's, and no other
// type.
func requireTypeGroups(t *testing.T, key string, want map[string]typeCounts) {
	t.Helper()
	var got map[string]typeCounts
	var last any
	require.Eventually(t, func() bool {
		status, body := call(t, "GET", "/v1/metrics/attempts?group_by=event_type", key, nil)
		last = body
		groups, _ := body["groups"].([]any)
		got = map[string]typeCounts{}
		for _, g := range groups {
			m, _ := g.(map[string]any)
			f, _ := m["failures"].(map[string]any)
			l, _ := m["latency_ms"].(map[string]any)
			typ, _ := m["event_type"].(string)
			n := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
			got[typ] = typeCounts{Attempts: n(m, "attempts"), Delivered: n(m, "delivered"), HTTP5xx: n(f, "http_5xx"), HTTP4xx: n(f, "http_4xx"), P95: l["p95"] != nil}
		}
		return status == http.StatusOK && reflect.DeepEqual(got, want)
	}, 30*time.Second, 250*time.Millisecond, "the attempts by event type: %v", &last)
	require.Equal(t, want, got)
}

// Another tenant's overview counts none of these attempts; the tenant's
// own shows its attempts by event type, hostile type names as text, at
// desktop and phone widths.
func TestConsoleOverviewIsTheTenants(t *testing.T) {
	t.Parallel()
	tenantA, keyA := apiTenant(t, "chartsa")
	_, keyB := apiTenant(t, "chartsb")
	rcv := newReceiver(t, status(200))
	epA, _ := apiEndpoint(t, keyA, rcv.URL+"/a")
	types := []string{"order.created", hostile[0], hostile[1]}
	for i, typ := range types {
		ev := event(tenant{ID: tenantA}, fmt.Sprintf("evt_chartsa_%d_%s", i, tenantA), typ, `{}`)
		write(t, ev)
		waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, epA, ev.OccurredAt), 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
	require.Eventually(t, func() bool {
		_, body := call(t, "GET", "/v1/metrics/attempts", keyA, nil)
		totals, _ := body["totals"].(map[string]any)
		return totals != nil && totals["attempts"] == float64(len(types))
	}, 30*time.Second, 250*time.Millisecond)
	status, body := call(t, "GET", "/v1/metrics/attempts?endpoint_id="+epA, keyB, nil)
	require.Equal(t, http.StatusNotFound, status, "%v", body)
	wantTypes := map[string]typeCounts{}
	for _, typ := range types {
		wantTypes[typ] = typeCounts{Attempts: 1, Delivered: 1, P95: true}
	}
	requireTypeGroups(t, keyA, wantTypes)
	requireTypeGroups(t, keyB, map[string]typeCounts{})

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, keyB)
	b.click(dt("nav-overview"))
	got := readCharts(b, dt("overview-charts"))
	require.Zero(t, got.Attempts)
	require.Equal(t, 24, got.Bars)
	require.Zero(t, b.count(dt("overview-row")))
	b.wait(dt("overview-empty"))
	b.wait(dt("overview-types-empty"))
	require.Zero(t, b.count(dt("overview-type-row")), "none of A's types")

	for _, size := range []struct {
		name          string
		width, height int
	}{{"desktop", desktopWidth, desktopHeight}, {"phone", phoneWidth, phoneHeight}} {
		a := newBrowser(t, size.width, size.height)
		signInKey(t, a, keyA)
		a.click(dt("nav-overview"))
		a.wait(dt("overview-types"))
		require.Equal(t, len(types), a.count(dt("overview-type-row")), size.name)
		table := a.text(dt("overview-types"))
		for _, typ := range types {
			require.Contains(t, table, typ, "%s: the type's name as text", size.name)
		}
		a.assertSafe(size.name + " overview by type")
		if size.name == "phone" {
			a.noHorizontalOverflow("phone overview by type")
		}
	}
}
