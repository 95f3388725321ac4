package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParseAndFormat(t *testing.T) {
	t.Parallel()
	c, ok := Parse(valid)
	require.True(t, ok)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", c.TraceIDHex())
	require.Equal(t, "00f067aa0ba902b7", c.SpanIDHex())
	require.True(t, c.Sampled())
	require.Equal(t, valid, c.String())

	// A later version may be longer, after a dash; it is read as 00.
	c, ok = Parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-the-future-holds")
	require.True(t, ok)
	require.False(t, c.Sampled())
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", c.String())
}

func TestParseIgnoresHostileValues(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"garbage",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",        // trailing space
		" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",        // leading space
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",         // uppercase
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",         // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",         // zero span id
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",         // version ff
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",   // 00 longer
		"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",        // later version, no dash
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",         // not hex
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",         // separators
		"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",         // version not hex
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",         // flags not hex
		"00-4bf92f3577b34da6a3ce929d0e0e4736\n00f067aa0ba902b7-01",        // newline
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\u00e9",    // non-ASCII
		strings.Repeat("0", 10000),                                        // huge
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\x00\x00", // NULs
	} {
		_, ok := Parse(s)
		require.False(t, ok, "%q", s)
		require.False(t, outbox.ValidTraceParent(s), "%q", s)
		fresh := New(time.Unix(1_800_000_000, 0))
		require.Equal(t, fresh, Or(s, fresh), "%q: the fallback, a new trace", s)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(valid)
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := Parse(s)
		require.Equal(t, ok, outbox.ValidTraceParent(s), "the producer's module and hookline agree on %q", s)
		if !ok {
			return
		}
		// What parses formats back to a value that parses to the same.
		again, ok := Parse(c.String())
		require.True(t, ok)
		require.Equal(t, c, again)
		if strings.HasPrefix(s, "00-") {
			require.Equal(t, s, c.String())
		}
	})
}

func TestNewAndDerive(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_800_000_000, 0)
	a, b := New(at), New(at)
	require.NotEqual(t, a.TraceID, b.TraceID)
	require.Equal(t, "6b49d200", a.TraceIDHex()[:8], "the first 4 bytes are the time, as X-Ray wants")
	require.Empty(t, a.String(), "a root has no span to name")

	d1, d2 := Derive(EventKey("t1", "ev1"), at), Derive(EventKey("t1", "ev1"), at)
	require.Equal(t, d1, d2, "derived again, the same trace")
	require.NotEqual(t, d1.TraceID, Derive(EventKey("t2", "ev1"), at).TraceID)
	require.True(t, d1.Sampled())
}

func TestXRayTraceIDMapping(t *testing.T) {
	t.Parallel()
	c, _ := Parse(valid)
	x := XRayTraceID(c)
	require.Equal(t, "1-4bf92f35-77b34da6a3ce929d0e0e4736", x)
	id, ok := ParseXRayTraceID(x)
	require.True(t, ok)
	require.Equal(t, c.TraceID, id)
	// AWS's documented example.
	id, ok = ParseXRayTraceID("1-5759e988-bd862e3fe1be46a994272793")
	require.True(t, ok)
	require.Equal(t, "5759e988bd862e3fe1be46a994272793", Context{TraceID: id}.TraceIDHex())
	for _, bad := range []string{"", "1-5759e988bd862e3fe1be46a994272793", "2-5759e988-bd862e3fe1be46a994272793", "1-5759E988-bd862e3fe1be46a994272793", "1-00000000-000000000000000000000000"} {
		_, ok := ParseXRayTraceID(bad)
		require.False(t, ok, bad)
	}
}

func TestSpanLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	clock := time.Unix(1_800_000_000, 0)
	tr := &Tracer{Service: "deliver", Out: &buf, Now: func() time.Time { return clock }}
	parent, _ := Parse(valid)
	s := tr.Start(parent, "deliver.attempt")
	clock = clock.Add(1500 * time.Microsecond)
	s.End(context.Background(), slog.String("outcome", "delivered"), slog.Int("status", 200))

	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.Equal(t, "span", line["msg"])
	require.Equal(t, "2027-01-15T08:00:00Z", line["start"])
	require.Equal(t, parent.TraceIDHex(), line["trace_id"])
	require.Equal(t, parent.SpanIDHex(), line["parent_span_id"])
	require.Equal(t, s.Context().SpanIDHex(), line["span_id"])
	require.NotEqual(t, parent.SpanIDHex(), line["span_id"])
	require.Equal(t, "deliver.attempt", line["name"])
	require.Equal(t, "deliver", line["service"])
	require.Equal(t, 1.5, line["duration_ms"])
	require.Equal(t, map[string]any{"outcome": "delivered", "status": 200.0}, line["attributes"])
	require.Equal(t, parent.TraceIDHex(), s.Context().TraceIDHex())
	require.Equal(t, "00-"+parent.TraceIDHex()+"-"+s.Context().SpanIDHex()+"-01", s.TraceParent())

	// A root span has no parent_span_id; a zero parent starts a trace.
	buf.Reset()
	tr.Start(Derive("k", clock), "enqueue.fanout").End(context.Background())
	line = nil
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	require.NotContains(t, line, "parent_span_id")
	require.True(t, tr.Start(Context{}, "x").Context().Valid())
}

func TestNilTracerPropagatesAndEmitsNothing(t *testing.T) {
	t.Parallel()
	var tr *Tracer
	parent, _ := Parse(valid)
	s := tr.Start(parent, "deliver.attempt")
	require.Equal(t, parent.TraceID, s.Context().TraceID)
	s.End(context.Background()) // no panic, nothing to emit to
}

func TestXRaySegmentsReachTheDaemon(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	x, err := DialXRay("tcp:127.0.0.1:1 udp:" + pc.LocalAddr().String())
	require.NoError(t, err)
	defer x.Close()
	clock := time.Unix(1_800_000_000, 0)
	tr := &Tracer{Service: "enqueue", XRay: x, Now: func() time.Time { return clock }}
	// A trace hookline started a minute ago: X-Ray takes its id as it is.
	parent := New(clock.Add(-time.Minute))
	parent.SpanID = [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	s := tr.Start(parent, "enqueue.fanout")
	s.End(context.Background(), slog.Int("deliveries", 3), slog.String("event-id", "ev1"))
	// Not sampled: not sent.
	tr.Start(Context{TraceID: parent.TraceID, SpanID: parent.SpanID}, "unsampled").End(context.Background())

	buf := make([]byte, 65536)
	n, _, err := pc.ReadFrom(buf)
	require.NoError(t, err)
	head, body, ok := strings.Cut(string(buf[:n]), "\n")
	require.True(t, ok)
	require.JSONEq(t, `{"format":"json","version":1}`, head)
	var seg Segment
	require.NoError(t, json.Unmarshal([]byte(body), &seg))
	require.Equal(t, XRayTraceID(parent), seg.TraceID)
	require.Equal(t, "6b49d1c4", seg.TraceID[2:10], "the trace's start, a minute before the span")
	require.Equal(t, s.Context().SpanIDHex(), seg.ID)
	require.Equal(t, "00f067aa0ba902b7", seg.ParentID)
	require.Equal(t, "hookline-enqueue", seg.Name)
	require.Equal(t, map[string]any{"span": "enqueue.fanout", "deliveries": 3.0, "event_id": "ev1"}, seg.Annotations)
	require.LessOrEqual(t, seg.StartTime, seg.EndTime)
}

// Span lines and segments are valid JSON whatever the attributes hold:
// quotes, control characters, invalid UTF-8, odd keys, every kind.
func TestEncodingHostileAttributes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	tr := &Tracer{Service: "deliver\"x", Out: &buf}
	s := tr.Start(Context{}, "a\nb\"c\\")
	attrs := []slog.Attr{slog.String("k\"ey", "v\x00\x1f\"\\\xff\u2028é"), slog.Int("n", -3), slog.Uint64("u", 7), slog.Float64("f", 1.5),
		slog.Float64("nan", math.NaN()), slog.Bool("b", true), slog.Duration("d", 1500*time.Microsecond), slog.Time("t", time.Unix(0, 0).UTC()), slog.Any("x", []int{1})}
	s.End(context.Background(), attrs...)
	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	require.True(t, strings.HasSuffix(buf.String(), "}\n"))
	got := line["attributes"].(map[string]any)
	require.Equal(t, "v\x00\x1f\"\\\ufffd\u2028é", got["k\"ey"])
	require.Equal(t, -3.0, got["n"])
	require.Equal(t, 7.0, got["u"])
	require.Nil(t, got["nan"])
	require.Equal(t, 1.5, got["d"])
	require.Equal(t, true, got["b"])
	require.Equal(t, "a\nb\"c\\", line["name"])

	seg := s.appendSegment(nil, time.Now(), attrs)
	head, body, _ := strings.Cut(string(seg), "\n")
	require.JSONEq(t, `{"format":"json","version":1}`, head)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
	require.Contains(t, doc["annotations"], "k_ey")
}

