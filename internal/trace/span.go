package trace

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// Tracer emits the spans of one function: each as a JSON log line
// ("msg":"span") on its logger, and, when XRay is set and the trace is
// sampled, as a segment to the X-Ray daemon. A nil *Tracer starts spans
// (their ids still travel) and emits nothing.
type Tracer struct {
	// Service names the function ("api", "enqueue", "deliver", "replay"):
	// the span lines' "service" and the X-Ray segments' name.
	Service string
	// Log receives the span lines, at INFO. Nil: none.
	Log *slog.Logger
	// XRay receives the sampled spans as segments. Nil: none.
	XRay *XRay
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// NewTracer returns a function's tracer: span lines on w at INFO whatever
// the function's log level (the lines are how a trace is followed), and
// X-Ray segments to daemon (AWS_XRAY_DAEMON_ADDRESS) when it is not "".
func NewTracer(service string, w io.Writer, daemon string) (*Tracer, error) {
	t := &Tracer{Service: service, Log: slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: lean}))}
	if daemon != "" {
		x, err := DialXRay(daemon)
		if err != nil {
			return nil, err
		}
		t.XRay = x
	}
	return t, nil
}

// lean drops the time and level of a span line: its start and duration
// say when, and every span line is at INFO. Fewer bytes per attempt in
// CloudWatch Logs.
func lean(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
		return slog.Attr{}
	}
	return a
}

// Span is one piece of work in a trace, started by Tracer.Start and
// emitted by End.
type Span struct {
	t      *Tracer
	name   string
	ctx    Context
	parent [8]byte
	start  time.Time
}

// Start starts the span name under parent: in parent's trace, with a fresh
// span id, parent's span its parent (none when parent is a root). A parent
// that names no trace (the zero Context) starts a new trace.
func (t *Tracer) Start(parent Context, name string) *Span {
	now := t.now()
	if !parent.Valid() {
		parent = New(now)
	}
	s := &Span{t: t, name: name, parent: parent.SpanID, start: now}
	s.ctx = Context{TraceID: parent.TraceID, SpanID: newSpanID(), Flags: parent.Flags}
	return s
}

func (t *Tracer) now() time.Time {
	if t == nil || t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

// Context is the span's own context: what goes downstream as traceparent.
func (s *Span) Context() Context { return s.ctx }

// TraceParent is the span's traceparent header value.
func (s *Span) TraceParent() string { return s.ctx.String() }

// End emits the span, its duration up to now, with attrs (ids, counts,
// outcomes; never secrets or payloads).
func (s *Span) End(ctx context.Context, attrs ...slog.Attr) {
	if s == nil || s.t == nil {
		return
	}
	end := s.t.now()
	if s.t.Log != nil {
		s.t.Log.LogAttrs(ctx, slog.LevelInfo, "span", s.line(end, attrs)...)
	}
	if s.t.XRay != nil && s.ctx.Sampled() {
		s.t.XRay.Send(s.segment(end, attrs))
	}
}

// line is the span line's attributes.
func (s *Span) line(end time.Time, attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, 8)
	out = append(out, slog.String("trace_id", s.ctx.TraceIDHex()), slog.String("span_id", s.ctx.SpanIDHex()))
	if p := (Context{SpanID: s.parent}).SpanIDHex(); p != "" {
		out = append(out, slog.String("parent_span_id", p))
	}
	out = append(out, slog.String("name", s.name), slog.String("service", s.t.Service),
		slog.Time("start", s.start.UTC()), slog.Float64("duration_ms", float64(end.Sub(s.start).Microseconds())/1000))
	if len(attrs) > 0 {
		out = append(out, slog.Attr{Key: "attributes", Value: slog.GroupValue(attrs...)})
	}
	return out
}
