package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// spanLines are the spans of the lines written to buf (span lines and
// rows lines: trace.ParseLine).
func spanLines(t *testing.T, buf *bytes.Buffer) []trace.LineSpan {
	t.Helper()
	var out []trace.LineSpan
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		require.True(t, json.Valid([]byte(l)), l)
		out = append(out, trace.ParseLine([]byte(l))...)
	}
	return out
}

func TestFanOutCarriesTheProducersTrace(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	s := newFakeStore(endpoint("t1", "ep1"), endpoint("t1", "ep2"))
	q := &fakeQueue{}
	h := newHandler(s, q)
	var buf bytes.Buffer
	h.Tracer = &trace.Tracer{Service: "enqueue", Out: &buf}
	given := image("e1", "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrTraceParent: events.NewStringAttribute(tp)})
	hostile := image("e2", "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrTraceParent: events.NewStringAttribute("00-ZZ\n<script>")})
	wrongType := image("e3", "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrTraceParent: events.NewNumberAttribute("7")})
	_, err := h.Handle(context.Background(), streamEvent(given, hostile, wrongType))
	require.NoError(t, err, "a malformed traceparent is ignored, never a failure")
	require.Len(t, q.sent(), 6, "none rejected for its traceparent")

	spans := spanLines(t, &buf)
	require.Len(t, spans, 3, "one fan-out span per event")
	require.Equal(t, 1, strings.Count(buf.String(), "\n"), "the invocation's fan-outs in one line")
	byEvent := map[string]trace.LineSpan{}
	for _, sp := range spans {
		require.Equal(t, "enqueue.fanout", sp.Name)
		require.Equal(t, true, sp.Attributes["sent"])
		byEvent[sp.Attributes["event_id"].(string)] = sp
	}
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", byEvent["e1"].TraceID)
	require.Equal(t, "00f067aa0ba902b7", byEvent["e1"].ParentSpanID, "the producer's span is the fan-out's parent")
	require.Equal(t, 2.0, byEvent["e1"].Attributes["deliveries"])
	at := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	for _, id := range []string{"e2", "e3"} {
		require.Equal(t, trace.Derive(trace.EventKey("t1", id), at).TraceIDHex(), byEvent[id].TraceID, "a trace of hookline's, derived from the event")
		require.Empty(t, byEvent[id].ParentSpanID)
	}

	for _, m := range q.fake().Messages(testQueueURL) {
		body, err := message.Decode(m.Body)
		require.NoError(t, err)
		c, ok := trace.Parse(body.TraceParent)
		require.True(t, ok, body.TraceParent)
		sp := byEvent[body.EventID]
		require.Equal(t, sp.TraceID, c.TraceIDHex())
		require.Equal(t, sp.SpanID, c.SpanIDHex(), "the message's parent is the fan-out span")
		require.Len(t, m.Attributes, 1, "one message attribute of SQS's ten")
		require.Equal(t, body.TraceParent, aws.ToString(m.Attributes[message.TraceAttribute].StringValue))
	}
}

func TestTraceIsTheSameWhenTheBatchIsProcessedAgain(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep1"))
	q := &fakeQueue{}
	h := newHandler(s, q)
	for range 2 {
		_, err := h.Handle(context.Background(), streamEvent(image("e1", "t1", nil)))
		require.NoError(t, err)
	}
	sent := q.sent()
	require.Len(t, sent, 2)
	a, _ := trace.Parse(sent[0].TraceParent)
	b, _ := trace.Parse(sent[1].TraceParent)
	require.Equal(t, a.TraceID, b.TraceID, "derived from the event: one trace however often enqueue runs")
}
