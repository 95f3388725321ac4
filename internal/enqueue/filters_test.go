package enqueue

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

func filteredEndpoint(tenant, id, filter string) domain.Endpoint {
	e := endpoint(tenant, id)
	e.Filter = filter
	return e
}

func payloadImage(id, tenant, payload string) map[string]events.DynamoDBAttributeValue {
	return image(id, tenant, map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: events.NewStringAttribute(payload)})
}

// An endpoint's filter decides, from the event's data, whether the event
// creates a delivery for it: a filtered-out event sends no message for the
// endpoint, is counted (FilteredOut), and is no rejection even when every
// subscribed endpoint filtered it out.
func TestFiltersDecideTheFanOut(t *testing.T) {
	t.Parallel()
	s := newFakeStore(
		filteredEndpoint("t1", "ep_de", `{"country":["DE"]}`),
		filteredEndpoint("t1", "ep_big", `{"amount":[{"numeric":[">=",100]}]}`),
		endpoint("t1", "ep_all"),
		filteredEndpoint("t2", "ep_only_de", `{"country":["DE"]}`),
	)
	q := &fakeQueue{}
	var out bytes.Buffer
	h := newHandler(s, q)
	h.Metrics = metrics.New(&out)
	resp, err := h.Handle(context.Background(), streamEvent(
		payloadImage("e_de", "t1", `{"country":"DE","amount":5}`),
		payloadImage("e_fr", "t1", `{"country":"FR","amount":500}`),
		payloadImage("e_t2_fr", "t2", `{"country":"FR"}`),
		image("e_addressed", "t2", map[string]events.DynamoDBAttributeValue{
			outbox.AttrEndpointID: events.NewStringAttribute("ep_only_de"),
			outbox.AttrPayload:    events.NewStringAttribute(`{"country":"FR"}`),
		}),
	))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	got := map[string][]string{}
	for _, m := range q.sent() {
		got[m.EventID] = append(got[m.EventID], m.EndpointID)
	}
	require.Equal(t, map[string][]string{
		"e_de":        {"ep_all", "ep_de"},
		"e_fr":        {"ep_all", "ep_big"},
		"e_addressed": {"ep_only_de"}, // addressed: whatever its subscriptions
	}, got)
	require.Empty(t, s.Rejections(), "a filtered-out event is not the producer's fault")
	require.Contains(t, out.String(), `"FilteredOut":[1,1,1]`, "e_de for ep_big, e_fr for ep_de, e_t2_fr for ep_only_de: %s", out.String())
}

// A stored filter that cannot be parsed (registration prevents it) never
// blocks the stream: the endpoint gets the event as if unfiltered, and the
// error is counted (FilterErrors) and logged.
func TestUnparsableStoredFilterDeliversAndCounts(t *testing.T) {
	t.Parallel()
	s := newFakeStore(filteredEndpoint("t1", "ep_bad", `{"country":"DE"}`))
	q := &fakeQueue{}
	var out, logs bytes.Buffer
	h := newHandler(s, q)
	h.Metrics = metrics.New(&out)
	h.Log = slogTo(&logs)
	_, err := h.Handle(context.Background(), streamEvent(payloadImage("e1", "t1", `{"country":"FR"}`)))
	require.NoError(t, err)
	require.Len(t, q.sent(), 1)
	require.Contains(t, out.String(), `"FilterErrors"`)
	require.Contains(t, logs.String(), "endpoint filter cannot be parsed")
	require.Contains(t, logs.String(), "ep_bad")
	require.False(t, strings.Contains(logs.String(), `FR`), "the payload is never logged")
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// orPrefixes is a $or of n branches on field, each a prefix almost every
// leaf of wideLeaves shares.
func orPrefixes(field string, n int) string {
	var b strings.Builder
	b.WriteString(`{"$or":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{%q:[{"prefix":"xxxxxxxxxxxxxxx%02d"}]}`, field, i)
	}
	return b.String() + `]}`
}

// orPrefixesFor is orPrefixes with one more branch, on a field no payload
// has, that makes its text (and so its parsed filter) endpoint's own.
func orPrefixesFor(field string, n int, endpoint string) string {
	return strings.TrimSuffix(orPrefixes(field, n), `]}`) + fmt.Sprintf(`,{"only":[%q]}]}`, endpoint)
}

