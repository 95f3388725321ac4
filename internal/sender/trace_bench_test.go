package sender_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/tooling/perf/ratio"
)

// tracedOp is sendOp as deliver makes an attempt with tracing on: the
// attempt's span started under the message's context, its traceparent
// sent as the header, the span ended (a JSON line, written here to
// io.Discard as the function writes it to stdout; with xray, also a
// segment to a UDP listener standing in for the X-Ray daemon).
func tracedOp(b *testing.B, url string, xray bool) func() {
	_, signer := newSecret(b)
	client := newClient(b)
	req := newRequest(url, signer)
	ctx := context.Background()
	tr, err := trace.NewTracer("deliver", io.Discard, "")
	if err != nil {
		b.Fatal(err)
	}
	if xray {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pc.Close() })
		go func() { // drain, as the daemon does
			buf := make([]byte, 64<<10)
			for {
				if _, _, err := pc.ReadFrom(buf); err != nil {
					return
				}
			}
		}()
		if tr.XRay, err = trace.DialXRay(pc.LocalAddr().String()); err != nil {
			b.Fatal(err)
		}
	}
	parent, _ := trace.Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	return func() {
		span := tr.Start(parent, "deliver.attempt")
		req.TraceParent = span.TraceParent()
		res := client.Send(ctx, req)
		if res.Outcome != sender.Delivered {
			b.Fatalf("%+v", res)
		}
		span.End(ctx, slog.String("delivery_id", req.DeliveryID), slog.Int("attempt", req.Attempt),
			slog.String("outcome", res.Outcome.String()), slog.String("class", "delivered"), slog.Int("status", res.Status))
	}
}

// BenchmarkTracedSendVsSend measures the deliver path with tracing on
// (span line; /xray: and X-Ray segment) against the same path with it off
// (sendOp: no span, no header), in the same run, and against a bare POST
// for the deliver path's target (time-x <= 1.3, allocs-x <= 1.5 of
// BenchmarkSendVsBarePost). Printed, never asserted.
func BenchmarkTracedSendVsSend(b *testing.B) {
	srv := benchServer(b)
	for _, tc := range []struct {
		name string
		xray bool
	}{{"logs", false}, {"xray", true}} {
		b.Run(tc.name, func(b *testing.B) {
			ratio.Compare(b, "traced", tracedOp(b, srv.URL, tc.xray), "send", sendOp(b, srv.URL))
		})
	}
}

// BenchmarkTracedSendVsBarePost is the deliver path with tracing on
// (span lines, X-Ray) against a bare POST: the deliver path's target.
func BenchmarkTracedSendVsBarePost(b *testing.B) {
	srv := benchServer(b)
	ratio.Compare(b, "traced", tracedOp(b, srv.URL, true), "bare", bareOp(b, srv.URL))
}
