//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// A 429 with Retry-After is retried no sooner than the receiver asked, even
// though the schedule's next step is shorter.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	const asked = 6 * time.Second
	rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "6")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_429_"+tn.ID, "order.created", `{"n":1}`)
	write(t, ev)
	got := rcv.waitFor(t, 2, 60*time.Second)
	gap := got[1].At.Sub(got[0].At)
	t.Logf("Retry-After %s; second attempt came %s later", asked, gap)
	require.GreaterOrEqual(t, gap, asked, "retried sooner than Retry-After asked")
	d := waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt), 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	require.Equal(t, 2, d.Attempts)
	require.Equal(t, "http_429", d.AttemptLog[0].Error)
}

// A 410 Gone kills the delivery and disables the endpoint; the next event for
// it is not sent: its delivery goes dead at once (endpoint_disabled), listed
// for replay once the endpoint is enabled again.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusGone))
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_410_"+tn.ID, "order.created", `{"n":1}`)
	write(t, ev)
	rcv.waitFor(t, 1, 30*time.Second)
	d := waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt), 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, "endpoint_gone", string(d.DeadReason))
	ep, err := env.store.Endpoint(context.Background(), tn.ID, tn.Endpoint.EndpointID)
	require.NoError(t, err)
	require.True(t, ep.Disabled)
	require.Equal(t, "endpoint_gone", string(ep.DisabledReason))

	next := event(tn, "evt_410_next_"+tn.ID, "order.created", `{"n":2}`)
	write(t, next)
	d = waitDelivery(t, domain.DeliveryID(next.TenantID, next.ID, tn.Endpoint.EndpointID, next.OccurredAt), 20*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, "endpoint_disabled", string(d.DeadReason))
	require.Len(t, rcv.requests(), 1, "nothing is sent to a disabled endpoint")
}

// An attempt that outlives the request timeout (3 s locally) is retried.
func TestTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			time.Sleep(5 * time.Second)
		}
		w.WriteHeader(http.StatusOK)
	})
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_timeout_"+tn.ID, "order.created", `{"n":1}`)
	write(t, ev)
	rcv.waitFor(t, 2, 60*time.Second)
	d := waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt), 20*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	require.Equal(t, 2, d.Attempts)
	require.Equal(t, "timeout", d.AttemptLog[0].Error)
	require.Equal(t, 200, d.AttemptLog[1].Status)
}

// An event older than the age cap (1 h locally) goes dead without a request.
func TestEventPastTheAgeCapGoesDead(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusOK))
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_old_"+tn.ID, "order.created", `{"n":1}`)
	ev.OccurredAt = time.Now().Add(-2 * time.Hour).UTC()
	write(t, ev)
	id := domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)
	d := waitDelivery(t, id, 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, "max_age_exceeded", string(d.DeadReason))
	waitInDLQ(t, id, 30*time.Second)
	require.Empty(t, rcv.requests(), "an event past the age cap is not sent")
}
