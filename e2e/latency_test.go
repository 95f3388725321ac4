//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLatencyOutboxToPOST writes 20 events one after another and reports the
// time from the outbox write to the POST arriving at the receiver. It asserts
// that every event arrives; the figures are printed, not asserted (the local
// cloud's polling dominates them, and machines are noisy).
func TestLatencyOutboxToPOST(t *testing.T) {
	t.Parallel()
	const n = 20
	rcv := newReceiver(t, status(http.StatusOK))
	tn := newTenant(t, rcv.URL)
	var lat []time.Duration
	for i := 0; i < n; i++ {
		start := write(t, event(tn, fmt.Sprintf("evt_lat_%d_%s", i, tn.ID), "latency.probe", `{"i":1}`))
		got := rcv.waitFor(t, i+1, 30*time.Second)
		lat = append(lat, got[i].At.Sub(start))
	}
	require.Len(t, rcv.requests(), n)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("outbox write -> POST received over %d events: p50 %s, p90 %s, min %s, max %s",
		n, lat[n/2].Round(time.Millisecond), lat[n*9/10].Round(time.Millisecond), lat[0].Round(time.Millisecond), lat[n-1].Round(time.Millisecond))
}
