package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/logging"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// The ids of the log volume measurements: as long as real ones.
const (
	logTenant   = "tenant_01JQ7Z8N4K2M5P6R7S8T9V0W"
	logEndpoint = "ep_01JQ7Z8N4K2M5P6R7S8T9V0W1X2Y"
)

// enqueueLogBytes runs one invocation of n one-endpoint events through the
// handler wired as in production (JSON logs at level, "" for INFO, and EMF,
// both to stdout) and returns what it wrote to stdout.
func enqueueLogBytes(t *testing.T, n int, level string) int {
	t.Helper()
	var out bytes.Buffer
	log, err := logging.New(&out, level)
	require.NoError(t, err)
	s, q := newFakeStore(endpoint(logTenant, logEndpoint)), &fakeQueue{}
	tracer, err := trace.NewTracer("enqueue", &out, "", 0)
	require.NoError(t, err)
	h := &Handler{Store: s, Queue: q, Config: Config{QueueURL: testQueueURL}, Log: log, Metrics: metrics.New(&out), Tracer: tracer}
	var imgs []map[string]events.DynamoDBAttributeValue
	for i := range n {
		imgs = append(imgs, image(fmt.Sprintf("evt_01JQ7Z8N4K2M5P6R7S8T9V0%05d", i), logTenant, nil))
	}
	_, err = h.Handle(context.Background(), streamEvent(imgs...))
	require.NoError(t, err)
	require.Len(t, q.sent(), n)
	return out.Len()
}

// TestLogBytesPerDelivery measures what enqueue writes to stdout per
// delivery of a one-endpoint event (the input "log bytes per delivery" of
// tooling/perf/cost, with deliver's share measured in its own package),
// and holds it to a budget: deliver logs each attempt with the same ids,
// so a successful fan-out logs nothing per delivery at INFO (it took a
// 269-byte "delivery created" line before) but the event's fan-out span:
// a row of the invocation's one line of spans (trace.Rows), about 140
// bytes, where a span line of its own took 329.
func TestLogBytesPerDelivery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n      int
		budget float64
	}{{1, 330}, {10, 180}} {
		b := enqueueLogBytes(t, tc.n, "")
		t.Logf("enqueue, %d one-endpoint events in an invocation: %d bytes, %.1f per delivery", tc.n, b, float64(b)/float64(tc.n))
		require.LessOrEqual(t, float64(b)/float64(tc.n), tc.budget, "the fan-out's span row, nothing else, at INFO")
	}
	require.Positive(t, enqueueLogBytes(t, 1, "DEBUG"), "at DEBUG, each delivery sent is logged")
}

// Rejections are counted in one EMF document per invocation.
func TestRejectionMetricsAreOneDocumentPerInvocation(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
	h := &Handler{Store: s, Queue: q, Config: Config{QueueURL: testQueueURL}, Log: newHandler(s, q).Log, Metrics: metrics.New(&out)}
	bad := func(id string) map[string]events.DynamoDBAttributeValue {
		return image(id, "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: events.NewStringAttribute("{nope")})
	}
	_, err := h.Handle(context.Background(), streamEvent(bad("x1"), image("ok", "t1", nil), bad("x2"), bad("x3")))
	require.NoError(t, err)
	require.Len(t, s.Rejections(), 3)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &doc))
	require.Equal(t, outbox.ReasonInvalidJSON, doc[metrics.DimensionReason])
	require.Equal(t, []any{1.0, 1.0, 1.0}, doc[metrics.RejectedItems], "three values, one per rejection")
}

// A failed invocation prints no metrics: the stream retries it whole, and
// its rejections are counted by the run that succeeds, once.
func TestFailedInvocationCountsNothing(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{fail: true}
	h := &Handler{Store: s, Queue: q, Config: Config{QueueURL: testQueueURL}, Log: newHandler(s, q).Log, Metrics: metrics.New(&out)}
	ev := streamEvent(image("x1", "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: events.NewStringAttribute("{nope")}), image("ok", "t1", nil))
	_, err := h.Handle(context.Background(), ev)
	require.Error(t, err, "the send fails")
	require.Empty(t, out.String(), "no metrics from a failed invocation")

	q.fail = false
	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(out.Bytes()), &doc))
	require.Equal(t, 1.0, doc[metrics.RejectedItems], "the rejection counted once")
}