// Issue 34's worst shapes, in one batch beside a quiet tenant's event:
// the over-deep payload is rejected (too_deep), the record whose 60
// endpoints' 40-branch filters (each its own) would scan its ~120 KB payload past the
// record's budget gets the rest of its endpoints unfiltered (counted
// FilterOverBudget), escaped keys and wide objects match as usual, no
// record fails the batch, and the quiet tenant's event is sent.
func TestWorstShapesNeverStallTheBatch(t *testing.T) {
	t.Parallel()
	eps := []domain.Endpoint{filteredEndpoint("quiet", "ep_quiet", `{"country":["DE"]}`)}
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("ep_%02d", i)
		eps = append(eps, filteredEndpoint("noisy", id, orPrefixesFor("a", 39, id)))
	}
	eps = append(eps, filteredEndpoint("keys", "ep_keys", `{"abcd00001":["xy1"]}`))
	s := newFakeStore(eps...)
	q := &fakeQueue{}
	var out bytes.Buffer
	h := newHandler(s, q)
	h.Metrics = metrics.New(&out)
	h.Log = slogTo(io.Discard)

	filler := `"` + strings.Repeat("x", 470) + `"`
	nested := `{"a":` + strings.Repeat(`[`+filler+`,`, 250) + `"y"` + strings.Repeat(`]`, 250) + `}`
	wide := `{"a":[` + strings.TrimSuffix(strings.Repeat(`"xxxxxxxxxxxxxxxxxxxx",`, 5000), ",") + `]}`
	var esc strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&esc, `"\u0061\u0062\u0063\u0064%05d":"\u0078\u0079%d",`, i, i)
	}
	keys := `{` + strings.TrimSuffix(esc.String(), ",") + `}`
	resp, err := h.Handle(context.Background(), streamEvent(
		payloadImage("e_nested", "noisy", nested),
		payloadImage("e_wide", "noisy", wide),
		payloadImage("e_keys", "keys", keys),
		payloadImage("e_quiet", "quiet", `{"country":"DE"}`),
	))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "no record fails the batch")
	require.Equal(t, outbox.ReasonTooDeep, string(s.Rejections()["e_nested"].Reason))
	sent := map[string]int{}
	for _, m := range q.sent() {
		sent[m.EventID]++
	}
	require.Equal(t, 1, sent["e_quiet"], "the quiet tenant's event is sent")
	require.Equal(t, 1, sent["e_keys"], "escaped keys match as unescaped: %+v", s.Rejections()["e_keys"])
	require.Greater(t, sent["e_wide"], 0, "endpoints past the record's budget get the event unfiltered")
	require.Less(t, sent["e_wide"], 60, "endpoints within the record's budget are filtered")
	require.Contains(t, out.String(), `"FilterOverBudget"`)
}

// Endpoints with the same filter text share its outcome, matched once a
// record: sixty endpoints with the same 40-branch filter on a ~120 KB
// payload cost one filter's work, within the record's budget, so none gets
// the event unfiltered (with sixty distinct filters, most would:
// TestWorstShapesNeverStallTheBatch).
func TestSameFilterIsMatchedOnceARecord(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := 0; i < 60; i++ {
		eps = append(eps, filteredEndpoint("noisy", fmt.Sprintf("ep_%02d", i), orPrefixes("a", 40)))
	}
	eps = append(eps, filteredEndpoint("noisy", "ep_match", `{"a":["xxxxxxxxxxxxxxxxxxxx"]}`))
	s, q := newFakeStore(eps...), &fakeQueue{}
	var out bytes.Buffer
	h := newHandler(s, q)
	h.Metrics = metrics.New(&out)
	wide := `{"a":[` + strings.TrimSuffix(strings.Repeat(`"xxxxxxxxxxxxxxxxxxxx",`, 5000), ",") + `]}`
	_, err := h.Handle(context.Background(), streamEvent(payloadImage("e_wide", "noisy", wide)))
	require.NoError(t, err)
	var sent []string
	for _, m := range q.sent() {
		sent = append(sent, m.EndpointID)
	}
	require.Equal(t, []string{"ep_match"}, sent, "every shared filter filtered it out; the matching one sent")
	require.NotContains(t, out.String(), `"FilterOverBudget"`)
}
