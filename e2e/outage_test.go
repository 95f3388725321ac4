//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/stretchr/testify/require"
)

// outageReceiver is a receiver on a fixed 127.0.0.1 port that can go down
// (stop listening: connections are refused) and come back on the same port.
// It answers 200 and counts the requests by webhook-id.
type outageReceiver struct {
	addr string
	mu   sync.Mutex
	srv  *http.Server
	got  map[string]int // webhook-id -> requests answered 200
}

func newOutageReceiver(t *testing.T) *outageReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &outageReceiver{addr: ln.Addr().String(), got: map[string]int{}}
	r.serve(ln)
	t.Cleanup(func() { r.down() })
	return r
}

func (r *outageReceiver) URL() string { return "http://" + r.addr }

func (r *outageReceiver) serve(ln net.Listener) {
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.got[req.Header.Get("webhook-id")]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go srv.Serve(ln)
}

// down closes the listener and every connection: a new connection is
// refused until up.
func (r *outageReceiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up listens again on the same port.
func (r *outageReceiver) up(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port is ours; a moment may pass before it is free again
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err, "listen again on %s", r.addr)
	r.serve(ln)
}

func (r *outageReceiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.got))
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

// A receiver that refuses connections for about 6 seconds while a burst of
// 100 events is written for its endpoint, then comes back: an outage far
// shorter than the retry schedule. Every event must be delivered (each
// delivery id received at least once), none may be dead, and the endpoint
// must still be enabled: auto-disable is for a receiver that has failed
// persistently over time, not for a burst meeting a short outage (DESIGN.md,
// "Isolation").
func TestShortOutageUnderBurstLosesNothing(t *testing.T) {
	t.Parallel()
	const (
		burst  = 100
		outage = 6 * time.Second
		bound  = 3 * time.Minute
	)
	tenantID, key := apiTenant(t, "outage")
	rcv := newOutageReceiver(t)
	endpointID, _ := apiEndpoint(t, key, rcv.URL()+"/hook", "order.*")
	client := &apiclient.Client{BaseURL: apiclient.LocalURL(env.endpointURL, env.out.ApiID), Key: key}

	// The receiver works: one event through.
	warm := event(tenant{ID: tenantID}, "evt_warm_"+tenantID, "order.created", `{"n":0}`)
	write(t, warm)
	warmID := domain.DeliveryID(warm.TenantID, warm.ID, endpointID, warm.OccurredAt)
	require.Eventually(t, func() bool { return rcv.counts()[warmID] > 0 }, 60*time.Second, 200*time.Millisecond, "the warm-up event")

	// The outage, and the burst written during it.
	rcv.down()
	downAt := time.Now()
	want := map[string]string{} // delivery id -> event id
	for i := range burst {
		e := event(tenant{ID: tenantID}, fmt.Sprintf("evt_outage_%03d_%s", i, tenantID), "order.created", fmt.Sprintf(`{"n":%d}`, i))
		write(t, e)
		want[domain.DeliveryID(e.TenantID, e.ID, endpointID, e.OccurredAt)] = e.ID
	}
	wrote := time.Since(downAt)
	time.Sleep(time.Until(downAt.Add(outage)))
	rcv.up(t)
	t.Logf("receiver refused connections for %s; the %d events were written in its first %s", time.Since(downAt).Round(100*time.Millisecond), burst, wrote.Round(100*time.Millisecond))

	// Wait until every delivery arrived, or one is dead (terminal: nothing
	// brings it back without a replay), then a little longer so that the
	// figures logged are complete.
	ctx := context.Background()
	var dead []api.DeadLetterView
	missing := func() int {
		got, n := rcv.counts(), 0
		for id := range want {
			if got[id] == 0 {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(bound)
	var firstDead time.Time
	for time.Now().Before(deadline) {
		var err error
		dead, err = harness.ListDead(ctx, client)
		require.NoError(t, err)
		if missing() == 0 {
			break
		}
		if len(dead) > 0 && firstDead.IsZero() {
			firstDead = time.Now()
		}
		if !firstDead.IsZero() && (time.Since(firstDead) > 30*time.Second || missing() <= len(dead)) {
			break
		}
		time.Sleep(2 * time.Second)
	}

	got := rcv.counts()
	var dups []string
	for id, n := range got {
		if n > 1 && want[id] != "" {
			dups = append(dups, fmt.Sprintf("%s x%d", id, n))
		}
	}
	sort.Strings(dups)
	t.Logf("after %s: %d of %d received, %d duplicate receipts %v", time.Since(downAt).Round(time.Second), burst-missing(), burst, len(dups), dups)

	var ep api.EndpointView
	require.NoError(t, client.Do(ctx, "GET", "/v1/endpoints/"+endpointID, nil, &ep))
	states := map[domain.DeliveryState]int{}
	reasons := map[domain.DeadReason]int{}
	var notDelivered []string
	for id := range want {
		var d api.DeliveryView
		require.NoError(t, client.Do(ctx, "GET", "/v1/deliveries/"+id, nil, &d))
		states[d.State]++
		if d.State != domain.StateDelivered {
			reasons[d.DeadReason]++
			notDelivered = append(notDelivered, id)
		}
	}
	deadReasons := map[domain.DeadReason]int{}
	for _, d := range dead {
		deadReasons[d.DeadReason]++
	}
	t.Logf("endpoint disabled %v (%s); delivery states %v, reasons of those not delivered %v; DLQ listing %d %v",
		ep.Disabled, ep.DisabledReason, states, reasons, len(dead), deadReasons)

	require.Zero(t, missing(), "every event of the burst received")
	require.Empty(t, dead, "no delivery dead in the tenant's DLQ listing")
	require.Empty(t, notDelivered, "every delivery's state is delivered")
	require.False(t, ep.Disabled, "the endpoint is still enabled after a short outage (%s)", ep.DisabledReason)
}