// InSample takes the share of traces it is given, the same traces
// whichever span of them asks, and a trace within a share is within every
// larger one.
func TestInSampleTakesItsShareOfTraces(t *testing.T) {
	t.Parallel()
	const n = 20000
	at := time.Unix(1764547200, 0)
	for _, rate := range []float64{0.01, 0.05, 0.5} {
		in := 0
		for i := range n {
			c := Derive(EventKey("tn_a", fmt.Sprintf("ev_%d", i)), at)
			if InSample(c, rate) {
				in++
				require.True(t, InSample(c, min(1, rate*2)), "a trace within %g is within %g", rate, rate*2)
			}
			child := Context{TraceID: c.TraceID, SpanID: newSpanID(), Flags: c.Flags}
			require.Equal(t, InSample(c, rate), InSample(child, rate), "every span of a trace decides alike")
		}
		require.InDelta(t, rate, float64(in)/n, 0.01, "share taken at rate %g", rate)
	}
	require.True(t, InSample(Derive("x", at), 1))
	require.False(t, InSample(Context{TraceID: [16]byte{15: 1}}, 0), "rate 0 takes none")
}

// A tracer whose X-Ray client takes a share of the traces sends the spans
// of those only: the span of a trace outside it, sent first, never reaches
// the daemon.
func TestXRaySendsOnlyTheTracesInItsShare(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	tr, err := NewTracer("deliver", nil, pc.LocalAddr().String(), 0.5)
	require.NoError(t, err)
	require.Equal(t, 0.5, tr.XRay.Rate)
	var in, out Context
	for i := 0; !in.Valid() || !out.Valid(); i++ {
		c := Derive(fmt.Sprintf("tn_a/ev_%d", i), time.Now())
		if InSample(c, 0.5) {
			in = c
		} else {
			out = c
		}
	}
	tr.Start(out, "deliver.attempt").EndSegment()
	sent := tr.Start(in, "deliver.attempt")
	sent.EndSegment()

	buf := make([]byte, 65536)
	n, _, err := pc.ReadFrom(buf)
	require.NoError(t, err)
	_, body, _ := strings.Cut(string(buf[:n]), "\n")
	var seg Segment
	require.NoError(t, json.Unmarshal([]byte(body), &seg))
	require.Equal(t, sent.Context().SpanIDHex(), seg.ID, "the first segment the daemon reads is the in-sample trace's")

	all, err := NewTracer("deliver", nil, pc.LocalAddr().String(), 0)
	require.NoError(t, err)
	require.Equal(t, 1.0, all.XRay.Rate, "rate 0: every trace")
}

// xrayDaemon stands in for the X-Ray daemon and the service behind it: it
// reads the datagrams sent to it and holds each segment to
// PutTraceSegments' rules on the trace id (AWS's numbers, not hookline's):
// "1-", 8 hex digits of unix seconds no more than 30 days before the
// segment is sent, "-", 24 hex digits.
type xrayDaemon struct {
	pc net.PacketConn
}

// xrayRejectsAfter is the age past which X-Ray rejects a trace id's time.
const xrayRejectsAfter = 30 * 24 * time.Hour

func newXRayDaemon(t *testing.T) *xrayDaemon {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	return &xrayDaemon{pc: pc}
}

// next reads the next segment and fails the test if X-Ray, at now, would
// reject its trace id.
func (d *xrayDaemon) next(t *testing.T, now time.Time) Segment {
	t.Helper()
	require.NoError(t, d.pc.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 65536)
	n, _, err := d.pc.ReadFrom(buf)
	require.NoError(t, err)
	head, body, ok := strings.Cut(string(buf[:n]), "\n")
	require.True(t, ok)
	require.JSONEq(t, `{"format":"json","version":1}`, head)
	var seg Segment
	require.NoError(t, json.Unmarshal([]byte(body), &seg), body)
	id, ok := ParseXRayTraceID(seg.TraceID)
	require.True(t, ok, "trace id %q is not X-Ray's form", seg.TraceID)
	started := time.Unix(int64(uint32(id[0])<<24|uint32(id[1])<<16|uint32(id[2])<<8|uint32(id[3])), 0)
	require.False(t, started.Before(now.Add(-xrayRejectsAfter)), "X-Ray rejects trace id %s: its time %s is more than 30 days before %s", seg.TraceID, started.UTC(), now.UTC())
	return seg
}

