//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// TestRateLimitHoldsEndToEnd writes 300 events at once for an endpoint
// limited to 10 requests per second: all 300 arrive, once each, and the
// receiver never sees more than the limit begin in one second of its
// clock (a request of tolerance for the time between the send and the
// arrival), nor more than the limit on average. The rates seen are
// printed.
func TestRateLimitHoldsEndToEnd(t *testing.T) {
	t.Parallel()
	const n, limit = 300, 10
	rcv := newReceiver(t, status(http.StatusOK))
	tn := newTenant(t, rcv.URL)
	rl := limit
	ep, err := env.store.UpdateEndpoint(context.Background(), tn.ID, "ep_1", store.EndpointChange{RateLimit: &rl})
	require.NoError(t, err)
	require.Equal(t, limit, ep.RateLimit)

	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			write(t, event(tn, fmt.Sprintf("evt_rl_%d_%s", i, tn.ID), "rate.probe", `{"i":1}`))
		}()
	}
	wg.Wait()
	rcv.waitFor(t, n, 4*time.Minute)
	time.Sleep(3 * time.Second) // none more should come
	got := rcv.requests()
	require.Len(t, got, n, "each delivered once")
	ids := map[string]bool{}
	for _, r := range got {
		ids[r.Header.Get("Webhook-Id")] = true
		require.Equal(t, "1", r.Header.Get("X-Attempt"), "waiting for the limit is no attempt")
	}
	require.Len(t, ids, n)

	at := make([]time.Time, len(got))
	for i, r := range got {
		at[i] = r.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	perSecond := map[time.Time]int{}
	aligned := 0
	for _, a := range at {
		s := a.Truncate(time.Second)
		perSecond[s]++
		aligned = max(aligned, perSecond[s])
	}
	sliding := 0
	for i := range at {
		j := sort.Search(len(at), func(k int) bool { return !at[k].Before(at[i].Add(time.Second)) })
		sliding = max(sliding, j-i)
	}
	span := at[n-1].Sub(at[0])
	overall := float64(n-1) / span.Seconds()
	t.Logf("%d events to an endpoint limited to %d/s: arrived over %s, overall %.2f/s; most in one clock second %d, in any one-second window %d",
		n, limit, span.Round(time.Millisecond), overall, aligned, sliding)
	require.LessOrEqual(t, aligned, limit+1, "requests begun in one second (the limiter's window), one of tolerance for send-to-arrival time")
	require.LessOrEqual(t, overall, float64(limit)*1.05, "the overall rate")
	require.LessOrEqual(t, sliding, limit+2, "any one-second window: two of tolerance for send-to-arrival time")

	// Waiting was no failed attempt: every delivery delivered at its first.
	d, err := env.store.Delivery(context.Background(), deliveryID(t, fmt.Sprintf("evt_rl_%d_%s", n-1, tn.ID), "ep_1"))
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, d.State)
	require.Equal(t, 1, d.Attempts)
}
