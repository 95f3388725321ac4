//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// listed are the ids of a page of GET /v1/events, and its cursor.
func listed(t *testing.T, key, query string) ([]string, []any, string) {
	t.Helper()
	status, body := call(t, "GET", "/v1/events"+query, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	var ids []string
	data := body["data"].([]any)
	for _, e := range data {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	next, _ := body["next_cursor"].(string)
	return ids, data, next
}

// The message log on the local cloud: a tenant's events newest first, by
// type and time range, a page at a time, each with its deliveries' states;
// one event with its payload; another tenant's event is 404.
func TestMessageLog(t *testing.T) {
	t.Parallel()
	tenantA, keyA := apiTenant(t, "logger")
	_, keyB := apiTenant(t, "snoop")
	rcv := newReceiver(t, status(200))
	epID, _ := apiEndpoint(t, keyA, rcv.URL+"/log")

	base := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Second)
	var ids []string
	for i, typ := range []string{"order.created", "order.paid", "order.created", "order.paid"} {
		id := fmt.Sprintf("evt_log_%d_%d", i, time.Now().UnixNano())
		ids = append(ids, id)
		e := event(tenant{ID: tenantA}, id, typ, fmt.Sprintf(`{"n":%d}`, i))
		e.OccurredAt = base.Add(time.Duration(i) * time.Minute)
		seq := int64(i + 1)
		e.Sequence = &seq
		write(t, e)
	}
	rcv.waitFor(t, 4, 60*time.Second)
	newestFirst := []string{ids[3], ids[2], ids[1], ids[0]}

	var data []any
	require.Eventually(t, func() bool { // the index and the records are eventually consistent
		var got []string
		got, data, _ = listed(t, keyA, "")
		if fmt.Sprint(got) != fmt.Sprint(newestFirst) {
			return false
		}
		for _, e := range data {
			ds := e.(map[string]any)["deliveries"].([]any)
			if len(ds) != 1 || ds[0].(map[string]any)["state"] != "delivered" {
				return false
			}
		}
		return true
	}, 30*time.Second, 500*time.Millisecond, "four events, newest first, each delivered")
	first := data[0].(map[string]any)
	require.Equal(t, "order.paid", first["type"])
	require.Nil(t, first["payload"], "a listing carries no payload")
	require.Equal(t, epID, first["deliveries"].([]any)[0].(map[string]any)["endpoint_id"])

	got, _, _ := listed(t, keyA, "?type=order.created")
	require.Equal(t, []string{ids[2], ids[0]}, got)
	q := url.Values{"since": {base.Add(time.Minute).Format(time.RFC3339)}, "until": {base.Add(2 * time.Minute).Format(time.RFC3339)}}
	got, _, _ = listed(t, keyA, "?"+q.Encode())
	require.Equal(t, []string{ids[2], ids[1]}, got)

	var paged []string
	cursor := ""
	for range 10 {
		query := "?limit=1"
		if cursor != "" {
			query += "&cursor=" + url.QueryEscape(cursor)
		}
		page, _, next := listed(t, keyA, query)
		require.LessOrEqual(t, len(page), 1)
		paged = append(paged, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	require.Equal(t, newestFirst, paged, "pages of one, in order, each once")

	status, body := call(t, "GET", "/v1/events/"+ids[1], keyA, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, map[string]any{"n": float64(1)}, body["payload"])
	require.Equal(t, float64(2), body["sequence"])
	require.Equal(t, "delivered", body["deliveries"].([]any)[0].(map[string]any)["state"])

	status, body = call(t, "GET", "/v1/events/"+ids[1], keyB, nil)
	require.Equal(t, http.StatusNotFound, status, "another tenant's event: %v", body)
	require.NotContains(t, fmt.Sprint(body), `"n"`)
	got, _, _ = listed(t, keyB, "")
	require.Empty(t, got, "another tenant lists none of them")
	status, _ = call(t, "GET", "/v1/events?cursor=garbage", keyA, nil)
	require.Equal(t, http.StatusBadRequest, status)
}

// A resend of a delivered delivery reaches the receiver again with the same
// webhook-id and shows in the attempt log, the delivery still delivered; a
// resend to a disabled endpoint is refused with 409.
func TestResendDelivered(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "resender")
	rcv := newReceiver(t, status(200))
	epID, _ := apiEndpoint(t, key, rcv.URL+"/resend")
	evID := fmt.Sprintf("evt_resend_%d", time.Now().UnixNano())
	write(t, event(tenant{ID: tenantID}, evID, "order.created", `{"r":1}`))
	first := rcv.waitFor(t, 1, 60*time.Second)[0]
	deliveryID := first.Header.Get("webhook-id")
	require.NotEmpty(t, deliveryID)
	require.Eventually(t, func() bool {
		status, body := call(t, "GET", "/v1/deliveries/"+deliveryID, key, nil)
		return status == http.StatusOK && body["state"] == "delivered"
	}, 30*time.Second, 300*time.Millisecond)

	status, body := call(t, "POST", "/v1/deliveries/"+deliveryID+"/resend", key, nil)
	require.Equal(t, http.StatusAccepted, status, "%v", body)
	require.Equal(t, deliveryID, body["delivery_id"])
	again := rcv.waitFor(t, 2, 60*time.Second)[1]
	require.Equal(t, deliveryID, again.Header.Get("webhook-id"), "the same webhook-id")
	require.JSONEq(t, string(first.Body), string(again.Body), "the same body")

	var log []any
	require.Eventually(t, func() bool {
		var d map[string]any
		_, d = call(t, "GET", "/v1/deliveries/"+deliveryID, key, nil)
		log, _ = d["attempt_log"].([]any)
		return d["state"] == "delivered" && len(log) == 2
	}, 30*time.Second, 300*time.Millisecond, "the resend's attempt is logged, the delivery still delivered")
	require.Nil(t, log[0].(map[string]any)["resend"])
	require.Equal(t, true, log[1].(map[string]any)["resend"])
	require.Equal(t, float64(200), log[1].(map[string]any)["status"])

	status, _ = call(t, "POST", "/v1/endpoints/"+epID+"/disable", key, nil)
	require.Equal(t, http.StatusOK, status)
	status, body = call(t, "POST", "/v1/deliveries/"+deliveryID+"/resend", key, nil)
	require.Equal(t, http.StatusConflict, status, "%v", body)
	require.Contains(t, body["detail"], "disabled")
	_, otherKey := apiTenant(t, "other")
	status, _ = call(t, "POST", "/v1/deliveries/"+deliveryID+"/resend", otherKey, nil)
	require.Equal(t, http.StatusNotFound, status)
	time.Sleep(2 * time.Second)
	require.Len(t, rcv.requests(), 2, "nothing more sent")
}

// A resend of a dead delivery is a replay of it alone: it reaches the
// receiver with the same webhook-id, the delivery ends delivered with
// replayed_at, and the answer names the replay job.
func TestResendDead(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "resenddead")
	rcv, up := failingUntilUp(t, http.StatusBadRequest) // a 400 is dead at once
	epID, _ := apiEndpoint(t, key, rcv.URL+"/dead")
	id := deadEvents(t, tenantID, epID, 1, "order.dead")[0]
	up.Store(true)

	status, body := call(t, "POST", "/v1/deliveries/"+id+"/resend", key, nil)
	require.Equal(t, http.StatusAccepted, status, "%v", body)
	require.Equal(t, "dead", body["state"])
	jobID, _ := body["replay_job_id"].(string)
	require.NotEmpty(t, jobID)
	job := waitJob(t, key, "/v1/replays/"+jobID)
	require.Equal(t, float64(1), job["replayed"])
	got := rcv.waitFor(t, 2, 60*time.Second)
	require.Equal(t, id, got[1].Header.Get("webhook-id"))
	d := waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	require.NotNil(t, d.ReplayedAt)
}
