//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// endpointWith creates an endpoint through the API with the given own
// settings on top of its URL.
func endpointWith(t *testing.T, key, url string, settings map[string]any) string {
	t.Helper()
	in := map[string]any{"url": url}
	for k, v := range settings {
		in[k] = v
	}
	status, body := call(t, "POST", "/v1/endpoints", key, in)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	return body["id"].(string)
}

// publish writes one event of tenant into the outbox, fanned out to all its
// endpoints.
func publish(t *testing.T, tenant, id string) outbox.Event {
	t.Helper()
	ev := outbox.Event{ID: id, TenantID: tenant, Type: "order.created", Payload: json.RawMessage(`{"n":1}`), OccurredAt: time.Now().UTC()}
	write(t, ev)
	return ev
}

// An endpoint's own timeout bounds its attempts (timeout_seconds 1 against a
// receiver that answers in 2 s: a timeout), while an endpoint on the stack's
// timeout (3 s on the local cloud) gets the same receiver's answer.
func TestEndpointOwnTimeout(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "eptimeout")
	slow := newReceiver(t, func(_ int, w http.ResponseWriter) {
		time.Sleep(2 * time.Second)
		w.WriteHeader(http.StatusOK)
	})
	quick := endpointWith(t, key, slow.URL+"/quick", map[string]any{"timeout_seconds": 1, "retry_schedule": []int{1}})
	patient := endpointWith(t, key, slow.URL+"/patient", nil)
	ev := publish(t, tenant, fmt.Sprintf("evt_timeout_%d", time.Now().UnixNano()))

	d := waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, quick, ev.OccurredAt), 45*time.Second, func(d domain.Delivery) bool { return len(d.AttemptLog) >= 1 })
	a := d.AttemptLog[0]
	require.Equal(t, "timeout", a.Error, "%+v", a)
	require.Less(t, a.LatencyMS, int64(1900), "cut at the endpoint's 1 s, not at the receiver's 2 s answer")
	waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, patient, ev.OccurredAt), 45*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })

	// Both limits come from the deployed stack: its 3 s request timeout
	// (maxRequestTimeout's default) and its 4 attempts.
	status, body := call(t, "PATCH", "/v1/endpoints/"+quick, key, map[string]any{"timeout_seconds": 4})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	require.Contains(t, fmt.Sprint(body["errors"]), "timeout_seconds")
	require.Contains(t, fmt.Sprint(body["errors"]), "4 s exceeds the stack's 3 s max request timeout")
	status, body = call(t, "PATCH", "/v1/endpoints/"+quick, key, map[string]any{"retry_schedule": []int{1, 1, 1, 1}})
	require.Equal(t, http.StatusBadRequest, status, "%v", body)
	require.Contains(t, fmt.Sprint(body["errors"]), fmt.Sprintf("has 4 retries, at most %d", env.out.MaxReceiveCount-1))
	status, body = call(t, "GET", "/v1/endpoints/"+quick, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.EqualValues(t, 1, body["timeout_seconds"])
	require.Equal(t, []any{1.0}, body["retry_schedule"])
}

