//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// webhookIDs are the webhook-id headers of requests, sorted.
func webhookIDs(rs []received) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.Header.Get("webhook-id"))
	}
	sort.Strings(ids)
	return ids
}

// sinceEvents writes n events of a tenant and returns their deliveries to
// endpoint epID.
func sinceEvents(t *testing.T, tenantID, epID, prefix string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_%s_%d_%s", prefix, i, tenantID), "order.created", fmt.Sprintf(`{"i":%d}`, i))
		write(t, ev)
		ids = append(ids, domain.DeliveryID(ev.TenantID, ev.ID, epID, ev.OccurredAt))
	}
	sort.Strings(ids)
	return ids
}

// A receiver that lost its data: N deliveries delivered, then a replay
// since a time before them sends all N again, with the same webhook-ids,
// and they stay delivered (their attempts logged as resends).
func TestReplaySinceReceiverLostData(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "replaysince")
	rcv := newReceiver(t, status(http.StatusOK))
	epID, _ := apiEndpoint(t, key, rcv.URL)
	since := time.Now().UTC().Add(-time.Second)
	const n = 5
	ids := sinceEvents(t, tenantID, epID, "lost", n)
	for _, id := range ids {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
	first := rcv.waitFor(t, n, 60*time.Second)
	require.Equal(t, ids, webhookIDs(first[:n]))

	status, job := call(t, "POST", "/v1/replays", key, map[string]any{"since": since.Format(time.RFC3339Nano)})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	require.Equal(t, "since", job["kind"])
	done := waitJob(t, key, "/v1/replays/"+job["id"].(string))
	require.EqualValues(t, n, done["replayed"], "%v", done)
	require.EqualValues(t, 0, done["not_rebuilt"], "%v", done)

	all := rcv.waitFor(t, 2*n, 90*time.Second)
	require.Equal(t, ids, webhookIDs(all[n:2*n]), "the same webhook-ids again")
	for _, id := range ids {
		d := waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.Resends >= 1 })
		require.Equal(t, domain.StateDelivered, d.State)
	}

	// Another tenant cannot replay this one's endpoint.
	_, keyB := apiTenant(t, "replaysinceb")
	status, body := call(t, "POST", "/v1/replays", keyB, map[string]any{"since": since.Format(time.RFC3339Nano), "endpoint_id": epID})
	require.Equal(t, http.StatusNotFound, status, "%v", body)
	status, body = call(t, "POST", "/v1/replays", key, map[string]any{"since": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
}

// A down receiver with a backlog: the endpoint's pending deliveries are
// cancelled, and none is sent after, though their messages come back for
// their retries. Replayed later on purpose, they are delivered.
func TestCancelPendingBacklogOfADownReceiver(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "cancelpending")
	var up atomic.Bool
	rcv := newReceiver(t, func(_ int, w http.ResponseWriter) {
		if up.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	// Retries 20 s apart: the backlog stays pending while it is cancelled.
	const retry = 20 * time.Second
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": rcv.URL, "retry_schedule": []int{20, 20, 20}})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	epID := body["id"].(string)
	since := time.Now().UTC().Add(-time.Second)
	const n = 6
	ids := sinceEvents(t, tenantID, epID, "backlog", n)
	for _, id := range ids {
		waitDelivery(t, id, 90*time.Second, func(d domain.Delivery) bool { return d.State == domain.StatePending && d.Attempts >= 1 })
	}

	status, job := call(t, "POST", "/v1/endpoints/"+epID+"/cancel-pending", key, map[string]any{})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	done := waitJob(t, key, "/v1/replays/"+job["id"].(string))
	require.EqualValues(t, n, done["cancelled"], "%v", done)
	var named []string
	for _, id := range done["cancelled_ids"].([]any) {
		named = append(named, id.(string))
	}
	sort.Strings(named)
	require.Equal(t, ids, named)
	sent := len(rcv.requests())
	lastAttempt := map[string]int{}
	var latest time.Time
	for _, id := range ids {
		status, d := call(t, "GET", "/v1/deliveries/"+id, key, nil)
		require.Equal(t, http.StatusOK, status, "%v", d)
		require.Equal(t, "cancelled", d["state"])
		require.NotEmpty(t, d["cancelled_at"])
		rec, err := env.store.Delivery(t.Context(), id)
		require.NoError(t, err)
		lastAttempt[id] = rec.Attempts
		for _, a := range rec.AttemptLog {
			latest = later(latest, a.At)
		}
	}

	// Every message comes back after its retry delay, and is dropped: past
	// that (and a margin for the pollers), no request has been sent and no
	// attempt recorded.
	for time.Now().Before(latest.Add(retry + 15*time.Second)) {
		time.Sleep(500 * time.Millisecond)
	}
	require.Equal(t, sent, len(rcv.requests()), "no request after the cancel")
	for _, id := range ids {
		rec, err := env.store.Delivery(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, domain.StateCancelled, rec.State)
		require.Equal(t, lastAttempt[id], rec.Attempts, "no attempt of %s after the cancel", id)
	}

	// The receiver is back; the cancelled backlog is replayed on purpose.
	up.Store(true)
	status, job = call(t, "POST", "/v1/replays", key, map[string]any{"since": since.Format(time.RFC3339Nano), "states": []string{"cancelled"}})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	done = waitJob(t, key, "/v1/replays/"+job["id"].(string))
	require.EqualValues(t, n, done["replayed"], "%v", done)
	got := rcv.waitFor(t, sent+n, 90*time.Second)
	require.Equal(t, ids, webhookIDs(got[sent:sent+n]))
	for _, id := range ids {
		waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
