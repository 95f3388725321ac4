package deliver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/logging"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/trace"
	"github.com/stretchr/testify/require"
)

// deliverLogBytes runs one invocation of n messages, each delivered on its
// first attempt (or, with status, answered with it), through the handler
// wired as in production (JSON logs at INFO and EMF, both to stdout), with
// ids as long as real ones, and returns what it wrote to stdout.
func deliverLogBytes(t *testing.T, n, status int, attempt string) int {
	t.Helper()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
	const tenant, ep = "tenant_01JQ7Z8N4K2M5P6R7S8T9V0W", "ep_01JQ7Z8N4K2M5P6R7S8T9V0W1X2Y"
	e := f.store.endpoint("t1/ep_1")
	e.TenantID, e.EndpointID = tenant, ep
	e.SealedSecrets = []string{f.seal(t, tenant, ep, f.secret)} // a secret is sealed for its endpoint
	f.store.setEndpoint(e)
	var out bytes.Buffer
	log, err := logging.New(&out, "")
	require.NoError(t, err)
	f.h.Log, f.h.Metrics = log, metrics.New(&out)
	f.h.Tracer, err = trace.NewTracer("deliver", &out, "", 0)
	require.NoError(t, err)
	var msgs []events.SQSMessage
	for i := range n {
		event := fmt.Sprintf("evt_01JQ7Z8N4K2M5P6R7S8T9V0%05d", i)
		id := domain.DeliveryID(event, ep)
		body, err := json.Marshal(message.Message{
			DeliveryID: id, TenantID: tenant, EndpointID: ep, EventID: event, EventType: "order.created",
			OccurredAt: f.now.Add(-time.Second), Payload: json.RawMessage(`{"n":1}`),
		})
		require.NoError(t, err)
		msgs = append(msgs, events.SQSMessage{
			MessageId: fmt.Sprintf("0b1c2d3e-4f50-6172-8394-a5b6c7d8%04d", i), ReceiptHandle: "rh_" + id, Body: string(body),
			Attributes: map[string]string{"ApproximateReceiveCount": attempt},
		})
	}
	f.run(t, msgs...)
	for _, m := range msgs {
		var msg message.Message
		require.NoError(t, json.Unmarshal([]byte(m.Body), &msg))
		require.Len(t, f.store.outcomes[msg.DeliveryID], 1)
	}
	if testing.Verbose() && n == 1 {
		t.Log(out.String())
	}
	return out.Len()
}

// TestLogBytesPerDelivery measures what deliver writes to stdout per
// delivery delivered on its first attempt, and per retried attempt (the
// input "log bytes per delivery" of tooling/perf/cost, with enqueue's
// share measured in its own package), and holds them to a budget: one INFO
// line per attempt, which is also the attempt's span (trace_id, span,
// span_id, parent_span_id and class: about 120 bytes since traces were
// added; the budgets were 650, 450, 750 and 500 before them; a span line
// of its own would have been about 290 more), and the metrics of the
// whole batch in one EMF document.
// Before the batch's metrics were gathered (one EMF line per message and
// metric), a delivery took 736 bytes, a retried attempt 941.
func TestLogBytesPerDelivery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, status int
		budget    float64 // bytes per message
	}{
		{1, 200, 750}, {10, 200, 550},
		{1, 503, 850}, {10, 503, 650},
	} {
		b := deliverLogBytes(t, tc.n, tc.status, "1")
		per := float64(b) / float64(tc.n)
		t.Logf("deliver, %d messages answered %d in an invocation: %d bytes, %.1f per message", tc.n, tc.status, b, per)
		require.LessOrEqual(t, per, tc.budget)
	}
}
