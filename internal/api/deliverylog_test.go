package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

type deliveryPage struct {
	Data       []api.DeliveryListView `json:"data"`
	NextCursor string                 `json:"next_cursor"`
}

// logged is a delivery of tenant created at at, with its last answer.
func logged(tenant, id, endpoint, typ string, state domain.DeliveryState, status int, errText string, at time.Time) domain.Delivery {
	return domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: typ, State: state,
		Attempts: 1, LastStatus: status, LastError: errText, CreatedAt: at, AttemptLog: []domain.Attempt{{Number: 1, At: at, Status: status, Error: errText, Excerpt: "secret body"}}}
}

// GET /v1/deliveries lists the tenant's deliveries newest first, page by
// page, under each filter, and never another tenant's; bad filters are 400s
// that name the field.
func TestDeliveryLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
	tue := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) // a Tuesday
	for i, d := range []struct {
		ep, typ string
		state   domain.DeliveryState
		status  int
		err     string
	}{
		{"ep_1", "order.created", domain.StateDelivered, 200, ""},
		{"ep_1", "order.paid", domain.StateDead, 401, "http_401"},
		{"ep_2", "order.paid", domain.StatePending, 503, "http_503"},
		{"ep_1", "order.created", domain.StateDead, 401, "http_401"},
		{"ep_2", "order.created", domain.StatePending, 0, "timeout"},
	} {
		e.store.putDelivery(logged("tenant-a", fmt.Sprintf("dl_%d", i), d.ep, d.typ, d.state, d.status, d.err, tue.Add(time.Duration(i*12-12)*time.Hour)))
	}
	e.store.putDelivery(logged("tenant-b", "dl_b", "ep_1", "order.paid", domain.StateDead, 401, "http_401", tue))
	list := func(key, query string) []string {
		var ids []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			q := query + "&limit=2"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			rec := e.do("GET", "/v1/deliveries?"+q, key, nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			p := decodeJSON[deliveryPage](t, rec)
			require.NotContains(t, rec.Body.String(), "secret body", "no attempt log in a listing")
			for _, d := range p.Data {
				ids = append(ids, d.ID)
			}
			if cursor = p.NextCursor; cursor == "" {
				return ids
			}
		}
	}
	for q, want := range map[string][]string{
		"":                           {"dl_4", "dl_3", "dl_2", "dl_1", "dl_0"},
		"endpoint_id=ep_2":           {"dl_4", "dl_2"},
		"event_type=order.paid":      {"dl_2", "dl_1"},
		"state=dead":                 {"dl_3", "dl_1"},
		"status=401":                 {"dl_3", "dl_1"},
		"status_class=5xx":           {"dl_2"},
		"status_class=timeout":       {"dl_4"},
		"status_class=2xx":           {"dl_0"},
		"until=2026-12-01T00:00:00Z": {"dl_1", "dl_0"},
		"endpoint_id=ep_1&status=401&since=2026-12-01T00:00:00Z": {"dl_3", "dl_1"},
		"endpoint_id=ep_1&status=401&since=2026-12-01T00:00:01Z": {"dl_3"},
		"state=pending&status_class=4xx":                         nil,
	} {
		require.Equal(t, want, list(keyA, q), q)
	}
	require.Equal(t, []string{"dl_b"}, list(keyB, ""), "tenant B sees its own only")
	require.Empty(t, list(keyB, "endpoint_id=ep_2"))

	rec := e.do("GET", "/v1/deliveries?limit=1", keyA, nil)
	first := decodeJSON[deliveryPage](t, rec)
	require.Equal(t, api.DeliveryListView{ID: "dl_4", EventID: "evt_dl_4", EventType: "order.created", EndpointID: "ep_2", State: domain.StatePending,
		Attempts: 1, LastError: "timeout", CreatedAt: tue.Add(36 * time.Hour)}, first.Data[0])
	rec = e.do("GET", "/v1/deliveries?limit=5&cursor="+url.QueryEscape(first.NextCursor), keyB, nil)
	require.Equal(t, http.StatusOK, rec.Code, "a cursor is a position, not a tenant")
	for _, d := range decodeJSON[deliveryPage](t, rec).Data {
		require.Equal(t, "dl_b", d.ID, "tenant A's cursor shows tenant B nothing of A's")
	}

	for q, field := range map[string]string{
		"state=lost":       "state",
		"status_class=6xx": "status_class",
		"status=99":        "status",
		"status=abc":       "status",
		"since=tuesday":    "since",
		"since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z": "until",
		"limit=0":                  "limit",
		"cursor=bm90IGEgY3Vyc29y":  "cursor",
		"state=dead&state=pending": "state",
		"endpoint_id=":             "endpoint_id",
	} {
		rec := e.do("GET", "/v1/deliveries?"+q, keyA, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"`+field+`"`, q)
	}
	rec = e.do("GET", "/v1/deliveries?state=dead&cursor="+url.QueryEscape(first.NextCursor), keyA, nil)
	require.Equal(t, http.StatusBadRequest, rec.Code, "a cursor of another filter")
	require.Equal(t, http.StatusUnauthorized, e.do("GET", "/v1/deliveries", "", nil).Code)
}

// A second of outcome pages larger than a listing reads is a 503 that
// says so and where the deliveries are still read, not a 500.
func TestDeliveryLogSecondTooLargeIs503(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("tenant-a")
	e.store.setFailIn("ListDeliveries", store.ErrSecondTooLarge)
	rec := e.do("GET", "/v1/deliveries?limit=2", key, nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "more deliveries than one listing reads")
}
