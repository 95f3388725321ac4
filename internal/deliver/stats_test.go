package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		res  sender.Result
		want domain.AttemptClass
	}{
		{sender.Result{Outcome: sender.Delivered, Status: 204}, domain.ClassDelivered},
		{sender.Result{Outcome: sender.Retry, Error: "timeout"}, domain.ClassTimeout},
		{sender.Result{Outcome: sender.Retry, Error: "dns"}, domain.ClassNetwork},
		{sender.Result{Outcome: sender.Retry, Error: "connection_refused"}, domain.ClassNetwork},
		{sender.Result{Outcome: sender.Retry, Error: "tls"}, domain.ClassNetwork},
		{sender.Result{Outcome: sender.Dead, Error: "forbidden_address", Reason: domain.ReasonForbiddenAddress}, domain.ClassRefused},
		{sender.Classify(429, "", time.Time{}), domain.ClassHTTP429},
		{sender.Classify(408, "", time.Time{}), domain.ClassHTTP4xx},
		{sender.Classify(410, "", time.Time{}), domain.ClassHTTP4xx},
		{sender.Classify(500, "", time.Time{}), domain.ClassHTTP5xx},
		{sender.Classify(503, "", time.Time{}), domain.ClassHTTP5xx},
		{sender.Classify(302, "", time.Time{}), domain.ClassHTTPOther},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.res.Status, tc.res.Error), func(t *testing.T) {
			require.Equal(t, tc.want, Classify(tc.res))
		})
	}
}

// countingCounters counts the counter writes per endpoint (writes, got)
// and per endpoint and event type (typeWrites, typeGot), and can fail
// them.
type countingCounters struct {
	mu         sync.Mutex
	writes     map[string]int
	got        map[string]domain.AttemptStats
	typeWrites map[string]int
	typeGot    map[string]domain.AttemptStats
	fail       bool
}

func (c *countingCounters) AddEndpointTypeStats(_ context.Context, tenantID, endpointID, eventType string, _ time.Time, st domain.AttemptStats) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return errBoom
	}
	if c.typeWrites == nil {
		c.typeWrites, c.typeGot = map[string]int{}, map[string]domain.AttemptStats{}
	}
	k := tenantID + "/" + endpointID + "/" + eventType
	c.typeWrites[k]++
	c.typeGot[k] = st
	return nil
}

func (c *countingCounters) AddEndpointStats(_ context.Context, tenantID, endpointID string, _ time.Time, st domain.AttemptStats) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return errBoom
	}
	if c.writes == nil {
		c.writes, c.got = map[string]int{}, map[string]domain.AttemptStats{}
	}
	k := tenantID + "/" + endpointID
	c.writes[k]++
	c.got[k] = st
	return nil
}

// messageTo is a delivery message of t1's to endpoint, of an
// order.created event.
func messageTo(t *testing.T, id, endpoint string, occurred time.Time) events.SQSMessage {
	t.Helper()
	return typedMessageTo(t, id, endpoint, "order.created", occurred)
}

// typedMessageTo is a delivery message of t1's to endpoint, of an event of
// eventType.
func typedMessageTo(t *testing.T, id, endpoint, eventType string, occurred time.Time) events.SQSMessage {
	t.Helper()
	body, err := json.Marshal(message.Message{
		DeliveryID: id, TenantID: "t1", EndpointID: endpoint, EventID: "evt_" + id, EventType: eventType,
		OccurredAt: occurred, Payload: json.RawMessage(`{"n":1}`),
	})
	require.NoError(t, err)
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
}

// twoEndpoints is a fixture whose ep_1 answers 200 and whose ep_2 (on a
// second receiver) answers 503, with the counters counted.
func twoEndpoints(t *testing.T) (*fixture, *countingCounters) {
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(failing.Close)
	f.store.setEndpoint(domain.Endpoint{TenantID: "t1", EndpointID: "ep_2", URL: failing.URL, SealedSecrets: []string{f.seal(t, "t1", "ep_2", f.secret)}})
	c := &countingCounters{}
	f.withPorts(func(p *testPorts) { p.Counters = c })
	return f, c
}

