package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/replay"
	"github.com/stretchr/testify/require"
)

func dead(tenant, id, endpoint, typ string, at time.Time) domain.Delivery {
	return domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: typ,
		State: domain.StateDead, DeadAt: &at, DeadReason: "attempts_exhausted", Attempts: 8, LastStatus: 503, LastError: "http_503", CreatedAt: at}
}

func TestDLQList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA := e.newTenant("tenant-a")
	keyB := e.newTenant("tenant-b")
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	e.clock.Advance(t0.Add(time.Hour).Sub(e.clock.Now())) // the server's time: an hour after the first death
	for i := 0; i < 5; i++ {
		typ := "order.created"
		if i%2 == 1 {
			typ = "payment.failed"
		}
		e.store.putDelivery(dead("tenant-a", fmt.Sprintf("dl_a%d", i), "ep_1", typ, t0.Add(time.Duration(i)*time.Minute)))
	}
	e.store.putDelivery(dead("tenant-b", "dl_b0", "ep_9", "order.created", t0))
	type page struct {
		Data       []api.DeadLetterView `json:"data"`
		NextCursor string               `json:"next_cursor"`
	}
	list := func(key, query string) page {
		rec := e.do("GET", "/v1/dlq"+query, key, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decodeJSON[page](t, rec)
	}

	t.Run("paginated, oldest first, own tenant only", func(t *testing.T) {
		var ids []string
		cursor := ""
		for pages := 0; pages < 10; pages++ {
			q := "?limit=2"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p := list(keyA, q)
			for _, d := range p.Data {
				ids = append(ids, d.ID)
				require.Equal(t, "attempts_exhausted", string(d.DeadReason))
				require.Equal(t, 8, d.Attempts)
				require.NotNil(t, d.DeadAt)
			}
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		require.Equal(t, []string{"dl_a0", "dl_a1", "dl_a2", "dl_a3", "dl_a4"}, ids)
		require.Len(t, list(keyB, "").Data, 1)
	})
	t.Run("filters", func(t *testing.T) {
		require.Len(t, list(keyA, "?event_type=payment.failed").Data, 2)
		require.Len(t, list(keyA, "?endpoint_id=ep_9").Data, 0, "another tenant's endpoint matches nothing")
		p := list(keyA, "?since="+t0.Add(2*time.Minute).Format(time.RFC3339)+"&until="+t0.Add(3*time.Minute).Format(time.RFC3339))
		require.Len(t, p.Data, 2)
	})
	t.Run("bad filters are 400 naming the field", func(t *testing.T) {
		for q, field := range map[string]string{
			"?since=yesterday": "since", "?until=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z": "until",
			"?limit=0": "limit", "?limit=many": "limit", "?cursor=!!!": "cursor",
			// Times the store's keys cannot hold, or a since after the
			// server's clock (which can match nothing): DynamoDB refuses a
			// key range whose upper bound is below its lower one.
			"?since=9000-01-01T00:00:00Z":      "since",
			"?since=2026-12-01T00:00:00Z":      "since",
			"?until=9999-12-31T23:59:59-01:00": "until",
			"?until=0000-01-01T00:00:00+01:00": "until",
			// Empty or repeated parameters are refused, not read as absent.
			"?until=": "until", "?since=": "since", "?limit=": "limit", "?cursor=": "cursor",
			"?endpoint_id=": "endpoint_id", "?event_type=": "event_type", "?limit=1&limit=2": "limit",
		} {
			p := requireProblem(t, e.do("GET", "/v1/dlq"+q, keyA, nil), http.StatusBadRequest)
			require.Equal(t, field, p.Errors[0].Field, q)
			require.Contains(t, p.Detail, field, "the detail names the fault")
		}
	})
	t.Run("far times the store can hold are accepted", func(t *testing.T) {
		require.Len(t, list(keyA, "?until=9999-12-31T23:59:59Z").Data, 5)
		require.Len(t, list(keyA, "?since=0000-01-01T00:00:00Z&until=2026-11-30T01:01:00Z").Data, 2)
	})
	t.Run("a cursor of another query is 400", func(t *testing.T) {
		cursor := list(keyA, "?limit=2").NextCursor
		require.NotEmpty(t, cursor)
		require.Len(t, list(keyA, "?limit=2&cursor="+cursor).Data, 2, "the cursor works with its own query")
		for _, q := range []string{"&since=" + t0.Add(4*time.Minute).Format(time.RFC3339), "&event_type=order.created", "&until=" + t0.Format(time.RFC3339)} {
			p := requireProblem(t, e.do("GET", "/v1/dlq?limit=2&cursor="+cursor+q, keyA, nil), http.StatusBadRequest)
			require.Equal(t, []string{"cursor"}, fields(p), q)
			require.Contains(t, p.Detail, "does not belong to this query", q)
		}
	})
}

func TestDLQReplayStartsAJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA := e.newTenant("tenant-a")
	keyB := e.newTenant("tenant-b")

	rec := e.do("POST", "/v1/dlq/replay", keyA, map[string]any{"event_type": "order.created", "since": "2026-03-01T00:00:00Z"})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	job := decodeJSON[api.JobView](t, rec)
	require.Equal(t, "filter", string(job.Kind))
	require.Equal(t, "queued", string(job.Status))
	require.Equal(t, "/v1/replays/"+job.ID, rec.Header().Get("Location"))
	stored := e.store.job(job.ID)
	require.Equal(t, "tenant-a", stored.TenantID, "the job belongs to the key's tenant")
	require.Equal(t, "order.created", argsOf[replay.Filter](t, stored).Filter.EventType)

	rec = e.do("GET", "/v1/replays/"+job.ID, keyA, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	requireProblem(t, e.do("GET", "/v1/replays/"+job.ID, keyB, nil), http.StatusNotFound)

	rec = e.do("POST", "/v1/dlq/replay", keyA, map[string]any{"delivery_ids": []string{"dl_1", "dl_2"}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, []string{"dl_1", "dl_2"}, argsOf[replay.IDs](t, e.store.job(decodeJSON[api.JobView](t, rec).ID)).IDs)

	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"ids and filter":  {map[string]any{"delivery_ids": []string{"a"}, "event_type": "x"}, "delivery_ids"},
		"empty ids":       {map[string]any{"delivery_ids": []string{}}, "delivery_ids"},
		"repeated id":     {map[string]any{"delivery_ids": []string{"a", "a"}}, "delivery_ids[1]"},
		"bad time":        {map[string]any{"since": "last week"}, "since"},
		"unknown field":   {map[string]any{"tenant_id": "tenant-b"}, "tenant_id"},
		"ids not strings": {map[string]any{"delivery_ids": []int{1}}, "delivery_ids"},
		"null ids":        {`{"delivery_ids":null}`, "delivery_ids"},
		"null id":         {`{"delivery_ids":["a",null]}`, "delivery_ids[1]"},
		// The filter is checked exactly as the listing checks it: a job
		// accepted with a filter the listing refuses would fail every step.
		"since in the future":   {map[string]any{"since": "9000-01-01T00:00:00Z"}, "since"},
		"since past year 9999":  {map[string]any{"since": "2026-01-01T00:00:00Z", "until": "9999-12-31T23:59:59-01:00"}, "until"},
		"since before year 0":   {map[string]any{"since": "0000-01-01T00:00:00+01:00"}, "since"},
		"until before since":    {map[string]any{"since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, "until"},
		"empty since":           {map[string]any{"since": ""}, "since"},
		"empty event type":      {map[string]any{"event_type": ""}, "event_type"},
		"long endpoint id":      {map[string]any{"endpoint_id": strings.Repeat("e", 257)}, "endpoint_id"},
		"null in a filter list": {`{"event_type":"a","since":null,"until":[null]}`, "until[0]"},
	} {
		p := requireProblem(t, e.do("POST", "/v1/dlq/replay", keyA, tc.body), http.StatusBadRequest)
		require.Equal(t, tc.field, p.Errors[0].Field, name)
	}
}

// A tenant with as many jobs open as it may gets 429, a problem
// document and Retry-After; another tenant and the operator do not.
func TestDLQReplayRefusedAtTheBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA := e.newTenant("tenant-a")
	keyB := e.newTenant("tenant-b")
	e.store.full = map[string]bool{"tenant-a": true}
	for name, body := range map[string]any{
		"by filter": map[string]any{"event_type": "order.created"},
		"by ids":    map[string]any{"delivery_ids": []string{"dl_1"}},
	} {
		t.Run(name, func(t *testing.T) {
			rec := e.do("POST", "/v1/dlq/replay", keyA, body)
			p := requireProblem(t, rec, http.StatusTooManyRequests)
			require.Contains(t, p.Detail, "jobs queued or running")
			require.Equal(t, "30", rec.Header().Get("Retry-After"))
		})
	}
	require.Empty(t, e.store.started)
	t.Run("documented", func(t *testing.T) {
		doc := loadOpenAPI(t)
		op := asMap(asMap(asMap(doc["paths"])["/v1/dlq/replay"])["post"])
		r, err := resolve(doc, asMap(op["responses"])["429"])
		require.NoError(t, err)
		require.NotNil(t, r, "POST /v1/dlq/replay documents its 429")
		require.Contains(t, asMap(r["headers"]), "Retry-After")
		require.Contains(t, asMap(r["content"]), "application/problem+json")
	})
	rec := e.do("POST", "/v1/dlq/replay", keyB, map[string]any{"event_type": "order.created"})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	rec = e.do("POST", "/v1/admin/dlq/redrive", operatorKey, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
}

func TestOperatorRedrive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do("POST", "/v1/admin/dlq/redrive", operatorKey, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	job := decodeJSON[api.JobView](t, rec)
	require.Equal(t, "redrive", string(job.Kind))
	require.Empty(t, e.store.job(job.ID).TenantID, "a redrive spans every tenant")
	rec = e.do("GET", "/v1/admin/replays/"+job.ID, operatorKey, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	requireProblem(t, e.do("GET", "/v1/admin/replays/rj_missing", operatorKey, nil), http.StatusNotFound)
}

func TestOperatorStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("tenant-a")
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	e.store.putDelivery(dead("tenant-a", "dl_1", "ep", "x", t0))
	e.store.putDelivery(dead("tenant-a", "dl_2", "ep", "x", t0))
	e.store.putDelivery(dead("tenant-b", "dl_3", "ep", "x", t0))
	rec := e.do("GET", "/v1/admin/stats", operatorKey, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	v := decodeJSON[api.StatsView](t, rec)
	require.Equal(t, map[string]int{"tenant-a": 2, "tenant-b": 1}, v.DLQDepthByTenant)
	require.Equal(t, 3, v.DLQDepthTotal)
	requireProblem(t, e.do("GET", "/v1/admin/stats", key, nil), http.StatusUnauthorized)
}

// Each listing reads its page request the same way: a limit outside 1 to
// 100, a cursor longer than any it returns, a parameter given twice or
// empty, and a filter of its own that is wrong are one 400 naming each.
func TestListingsRefuseABadPageRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("tenant-a")
	long := strings.Repeat("c", 1025)
	for _, tc := range []struct{ path, filter string }{
		{"/v1/dlq", "since=yesterday"},
		{"/v1/deliveries", "state=lost"},
		{"/v1/events", "until=soon"},
	} {
		for _, c := range []struct{ query, field, msg string }{
			{"limit=0", "limit", ""},
			{"limit=101", "limit", ""},
			{"cursor=" + long, "cursor", "is not a cursor this API returned"},
			{"limit=1&limit=2", "limit", "more than once"},
			{"cursor=", "cursor", "is empty"},
			{tc.filter, strings.Split(tc.filter, "=")[0], ""},
		} {
			requireRefused(t, e.do("GET", tc.path+"?"+c.query, key, nil), c.field, c.msg)
		}
		rec := e.do("GET", tc.path+"?limit=0&cursor="+long+"&"+tc.filter, key, nil)
		for _, field := range []string{"limit", "cursor", strings.Split(tc.filter, "=")[0]} {
			requireRefused(t, rec, field, "")
		}
		require.Equal(t, http.StatusOK, e.do("GET", tc.path+"?limit=100", key, nil).Code, tc.path)
	}
}