// Every segment sent carries a trace id X-Ray accepts: a producer's W3C
// trace id whose first 32 bits are random (here 2010), an event's derived
// trace whose occurrence is long past, and one whose time is ahead of the
// clock, go under a derived id (the day's start, the W3C id's last 24 hex
// digits) with the W3C id as an annotation; a recent one goes as it is.
// Each case's span line keeps the W3C id.
func TestXRayGetsOnlyTraceIDsItAccepts(t *testing.T) {
	t.Parallel()
	d := newXRayDaemon(t)
	clock := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	day := time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)
	var lines bytes.Buffer
	tr, err := NewTracer("deliver", &lines, d.pc.LocalAddr().String(), 1)
	require.NoError(t, err)
	tr.Now = func() time.Time { return clock }

	producer, _ := Parse(valid)
	old := Derive(EventKey("tn_a", "ev_old"), clock.Add(-40*24*time.Hour))
	old.SpanID = [8]byte{7: 1}
	edge := Derive(EventKey("tn_a", "ev_edge"), clock.Add(-XRayMaxAge-time.Second))
	edge.SpanID = [8]byte{7: 2}
	ahead := Derive(EventKey("tn_a", "ev_ahead"), clock.Add(time.Hour))
	ahead.SpanID = [8]byte{7: 3}
	recent := Derive(EventKey("tn_a", "ev_new"), clock.Add(-XRayMaxAge+time.Minute))
	recent.SpanID = [8]byte{7: 4}
	for _, tc := range []struct {
		name    string
		c       Context
		derived bool
	}{
		{"producer's random W3C id", producer, true},
		{"event that occurred 40 days ago", old, true},
		{"just past the margin", edge, true},
		{"ahead of the clock", ahead, true},
		{"within the window", recent, false},
	} {
		lines.Reset()
		s := tr.Start(tc.c, "deliver.attempt")
		s.End(context.Background(), slog.String("outcome", "delivered"))
		seg := d.next(t, clock)
		want, derived := XRayTraceIDAt(tc.c, clock)
		require.Equal(t, tc.derived, derived, tc.name)
		require.Equal(t, want, seg.TraceID, tc.name)
		require.Equal(t, tc.c.TraceIDHex()[8:], seg.TraceID[11:], "%s: the W3C id's last 24 digits kept", tc.name)
		if tc.derived {
			require.Equal(t, fmt.Sprintf("%08x", day.Unix()), seg.TraceID[2:10], "%s: the day's start", tc.name)
			require.Equal(t, tc.c.TraceIDHex(), seg.Annotations[XRayW3CAnnotation], tc.name)
		} else {
			require.Equal(t, XRayTraceID(tc.c), seg.TraceID, tc.name)
			require.NotContains(t, seg.Annotations, XRayW3CAnnotation, tc.name)
		}
		require.Equal(t, "delivered", seg.Annotations["outcome"])
		var line map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &line))
		require.Equal(t, tc.c.TraceIDHex(), line["trace_id"], "%s: the span line keeps the W3C id", tc.name)
	}

	// Another function's span of the producer's trace later that day, sent
	// with EndSegment, joins the same X-Ray trace.
	later := clock.Add(15 * time.Hour)
	tr.Now = func() time.Time { return later }
	tr.Start(producer, "deliver.attempt").EndSegment()
	first, _ := XRayTraceIDAt(producer, clock)
	require.Equal(t, first, d.next(t, later).TraceID, "the same X-Ray trace all day")
}

// XRayAccepts holds the window's bounds: XRayMaxAge before now and
// XRayMaxSkew after it, both included.
func TestXRayAcceptsWindow(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	at := func(d time.Duration) Context { return New(now.Add(d)) }
	require.True(t, XRayAccepts(at(0), now))
	require.True(t, XRayAccepts(at(-XRayMaxAge), now))
	require.False(t, XRayAccepts(at(-XRayMaxAge-time.Second), now))
	require.True(t, XRayAccepts(at(XRayMaxSkew), now))
	require.False(t, XRayAccepts(at(XRayMaxSkew+time.Second), now))
	require.Less(t, XRayMaxAge, xrayRejectsAfter, "a margin under X-Ray's own bound")
	p, _ := Parse(valid)
	require.False(t, XRayAccepts(p, now), "a random W3C id from 2010")
}