// A batch's attempts are counted per endpoint and written once per
// endpoint at the batch's end: ten attempts, two endpoints, two writes.
func TestCountersAreOneWritePerEndpointPerBatch(t *testing.T) {
	t.Parallel()
	f, c := twoEndpoints(t)
	var msgs []events.SQSMessage
	for i := range 10 {
		ep := "ep_1"
		if i%3 == 0 {
			ep = "ep_2"
		}
		msgs = append(msgs, messageTo(t, fmt.Sprintf("d%d", i), ep, f.now))
	}
	failed := f.run(t, msgs...)
	require.Empty(t, failed)
	require.Len(t, f.queue.requeued, 4, "ep_2's four 503s come back, as new messages")
	require.Equal(t, map[string]int{"t1/ep_1": 1, "t1/ep_2": 1}, c.writes)

	ok, bad := c.got["t1/ep_1"], c.got["t1/ep_2"]
	require.Equal(t, int64(6), ok.Attempts)
	require.Equal(t, int64(6), ok.Delivered)
	require.Empty(t, ok.Failures)
	require.True(t, ok.LastSuccessAt.Equal(f.now))
	require.Nil(t, ok.LastFailure)
	require.Equal(t, int64(4), bad.Attempts)
	require.Zero(t, bad.Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: 4}, bad.Failures)
	require.Equal(t, 503, bad.LastFailure.Status)
	require.Equal(t, "http_503", bad.LastFailure.Error)
	var latencies int64
	for _, n := range bad.Latency {
		latencies += n
	}
	require.Equal(t, int64(4), latencies, "every attempt's latency is in the histogram")

	// The next batch writes again: once per batch, not once per handler.
	f.run(t, messageTo(t, "d10", "ep_1", f.now))
	require.Equal(t, 2, c.writes["t1/ep_1"])
}

// A counter write that fails is logged and counted; the batch's messages
// are handled exactly as they are without counters.
func TestCounterWriteFailureChangesNoMessage(t *testing.T) {
	t.Parallel()
	f, c := twoEndpoints(t)
	c.fail = true
	var out, log bytes.Buffer
	f.h.Metrics = metrics.New(&out)
	f.h.Log = slog.New(slog.NewJSONHandler(&log, nil))
	failed := f.run(t, messageTo(t, "d1", "ep_1", f.now), messageTo(t, "d2", "ep_2", f.now))
	require.Empty(t, failed)
	require.Len(t, f.queue.requeued, 1, "d2's 503 comes back, as a new message")
	require.Equal(t, domain.StateDelivered, f.store.outcomes["d1"][0].State)
	require.Equal(t, domain.StatePending, f.store.outcomes["d2"][0].State)
	got := emfMetrics(t, out.String())
	n := 0
	for _, m := range got {
		if m == metrics.StatsWriteFailed {
			n++
		}
	}
	require.Equal(t, 4, n, "one failed write per endpoint, one per endpoint and type: %v", got)
	require.Equal(t, 4, strings.Count(log.String(), "cannot write the endpoint's attempt counters"))
}

// A batch's attempts are counted per endpoint and event type too, and
// written once per endpoint and type at the batch's end: ten attempts of
// two types to two endpoints, three writes by type (besides the two by
// endpoint).
func TestCountersByTypeAreOneWritePerEndpointAndTypePerBatch(t *testing.T) {
	t.Parallel()
	f, c := twoEndpoints(t)
	var msgs []events.SQSMessage
	for i := range 10 {
		ep, typ := "ep_1", "order.created"
		switch {
		case i%3 == 0:
			ep = "ep_2"
		case i%2 == 0:
			typ = "order.paid"
		}
		msgs = append(msgs, typedMessageTo(t, fmt.Sprintf("d%d", i), ep, typ, f.now))
	}
	f.run(t, msgs...)
	require.Equal(t, map[string]int{"t1/ep_1": 1, "t1/ep_2": 1}, c.writes)
	require.Equal(t, map[string]int{"t1/ep_1/order.created": 1, "t1/ep_1/order.paid": 1, "t1/ep_2/order.created": 1}, c.typeWrites)
	created, paid, failing := c.typeGot["t1/ep_1/order.created"], c.typeGot["t1/ep_1/order.paid"], c.typeGot["t1/ep_2/order.created"]
	require.Equal(t, int64(3), created.Attempts, "d1, d5, d7")
	require.Equal(t, created.Attempts, created.Delivered)
	require.Equal(t, int64(3), paid.Attempts, "d2, d4, d8")
	require.Equal(t, int64(4), failing.Attempts)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: 4}, failing.Failures)
	require.Equal(t, c.got["t1/ep_2"].Latency, failing.Latency, "the one type's histogram is the endpoint's")
}

