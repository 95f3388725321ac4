package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// spans are the spans in buf, in order, each as a map: the span lines
// and rows lines (trace.ParseLine: enqueue's fan-outs, deliver's
// delivered attempts; "msg" is "span" or "spans", their attributes merged
// in) and the lines that stand for a span (deliver's other attempt lines,
// "span":"deliver.attempt"), the first of each span id.
func spans(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	seen := map[any]bool{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		if parsed := trace.ParseLine([]byte(l)); len(parsed) > 0 {
			for _, s := range parsed {
				sm := map[string]any{"msg": m["msg"], "name": s.Name, "trace_id": s.TraceID, "span_id": s.SpanID}
				if s.ParentSpanID != "" {
					sm["parent_span_id"] = s.ParentSpanID
				}
				for k, v := range s.Attributes {
					sm[k] = v
				}
				seen[s.SpanID] = true
				out = append(out, sm)
			}
			continue
		}
		if m["span"] == nil || seen[m["span_id"]] {
			continue
		}
		m["name"] = m["span"]
		seen[m["span_id"]] = true
		out = append(out, m)
	}
	return out
}

// enqueued runs the outbox event img through the enqueue handler (on the
// fixture's store, a fake SQS) and returns its delivery messages as the
// deliver function receives them, attributes included.
func enqueued(t *testing.T, f *fixture, buf *bytes.Buffer, img map[string]events.DynamoDBAttributeValue) []events.SQSMessage {
	t.Helper()
	q := sqsfake.New(sqsfake.Config{})
	eh := &enqueue.Handler{Store: f.store.Store, Queue: q, Config: enqueue.Config{QueueURL: "https://sqs.example/q"}, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)),
		Tracer: &trace.Tracer{Service: "enqueue", Out: buf}}
	_, err := eh.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		{EventName: "INSERT", Change: events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: "1"}},
	}})
	require.NoError(t, err)
	var out []events.SQSMessage
	for i, m := range q.Messages("https://sqs.example/q") {
		attrs := map[string]events.SQSMessageAttribute{}
		for k, v := range m.Attributes {
			attrs[k] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue}
		}
		require.LessOrEqual(t, len(m.Attributes), message.MaxAttributes)
		out = append(out, events.SQSMessage{MessageId: m.ID, ReceiptHandle: "rh" + string(rune('a'+i)), Body: m.Body, MessageAttributes: attrs,
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	return out
}

func outboxImage(id, traceParent string) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{
		outbox.AttrID: events.NewStringAttribute(id), outbox.AttrTenantID: events.NewStringAttribute("t1"),
		outbox.AttrType: events.NewStringAttribute("order.created"), outbox.AttrPayload: events.NewStringAttribute(`{"n":1}`),
		outbox.AttrOccurredAt: events.NewStringAttribute("2026-11-30T11:59:59Z"),
	}
	if traceParent != "" {
		img[outbox.AttrTraceParent] = events.NewStringAttribute(traceParent)
	}
	return img
}

// The producer's trace id reaches the receiver through enqueue, the
// queue's message and every attempt: each attempt a span of its own, the
// child of enqueue's fan-out span, and the receiver's traceparent that
// span's context.
func TestTraceFromOutboxToReceiver(t *testing.T) {
	t.Parallel()
	const producer = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, given := range []string{producer, "", "00-not-a-trace\r\nX-Evil: 1"} {
		var mu sync.Mutex
		var got []string
		n := 0
		f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.Header.Get("traceparent"))
			require.Empty(t, r.Header.Get("X-Evil"))
			if n++; n == 1 {
				w.WriteHeader(503) // the first attempt fails, the second delivers
				return
			}
			w.WriteHeader(200)
		})
		var buf bytes.Buffer
		f.h.Tracer = &trace.Tracer{Service: "deliver", Out: &buf}
		f.h.Log = slog.New(slog.NewJSONHandler(&buf, nil))
		msgs := enqueued(t, f, &buf, outboxImage("evt_tr", given))
		require.Len(t, msgs, 1)
		require.Empty(t, f.run(t, msgs[0]), "503: retried, as a new message")
		require.Empty(t, f.run(t, f.dueRetry(t, "tr2")))

		all := spans(t, &buf)
		require.Len(t, all, 3, "fan-out, two attempts")
		fan, a1, a2 := all[0], all[1], all[2]
		require.Equal(t, "enqueue.fanout", fan["name"])
		traceID := fan["trace_id"].(string)
		if given == producer {
			require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", traceID)
			require.Equal(t, "00f067aa0ba902b7", fan["parent_span_id"])
		} else {
			require.NotContains(t, fan, "parent_span_id", "a trace of hookline's starts at enqueue")
		}
		require.Len(t, got, 2)
		for i, a := range []map[string]any{a1, a2} {
			require.Equal(t, "deliver.attempt", a["name"])
			require.Equal(t, traceID, a["trace_id"])
			require.Equal(t, fan["span_id"], a["parent_span_id"], "the attempt's parent is the fan-out")
			rc, ok := trace.Parse(got[i])
			require.True(t, ok, "the receiver's traceparent %q", got[i])
			require.Equal(t, traceID, rc.TraceIDHex())
			require.Equal(t, a["span_id"], rc.SpanIDHex(), "the receiver's parent is the attempt's span")
		}
		require.NotEqual(t, a1["span_id"], a2["span_id"], "each attempt a span of its own")
		// A failed attempt's own line is its span's: outcome, class,
		// status, latency, with its ids; a delivered one's span is a row
		// of its batch's line, with its ids and status.
		require.Equal(t, "retry scheduled", a1["msg"])
		require.Equal(t, "retry", a1["outcome"])
		require.Equal(t, "http_5xx", a1["class"])
		require.Equal(t, 503.0, a1["status"])
		require.Contains(t, a1, "latency_ms")
		require.Equal(t, traceID, a1["trace_id"])
		require.Equal(t, "spans", a2["msg"])
		require.Equal(t, 200.0, a2["status"])
		require.Equal(t, 2.0, a2["attempt"])
		require.Equal(t, "t1", a2["tenant_id"])
	}
}

// A dead delivery's DLQ copy keeps its trace context, in its body and as
// the third of its attributes; a deferral's message keeps it too.
func TestDLQCopyKeepsTheTrace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) })
	var buf bytes.Buffer
	msgs := enqueued(t, f, &buf, outboxImage("evt_dead", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	require.Empty(t, f.run(t, msgs[0]))
	require.Len(t, f.queue.dlq, 1)
	dead, err := message.Decode(f.queue.dlq[0])
	require.NoError(t, err)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", trace.Or(dead.TraceParent, trace.Context{}).TraceIDHex())
	require.Equal(t, dead.TraceParent, f.queue.dlqTrace[0])
}