// A short schedule of the endpoint's own ([1, 1]: three attempts a second
// apart) is dead-lettered after its third attempt, by deliver itself (the
// queue's maxReceiveCount is the stack's 4), while an endpoint on the
// stack's schedule (0s, 1s, 4s, 10s locally) is still being retried, and
// goes dead after its own 4 attempts.
func TestEndpointOwnScheduleDeadLettersAfterItsLastAttempt(t *testing.T) {
	t.Parallel()
	require.Equal(t, 4, env.out.MaxReceiveCount, "written for the local schedule 0s,1s,4s,10s")
	tenant, key := apiTenant(t, "epschedule")
	shortRcv := newReceiver(t, status(http.StatusInternalServerError))
	stackRcv := newReceiver(t, status(http.StatusInternalServerError))
	short := endpointWith(t, key, shortRcv.URL, map[string]any{"retry_schedule": []int{1, 1}})
	stack := endpointWith(t, key, stackRcv.URL, nil)
	ev := publish(t, tenant, fmt.Sprintf("evt_schedule_%d", time.Now().UnixNano()))
	shortID, stackID := domain.DeliveryID(ev.TenantID, ev.ID, short, ev.OccurredAt), domain.DeliveryID(ev.TenantID, ev.ID, stack, ev.OccurredAt)

	d := waitDelivery(t, shortID, 45*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead && d.Attempts == 3 })
	require.Equal(t, domain.ReasonAttemptsExhausted, d.DeadReason)
	require.Len(t, d.AttemptLog, 3)
	got := shortRcv.requests()
	require.Len(t, got, 3)
	for i := 1; i < len(got); i++ {
		gap := got[i].At.Sub(got[i-1].At)
		require.Less(t, gap, 3500*time.Millisecond, "the endpoint's 1 s delays (±20%%, whole seconds), not the stack's 4 s: gap %d %s", i, gap)
	}
	// The stack's endpoint, failing alike, is still pending then: its
	// fourth attempt comes 10 s after its third.
	other, err := env.store.Delivery(t.Context(), stackID)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, other.State, "%+v", other)
	require.Less(t, other.Attempts, 4)

	msg := waitInDLQ(t, shortID, 30*time.Second)
	require.Equal(t, ev.ID, msg.EventID)
	d = waitDelivery(t, stackID, 45*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead && d.Attempts == 4 })
	require.Equal(t, domain.ReasonAttemptsExhausted, d.DeadReason)
	require.Len(t, shortRcv.requests(), 3, "no attempt after the endpoint's last")
}

// The console's endpoint form sets and clears the retry schedule and the
// timeout; a delay that is not whole seconds is refused on the page, one
// over the stack's limits by the API, its message shown as text.
func TestConsoleEndpointSettings(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "consoleeps")
	rcv := newReceiver(t, status(http.StatusOK))
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)

	b.click(dt("endpoint-create"))
	b.typ(dt("endpoint-url"), rcv.URL+"/hook")
	b.typ(dt("endpoint-retry-schedule"), "1, x")
	b.click(dt("endpoint-save"))
	b.waitText(dt("error"), "A retry delay must be whole seconds: x")
	b.typ(dt("endpoint-retry-schedule"), "1, 1, 1, 1")
	b.click(dt("endpoint-save"))
	b.waitText(dt("error"), "retry_schedule")
	b.typ(dt("endpoint-retry-schedule"), "1, 2")
	b.typ(dt("endpoint-timeout"), "2")
	b.click(dt("endpoint-save"))
	b.wait(dt("secret"))
	b.click(dt("secret-dismiss"))

	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	data := list["data"].([]any)
	require.Len(t, data, 1)
	ep := data[0].(map[string]any)
	require.Equal(t, []any{1.0, 2.0}, ep["retry_schedule"])
	require.EqualValues(t, 2, ep["timeout_seconds"])

	// Edited: the form shows them; emptied, the endpoint has the stack's.
	epRow := row("endpoint-row", ep["id"].(string))
	b.wait(epRow)
	b.click(epRow + " " + dt("endpoint-edit"))
	require.Equal(t, "1, 2", evalIn[string](b, `document.querySelector('[data-test="endpoint-retry-schedule"]').value`))
	require.Equal(t, "2", evalIn[string](b, `document.querySelector('[data-test="endpoint-timeout"]').value`))
	b.typ(dt("endpoint-retry-schedule"), "")
	b.typ(dt("endpoint-timeout"), "")
	b.click(dt("endpoint-save"))
	b.waitJS("the form closed", stepTimeout, `() => document.getElementById('endpoint-form').hidden`)
	status, got := call(t, "GET", "/v1/endpoints/"+ep["id"].(string), key, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.NotContains(t, got, "retry_schedule")
	require.NotContains(t, got, "timeout_seconds")
	b.assertSafe("endpoint settings")
}
