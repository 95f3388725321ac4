package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

func (e *env) messageLog() *storefake.MessageLog { return e.srv.MessageLog.(*storefake.MessageLog) }

type eventPage struct {
	Data       []api.EventView `json:"data"`
	NextCursor string          `json:"next_cursor"`
}

func (e *env) listEvents(key, query string) eventPage {
	e.tb.Helper()
	rec := e.do("GET", "/v1/events"+query, key, nil)
	require.Equal(e.tb, http.StatusOK, rec.Code, rec.Body.String())
	var p eventPage
	require.NoError(e.tb, json.Unmarshal(rec.Body.Bytes(), &p))
	return p
}

func ids(p eventPage) []string {
	var out []string
	for _, v := range p.Data {
		out = append(out, v.ID)
	}
	return out
}

func TestListEventsNewestFirstFilteredAndPaginated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	other := e.newTenant("other")
	ep := e.createEndpoint(key, nil)
	for i := range 5 {
		typ := "order.created"
		if i%2 == 1 {
			typ = "order.paid"
		}
		e.messageLog().Put(domain.Event{ID: fmt.Sprintf("evt_%d", i), TenantID: "acme", Type: typ, OccurredAt: t0.Add(time.Duration(i) * time.Minute), Payload: json.RawMessage(`{"n":1}`)})
	}
	e.messageLog().Put(domain.Event{ID: "evt_other", TenantID: "other", Type: "order.created", OccurredAt: t0})
	e.store.putDelivery(domain.Delivery{DeliveryID: domain.DeliveryID("acme", "evt_4", ep.ID, t0.Add(4*time.Minute)), TenantID: "acme", EndpointID: ep.ID, EventID: "evt_4", EventType: "order.created",
		State: domain.StateDelivered, CreatedAt: t0, Attempts: 2})

	all := e.listEvents(key, "")
	require.Equal(t, []string{"evt_4", "evt_3", "evt_2", "evt_1", "evt_0"}, ids(all), "newest first, the tenant's only")
	require.Empty(t, all.NextCursor)
	require.Equal(t, []api.EventDeliveryView{{ID: domain.DeliveryID("acme", "evt_4", ep.ID, t0.Add(4*time.Minute)), EndpointID: ep.ID, State: domain.StateDelivered, Attempts: 2}}, all.Data[0].Deliveries)
	require.Empty(t, all.Data[1].Deliveries)
	require.Nil(t, all.Data[0].Payload, "a listing carries no payload")

	require.Equal(t, []string{"evt_3", "evt_1"}, ids(e.listEvents(key, "?type=order.paid")))
	q := url.Values{"since": {t0.Add(time.Minute).Format(time.RFC3339)}, "until": {t0.Add(3 * time.Minute).Format(time.RFC3339)}}
	require.Equal(t, []string{"evt_3", "evt_2", "evt_1"}, ids(e.listEvents(key, "?"+q.Encode())))

	var seen []string
	cursor := ""
	for range 10 {
		p := e.listEvents(key, "?limit=2"+map[bool]string{true: "", false: "&cursor=" + cursor}[cursor == ""])
		seen = append(seen, ids(p)...)
		require.LessOrEqual(t, len(p.Data), 2)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	require.Equal(t, ids(all), seen, "the pages together are the listing, once each")

	require.Equal(t, []string{"evt_other"}, ids(e.listEvents(other, "")), "another tenant sees its own only")
	first := e.listEvents(key, "?limit=1")
	// The reader's cursor holds positions in the caller's own log shards:
	// another tenant's cursor never reaches the tenant's events.
	require.Subset(t, []string{"evt_other"}, ids(e.listEvents(other, "?limit=1&cursor="+first.NextCursor)), "a cursor is a position in the caller's own log only")

	for _, bad := range []string{"?limit=0", "?limit=101", "?since=yesterday", "?until=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z", "?cursor=nope", "?type=", "?type=a&type=b",
		"?limit=1&type=order.paid&cursor=" + first.NextCursor} {
		requireProblem(t, e.do("GET", "/v1/events"+bad, key, nil), http.StatusBadRequest)
	}
}

func TestGetEventWithPayloadAndDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	other := e.newTenant("other")
	ep := e.createEndpoint(key, nil)
	seq := int64(7)
	e.messageLog().Put(domain.Event{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: t0.Add(-time.Hour), Sequence: &seq, Payload: json.RawMessage(`{"order":"o_1"}`)})
	e.store.putDelivery(domain.Delivery{DeliveryID: domain.DeliveryID("acme", "evt_1", ep.ID, t0.Add(-time.Hour)), TenantID: "acme", EndpointID: ep.ID, EventID: "evt_1", EventType: "order.created",
		State: domain.StateDead, CreatedAt: t0, Attempts: 8})

	rec := e.do("GET", "/v1/events/evt_1", key, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, fmt.Sprintf(`{"id":"evt_1","type":"order.created","occurred_at":%q,"sequence":7,"payload":{"order":"o_1"},
		"deliveries":[{"id":%q,"endpoint_id":%q,"state":"dead","attempts":8}],"matched":[%[3]q],"filtered_out":[]}`, t0.Add(-time.Hour).Format(time.RFC3339), domain.DeliveryID("acme", "evt_1", ep.ID, t0.Add(-time.Hour)), ep.ID), rec.Body.String())

	cross, missing := e.do("GET", "/v1/events/evt_1", other, nil), e.do("GET", "/v1/events/evt_nope", other, nil)
	requireProblem(t, cross, http.StatusNotFound)
	requireProblem(t, missing, http.StatusNotFound)
	require.NotContains(t, cross.Body.String(), "o_1")

	// Past the payload retention: the event without its payload.
	e.clock.Advance(api.DefaultPayloadRetention)
	rec = e.do("GET", "/v1/events/evt_1", key, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rawJSON(t, rec), "payload")
	require.Equal(t, "evt_1", rawJSON(t, rec)["id"])
}

func TestEventRoutesWithoutALog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	e.srv.MessageLog = nil
	e.h = e.srv.Handler()
	for _, target := range []string{"/v1/events", "/v1/events/evt_1"} {
		requireProblem(t, e.do("GET", target, key, nil), http.StatusServiceUnavailable)
	}
}
