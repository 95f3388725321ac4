package sender_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/tooling/perf/ratio"
)

// attemptOp is one attempt as deliver makes it, Send and the attempt's
// INFO line (JSON, to io.Discard as the function writes it to stdout);
// with tracing, as deliver does it with traces: the attempt's span started
// under the message's context, its traceparent sent as the header, its
// name and ids on the attempt's line (which stands for the span), and,
// with xray, its segment sent to a UDP listener standing in for the X-Ray
// daemon (whose reads count in the process's CPU time, as the daemon's do
// in Lambda's execution environment).
func attemptOp(b *testing.B, url string, tracing, xray bool) func() {
	_, signer := newSecret(b)
	client := newClient(b)
	req := newRequest(url, signer)
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	tr := &trace.Tracer{Service: "deliver"}
	if xray {
		tr.XRay = daemon(b)
	}
	parent, _ := trace.Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	return func() {
		// As deliver's begin, send and observe make the attempt's logger.
		ids := []any{"delivery_id", req.DeliveryID, "attempt", req.Attempt}
		var span *trace.Span
		if tracing {
			ids = append(ids, "trace_id", parent.TraceIDHex())
			span = tr.Start(parent, "deliver.attempt")
			req.TraceParent = span.TraceParent()
		}
		l := log.With(ids...)
		res := client.Send(ctx, req)
		if res.Outcome != sender.Delivered {
			b.Fatalf("%+v", res)
		}
		if tracing {
			span.EndSegment(slog.String("delivery_id", req.DeliveryID), slog.Int("attempt", req.Attempt),
				slog.String("outcome", res.Outcome.String()), slog.String("class", "delivered"), slog.Int("status", res.Status))
		}
		fields := append(span.LineFields(), "outcome", res.Outcome.String(), "class", "delivered", "status", res.Status, "latency_ms", res.Latency.Milliseconds())
		l.With(fields...).InfoContext(ctx, "delivered")
	}
}

// daemon is a UDP listener that reads and drops datagrams, as the X-Ray
// daemon would, and the XRay client sending to it.
func daemon(b *testing.B) *trace.XRay {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	x, err := trace.DialXRay(pc.LocalAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// BenchmarkTracedSendVsSend measures deliver's attempt with tracing on
// (/logs: the trace ids on its line and the traceparent header; /xray: and
// the X-Ray segment) against the same attempt with tracing off, in the
// same run. Printed, never asserted.
func BenchmarkTracedSendVsSend(b *testing.B) {
	srv := benchServer(b)
	for _, tc := range []struct {
		name string
		xray bool
	}{{"logs", false}, {"xray", true}} {
		b.Run(tc.name, func(b *testing.B) {
			ratio.Compare(b, "traced", attemptOp(b, srv.URL, true, tc.xray), "send", attemptOp(b, srv.URL, false, false))
		})
	}
}

// BenchmarkTracedSendVsBarePost is Send with tracing on (trace ids and
// X-Ray) against a bare POST: the deliver path's target (time-x <= 1.3,
// allocs-x <= 1.5, as BenchmarkSendVsBarePost), the attempt's line apart;
// /default-rate with the X-Ray share a deployment has unless told
// otherwise (DefaultTracingSampleRate, each attempt in a trace of its
// own), /every-trace with every trace's segment sent (a sample rate of 1).
func BenchmarkTracedSendVsBarePost(b *testing.B) {
	srv := benchServer(b)
	for _, tc := range []struct {
		name string
		rate float64
	}{{"default-rate", domain.DefaultTracingSampleRate}, {"every-trace", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			ratio.Compare(b, "traced", tracedSendOp(b, srv.URL, tc.rate), "bare", bareOp(b, srv.URL))
		})
	}
}

// tracedSendOp is sendOp with tracing on: the span, its header, its
// segment to a stand-in daemon when the attempt's trace is in the share
// rate; each attempt in the next of a ring of traces, as a stream of
// events' deliveries are.
func tracedSendOp(b *testing.B, url string, rate float64) func() {
	_, signer := newSecret(b)
	client := newClient(b)
	req := newRequest(url, signer)
	ctx := context.Background()
	x := daemon(b)
	x.Rate = rate
	tr := &trace.Tracer{Service: "deliver", XRay: x}
	parents := make([]trace.Context, 1024)
	for i := range parents {
		parents[i] = trace.Derive(trace.EventKey("tn_bench", strconv.Itoa(i)), time.Now())
	}
	i := 0
	return func() {
		i++
		span := tr.Start(parents[i%len(parents)], "deliver.attempt")
		req.TraceParent = span.TraceParent()
		res := client.Send(ctx, req)
		if res.Outcome != sender.Delivered {
			b.Fatalf("%+v", res)
		}
		span.EndSegment(slog.String("delivery_id", req.DeliveryID), slog.String("outcome", res.Outcome.String()), slog.Int("status", res.Status))
	}
}
