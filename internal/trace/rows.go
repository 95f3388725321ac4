package trace

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// MaxRowsLine is how long a Rows line grows before it is written and the
// next begun: 64 KiB, a quarter of CloudWatch Logs' 256 KiB event (a
// longer line would be cut), however long a row's ids.
const MaxRowsLine = 64 << 10

// Rows writes spans of one name that end together (an invocation's
// fan-outs, a batch's delivered attempts) as one line, not a line each:
//
//	{"msg":"spans","name":"enqueue.fanout","service":"enqueue","start":"2026-12-03T14:00:01.010Z","columns":["tenant_id","event_id","deliveries","sent"],"spans":[["<trace_id>","<span_id>","<parent_span_id>",0,3.1,"acme","evt_123",2,true]]}
//
// A row is a span: its trace id, span id, parent span id ("" for a
// root), start in milliseconds after the line's start (the first row's),
// duration in milliseconds, then its attributes' values, named by the
// line's columns (the first row's attribute keys: every Add of a Rows
// gives the same). A row costs its ids and values, about 150 bytes for
// a fan-out, where a span line of its own is about 330. ParseLine reads
// both kinds of line. A row is the span's line only: its X-Ray segment
// is the caller's (Span.EndSegment). A nil *Rows, or one of a nil
// Tracer, writes nothing.
type Rows struct {
	t    *Tracer
	name string

	mu    sync.Mutex
	start time.Time
	cols  []string // the first row's attribute keys
	line  []byte   // the rows so far, comma separated; empty: none
}

// Rows returns an empty set of rows of spans named name.
func (t *Tracer) Rows(name string) *Rows {
	if t == nil {
		return nil
	}
	return &Rows{t: t, name: name}
}

// Add writes span s, which took d, as a row with attrs (values only on
// the line: ids, counts, outcomes, never secrets or payloads). When the
// rows reach MaxRowsLine, they are written and a new line begun.
func (r *Rows) Add(s *Span, d time.Duration, attrs ...slog.Attr) {
	if r == nil || s == nil || s.t == nil {
		return
	}
	if r.t.Out == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.line) == 0 {
		r.start = s.start
	}
	if r.cols == nil {
		r.cols = make([]string, len(attrs))
		for i, a := range attrs {
			r.cols[i] = a.Key
		}
	}
	if len(r.line) > 0 {
		r.line = append(r.line, ',')
	}
	r.line = append(r.line, `["`...)
	r.line = appendHex(r.line, s.ctx.TraceID[:])
	r.line = append(r.line, `","`...)
	r.line = appendHex(r.line, s.ctx.SpanID[:])
	r.line = append(r.line, `","`...)
	if s.parent != ([8]byte{}) {
		r.line = appendHex(r.line, s.parent[:])
	}
	r.line = append(r.line, `",`...)
	r.line = appendMillis(r.line, s.start.Sub(r.start))
	r.line = append(r.line, ',')
	r.line = appendMillis(r.line, d)
	for _, a := range attrs {
		r.line = append(r.line, ',')
		r.line = appendValue(r.line, a.Value.Resolve())
	}
	r.line = append(r.line, ']')
	if len(r.line) >= MaxRowsLine {
		r.writeLocked()
	}
}

// Flush writes the rows not written yet, if any, as one line.
func (r *Rows) Flush() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLocked()
}

func (r *Rows) writeLocked() {
	if len(r.line) == 0 {
		return
	}
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b := append((*bp)[:0], `{"msg":"spans","name":`...)
	b = appendString(b, r.name)
	b = append(b, `,"service":`...)
	b = appendString(b, r.t.Service)
	b = append(b, `,"start":"`...)
	b = r.start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","columns":[`...)
	for i, c := range r.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, c)
	}
	b = append(b, `],"spans":[`...)
	b = append(b, r.line...)
	b = append(b, "]}\n"...)
	*bp = b
	r.t.mu.Lock()
	_, _ = r.t.Out.Write(b)
	r.t.mu.Unlock()
	r.line = r.line[:0]
}

// LineSpan is a span as a function's log holds it, read back by
// ParseLine: from its own line (Span.End) or a row of a Rows line.
type LineSpan struct {
	TraceID, SpanID, ParentSpanID, Name, Service string
	Start                                        time.Time
	DurationMS                                   float64
	Attributes                                   map[string]any
}

// ParseLine reads the spans a log line holds: one for a span line, each
// row for a Rows line, none for any other line.
func ParseLine(line []byte) []LineSpan {
	var l struct {
		Msg          string              `json:"msg"`
		TraceID      string              `json:"trace_id"`
		SpanID       string              `json:"span_id"`
		ParentSpanID string              `json:"parent_span_id"`
		Name         string              `json:"name"`
		Service      string              `json:"service"`
		Start        time.Time           `json:"start"`
		DurationMS   float64             `json:"duration_ms"`
		Attributes   map[string]any      `json:"attributes"`
		Columns      []string            `json:"columns"`
		Spans        [][]json.RawMessage `json:"spans"`
	}
	if json.Unmarshal(line, &l) != nil {
		return nil
	}
	switch l.Msg {
	case "span":
		return []LineSpan{{TraceID: l.TraceID, SpanID: l.SpanID, ParentSpanID: l.ParentSpanID, Name: l.Name, Service: l.Service,
			Start: l.Start, DurationMS: l.DurationMS, Attributes: l.Attributes}}
	case "spans":
		out := make([]LineSpan, 0, len(l.Spans))
		for _, row := range l.Spans {
			if len(row) != 5+len(l.Columns) {
				continue
			}
			s := LineSpan{Name: l.Name, Service: l.Service, Attributes: map[string]any{}}
			var startMS float64
			if json.Unmarshal(row[0], &s.TraceID) != nil || json.Unmarshal(row[1], &s.SpanID) != nil || json.Unmarshal(row[2], &s.ParentSpanID) != nil ||
				json.Unmarshal(row[3], &startMS) != nil || json.Unmarshal(row[4], &s.DurationMS) != nil {
				continue
			}
			s.Start = l.Start.Add(time.Duration(startMS * float64(time.Millisecond)))
			for i, c := range l.Columns {
				var v any
				_ = json.Unmarshal(row[5+i], &v)
				s.Attributes[c] = v
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}
