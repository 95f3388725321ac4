package trace

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Tracer emits the spans of one function: each as a JSON line
// ("msg":"span") on Out, and, when XRay is set and takes the trace
// (sampled, and within its Rate), as a segment to the X-Ray daemon. A nil *Tracer starts spans (their
// ids still travel) and emits nothing.
type Tracer struct {
	// Service names the function ("api", "enqueue", "deliver", "replay"):
	// the span lines' "service" and the X-Ray segments' name.
	Service string
	// Out receives the span lines, one Write each (the function's stdout,
	// which Lambda sends to its log group). Nil: none.
	Out io.Writer
	// XRay receives the sampled spans as segments. Nil: none.
	XRay *XRay
	// Now is the clock. Default time.Now.
	Now func() time.Time

	mu sync.Mutex // one line at a time on Out
}

// NewTracer returns a function's tracer: span lines on w whatever the
// function's log level (the lines are how a trace is followed), and X-Ray
// segments to daemon (AWS_XRAY_DAEMON_ADDRESS) when it is not "", of a
// share rate of the traces (XRay.Rate; 0 or above 1: every trace).
func NewTracer(service string, w io.Writer, daemon string, rate float64) (*Tracer, error) {
	t := &Tracer{Service: service, Out: w}
	if daemon != "" {
		x, err := DialXRay(daemon)
		if err != nil {
			return nil, err
		}
		if rate > 0 && rate < 1 {
			x.Rate = rate
		}
		t.XRay = x
	}
	return t, nil
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

// Elapsed is the time since the span started (0 for a nil span).
func (s *Span) Elapsed() time.Duration {
	if s == nil {
		return 0
	}
	return s.t.now().Sub(s.start)
}

// Context is the span's own context: what goes downstream as traceparent.
func (s *Span) Context() Context { return s.ctx }

// TraceParent is the span's traceparent header value.
func (s *Span) TraceParent() string { return s.ctx.String() }

// bufs are the buffers span lines and segments are encoded in.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// End emits the span, its duration up to now, with attrs (ids, counts,
// outcomes; never secrets or payloads). Its line is encoded by hand, not
// through slog: this is on every attempt's path (docs/performance.md).
func (s *Span) End(_ context.Context, attrs ...slog.Attr) {
	if s == nil || s.t == nil {
		return
	}
	end := s.t.now()
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	if s.t.Out != nil {
		*bp = s.appendLine((*bp)[:0], end, attrs)
		s.t.mu.Lock()
		_, _ = s.t.Out.Write(*bp)
		s.t.mu.Unlock()
	}
	if s.t.XRay != nil && s.t.XRay.takes(s.ctx) {
		*bp = s.appendSegment((*bp)[:0], end, attrs)
		s.t.XRay.write(*bp)
	}
}

// LineFields are the span's name and ids as log attributes ("span",
// "span_id", "parent_span_id" when it has a parent), for a caller whose
// own log line stands for the span: deliver's attempt line, so that an
// attempt costs one line in CloudWatch Logs, not two. Such a span is
// ended with EndSegment.
func (s *Span) LineFields() []any {
	if s == nil {
		return nil
	}
	f := make([]any, 0, 16) // room for the caller's own fields
	f = append(f, "span", s.name, "span_id", s.ctx.SpanIDHex())
	if p := (Context{SpanID: s.parent}).SpanIDHex(); p != "" {
		f = append(f, "parent_span_id", p)
	}
	return f
}

// EndSegment ends a span whose line the caller writes itself
// (LineFields): only its X-Ray segment is sent, when there is a daemon
// and it takes the trace (sampled, and in its share: XRay.Rate).
func (s *Span) EndSegment(attrs ...slog.Attr) {
	if s == nil || s.t == nil || s.t.XRay == nil || !s.t.XRay.takes(s.ctx) {
		return
	}
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	*bp = s.appendSegment((*bp)[:0], s.t.now(), attrs)
	s.t.XRay.write(*bp)
}

// appendLine appends the span line: msg, trace_id, span_id,
// parent_span_id (none for a root), name, service, start, duration_ms,
// attributes (when any), and a newline.
func (s *Span) appendLine(b []byte, end time.Time, attrs []slog.Attr) []byte {
	b = append(b, `{"msg":"span","trace_id":"`...)
	b = appendHex(b, s.ctx.TraceID[:])
	b = append(b, `","span_id":"`...)
	b = appendHex(b, s.ctx.SpanID[:])
	if s.parent != ([8]byte{}) {
		b = append(b, `","parent_span_id":"`...)
		b = appendHex(b, s.parent[:])
	}
	b = append(b, `","name":`...)
	b = appendString(b, s.name)
	b = append(b, `,"service":`...)
	b = appendString(b, s.t.Service)
	b = append(b, `,"start":"`...)
	b = s.start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","duration_ms":`...)
	b = appendMillis(b, end.Sub(s.start))
	if len(attrs) > 0 {
		b = append(b, `,"attributes":`...)
		b = appendAttrs(b, attrs, false)
	}
	return append(b, "}\n"...)
}