// An attempt the SSRF guard refuses is counted in its own class.
func TestRefusedAttemptsAreCountedApart(t *testing.T) {
	t.Parallel()
	f, c := twoEndpoints(t)
	f.store.setEndpoint(domain.Endpoint{TenantID: "t1", EndpointID: "ep_3", URL: "http://10.0.0.1/hook", SealedSecrets: []string{f.seal(t, "t1", "ep_3", f.secret)}})
	f.run(t, messageTo(t, "d1", "ep_3", f.now))
	st := c.got["t1/ep_3"]
	require.Equal(t, int64(1), st.Attempts)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassRefused: 1}, st.Failures)
	require.Equal(t, "forbidden_address", st.LastFailure.Error)
}

// statsFirst writes the counters and lets the record writes through only
// once they are written.
type statsFirst struct {
	Counters
	once    sync.Once
	written chan struct{}
}

func (s *statsFirst) AddEndpointStats(ctx context.Context, tenantID, endpointID string, hour time.Time, st domain.AttemptStats) error {
	defer s.once.Do(func() { close(s.written) })
	return s.Counters.AddEndpointStats(ctx, tenantID, endpointID, hour, st)
}

type recordsAfterStats struct {
	Attempts
	written chan struct{}
}

func (r recordsAfterStats) RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	select {
	case <-r.written:
	case <-time.After(10 * time.Second):
		return errors.New("the counters were not written while the records were")
	}
	return r.Attempts.RecordAttempt(ctx, d, a, o)
}

// A batch's counters are written as soon as every attempt is counted,
// beside its record writes, not after them: a clean batch's DynamoDB calls
// are two round trips (its read; its records and counters), not three
// (issue 37). Here the records wait for the counters: were the counters
// written after the records, nothing would be recorded.
func TestCountersAreWrittenBesideTheRecords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	written := make(chan struct{})
	f.withPorts(func(p *testPorts) {
		p.Counters = &statsFirst{Counters: p.Counters, written: written}
		p.Attempts = recordsAfterStats{Attempts: p.Attempts, written: written}
	})
	var msgs []events.SQSMessage
	for i := range 10 {
		msgs = append(msgs, sqsMessage(t, "d"+strconv.Itoa(i), "1", f.now))
	}
	require.Empty(t, f.run(t, msgs...))
	for i := range 10 {
		f.store.mu.Lock()
		got := f.store.outcomes["d"+strconv.Itoa(i)]
		f.store.mu.Unlock()
		require.Equal(t, []domain.Outcome{{State: domain.StateDelivered}}, got)
	}
}

// With StatsFlushEvery, an instance writes an endpoint's counters once
// per interval however many batches it works (issue 37: a batch of one
// paid two write units for its counters): the first batch after a quiet
// interval at once, the next ones kept and merged, written by the first
// batch past the interval or at shutdown (FlushStats, on SIGTERM). No
// attempt is lost from the counts.
func TestCountersAreKeptAndWrittenOncePerInterval(t *testing.T) {
	t.Parallel()
	f, c := twoEndpoints(t)
	f.h.Config.StatsFlushEvery = 10 * time.Second
	writes := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.writes["t1/ep_1"]
	}
	attempts := int64(0)
	batch := func(id string) {
		t.Helper()
		require.Empty(t, f.run(t, messageTo(t, id, "ep_1", f.now)))
		c.mu.Lock()
		attempts += c.got["t1/ep_1"].Attempts
		c.got["t1/ep_1"] = domain.AttemptStats{}
		c.mu.Unlock()
	}
	batch("d1")
	require.Equal(t, 1, writes(), "the first batch after a quiet interval: at once")
	require.Equal(t, int64(1), attempts)
	for i, after := range []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second} {
		f.now = f.now.Add(after)
		batch(fmt.Sprintf("d%d", i+2))
	}
	require.Equal(t, 1, writes(), "kept within the interval")
	f.now = f.now.Add(2 * time.Second)
	batch("d5")
	require.Equal(t, 2, writes(), "the first batch past the interval writes what was kept, merged")
	require.Equal(t, int64(5), attempts)
	c.mu.Lock()
	typed := c.typeWrites["t1/ep_1/order.created"]
	c.mu.Unlock()
	require.Equal(t, 2, typed, "the counters by event type alike")

	f.now = f.now.Add(time.Second)
	batch("d6")
	require.Equal(t, 2, writes())
	f.h.FlushStats(context.Background())
	require.Equal(t, 3, writes(), "what is kept is written at shutdown")
	c.mu.Lock()
	attempts += c.got["t1/ep_1"].Attempts
	c.mu.Unlock()
	require.Equal(t, int64(6), attempts, "every attempt counted once")
	f.h.FlushStats(context.Background())
	require.Equal(t, 3, writes(), "nothing kept, nothing written")
}
