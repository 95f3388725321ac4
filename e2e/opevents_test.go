//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

// opEvent is one operational event a receiver got, its signature checked.
type opEvent struct {
	ID   string
	Type string
	Data json.RawMessage
}

// opEvents decodes the receiver's requests, each verified with secret, and
// keeps one per event id (a delivery may be retried).
func opEvents(t *testing.T, rcv *receiver, secret string) []opEvent {
	t.Helper()
	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []opEvent
	for _, r := range rcv.requests() {
		require.NoError(t, v.VerifyRequest(r.Header, r.Body), "signed with the endpoint's secret")
		var body struct {
			ID   string          `json:"id"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &body))
		eventID := r.Header.Get("X-Event-Id")
		if !domain.IsOperational(body.Type) || seen[eventID] {
			continue
		}
		seen[eventID] = true
		out = append(out, opEvent{ID: eventID, Type: body.Type, Data: body.Data})
	}
	return out
}

func ofType(evs []opEvent, typ string) []opEvent {
	var out []opEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// deadCount sums the counts of the delivery.dead events about endpointID.
func deadCount(t *testing.T, evs []opEvent, endpointID string) (sum, notices int) {
	t.Helper()
	for _, e := range ofType(evs, domain.OpDeliveryDead) {
		var p domain.OpDeliveryDeadEvent
		require.NoError(t, json.Unmarshal(e.Data, &p))
		if p.EndpointID == endpointID {
			sum += p.Count
			notices++
		}
	}
	return sum, notices
}

// A receiver that works, then fails until its circuit breaker opens, then
// answers 410 Gone to the breaker's probe so that its endpoint is
// disabled, then works again once the tenant enables it: a second endpoint
// of the tenant, subscribed to the operational events, gets
// endpoint.failing, endpoint.disabled, endpoint.recovered and the deaths'
// delivery.dead summaries, each once and signed with its own secret. The
// failing endpoint subscribes to them too: its own notices fail and count
// toward its failures, yet raise nothing more (no loop), and it is never
// sent endpoint.disabled about itself. (A disable by a long run of failures
// takes days by default; the unit tests and the store's conformance suite
// hold it.)
func TestOperationalEventsReachTheTenant(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "opevents")
	var answer atomic.Int32
	answer.Store(200)
	flaky := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(int(answer.Load())) })
	ops := newReceiver(t, status(200))
	flakyID, flakySecret := apiEndpoint(t, key, flaky.URL+"/flaky", "order.*", "endpoint.*", "delivery.dead")
	opsID, opsSecret := apiEndpoint(t, key, ops.URL+"/ops", "endpoint.*", "delivery.dead")

	write(t, event(tenant{ID: tenantID}, "evt_ok_"+tenantID, "order.created", `{"n":0}`))
	flaky.waitFor(t, 1, 30*time.Second)

	// Degrade, then fail: 15 events' attempts reach the failing threshold
	// (10): the breaker opens and the rest wait.
	answer.Store(503)
	const failed = 15
	for i := range failed {
		write(t, event(tenant{ID: tenantID}, fmt.Sprintf("evt_fail_%d_%s", i, tenantID), "order.created", `{"n":1}`))
	}
	require.Eventually(t, func() bool {
		return len(ofType(opEvents(t, ops, opsSecret), domain.OpEndpointFailing)) == 1
	}, 60*time.Second, time.Second, "endpoint.failing when the breaker opens")
	status, body := call(t, "GET", "/v1/endpoints/"+flakyID, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	health, _ := body["health"].(map[string]any)
	breaker, _ := health["breaker"].(map[string]any)
	require.Contains(t, []any{"open", "half_open"}, breaker["state"], "the breaker shows in the endpoint's health: %v", health)

	// Gone: the probe's 410 disables the endpoint, and every waiting
	// delivery dies with it.
	answer.Store(410)
	require.Eventually(t, func() bool {
		evs := opEvents(t, ops, opsSecret)
		sum, _ := deadCount(t, evs, flakyID)
		return len(ofType(evs, domain.OpEndpointDisabled)) == 1 && sum == failed
	}, 120*time.Second, time.Second, "endpoint.disabled, and every death summed up")
	evs := opEvents(t, ops, opsSecret)
	require.Len(t, ofType(evs, domain.OpEndpointFailing), 1, "failing once per episode")
	var disabled domain.OpEndpointEvent
	require.NoError(t, json.Unmarshal(ofType(evs, domain.OpEndpointDisabled)[0].Data, &disabled))
	require.Equal(t, flakyID, disabled.EndpointID)
	require.Equal(t, domain.DisabledEndpointGone, disabled.Reason)
	require.Equal(t, 410, disabled.LastStatus)
	for _, e := range opEvents(t, flaky, flakySecret) {
		require.NotEqual(t, domain.OpEndpointDisabled, e.Type, "never sent to the disabled endpoint it describes")
	}

	// Recover: the tenant enables the endpoint, and a delivery succeeds.
	answer.Store(200)
	status, body = call(t, "POST", "/v1/endpoints/"+flakyID+"/enable", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	write(t, event(tenant{ID: tenantID}, "evt_back_"+tenantID, "order.created", `{"n":2}`))
	require.Eventually(t, func() bool {
		return len(ofType(opEvents(t, ops, opsSecret), domain.OpEndpointRecovered)) == 1
	}, 60*time.Second, time.Second, "endpoint.recovered after the enable and a success")

	// Nothing more: no loop of notices about notices, each transition once,
	// and the deaths counted are the business events' only.
	time.Sleep(8 * time.Second)
	evs = opEvents(t, ops, opsSecret)
	for _, typ := range []string{domain.OpEndpointFailing, domain.OpEndpointDisabled, domain.OpEndpointRecovered} {
		require.Len(t, ofType(evs, typ), 1, typ)
	}
	sum, _ := deadCount(t, evs, flakyID)
	require.Equal(t, failed, sum, "the flaky endpoint's own operational events that died raised no delivery.dead")
	_, opsNotices := deadCount(t, evs, opsID)
	require.Zero(t, opsNotices)
}

// A storm of deaths is a bounded number of notifications: 100 deliveries
// dying within seconds on one endpoint are a few delivery.dead summaries,
// one per 5 s window (the local window), whose counts add up to 100.
func TestDeathStormIsCoalesced(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "storm")
	sink, ops := newReceiver(t, status(400)), newReceiver(t, status(200))
	sinkID, _ := apiEndpoint(t, key, sink.URL+"/sink", "order.*")
	_, opsSecret := apiEndpoint(t, key, ops.URL+"/ops", "delivery.dead")
	const storm = 100
	start := time.Now()
	for i := range storm {
		write(t, event(tenant{ID: tenantID}, fmt.Sprintf("evt_storm_%d_%s", i, tenantID), "order.created", `{"n":1}`))
	}
	var sum, notices int
	require.Eventually(t, func() bool {
		sum, notices = deadCount(t, opEvents(t, ops, opsSecret), sinkID)
		return sum == storm
	}, 120*time.Second, time.Second, "every death summed up")
	span := time.Since(start)
	bound := int(math.Ceil(span.Seconds()/5)) + 1
	t.Logf("%d deaths in %s: %d delivery.dead notifications (bound %d)", storm, span.Round(time.Second), notices, bound)
	require.LessOrEqual(t, notices, bound, "one notification per window at most")
	require.Less(t, notices, storm/5)
}
