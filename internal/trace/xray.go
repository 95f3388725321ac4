package trace

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// XRayTraceID is the X-Ray form of a W3C trace id: "1-", the first 8 hex
// digits (X-Ray reads them as the trace's start in unix seconds), "-",
// the other 24. X-Ray refuses a trace id whose time is not recent (about
// 30 days): those hookline starts (New, Derive) always have it; a
// producer's may not, and then only the span lines carry its spans.
func XRayTraceID(c Context) string {
	h := c.TraceIDHex()
	return "1-" + h[:8] + "-" + h[8:]
}

// ParseXRayTraceID is XRayTraceID's inverse: the W3C trace id of an X-Ray
// one, ok false when s is not "1-" 8 hex "-" 24 hex.
func ParseXRayTraceID(s string) (id [16]byte, ok bool) {
	if len(s) != 35 || s[:2] != "1-" || s[10] != '-' {
		return id, false
	}
	h := s[2:10] + s[11:]
	if !lowerHex(h) {
		return id, false
	}
	_, _ = hex.Decode(id[:], []byte(h))
	return id, id != [16]byte{}
}

// XRay sends segments to the X-Ray daemon over UDP (the daemon Lambda
// runs beside a function with active tracing), one datagram each, fire
// and forget: a segment lost is a span missing from X-Ray, never a
// failed delivery.
type XRay struct {
	conn net.Conn
}

// DialXRay connects to the daemon at addr: AWS_XRAY_DAEMON_ADDRESS's
// value, "host:port" or "tcp:host:port udp:host:port" (the udp one is
// used).
func DialXRay(addr string) (*XRay, error) {
	for _, f := range strings.Fields(addr) {
		if rest, ok := strings.CutPrefix(f, "udp:"); ok {
			addr = rest
		}
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("X-Ray daemon %q: %w", addr, err)
	}
	return &XRay{conn: conn}, nil
}

// daemonHeader starts every datagram the daemon reads.
const daemonHeader = "{\"format\":\"json\",\"version\":1}\n"

// Segment is an X-Ray segment document, as the daemon takes it.
type Segment struct {
	Name        string         `json:"name"`
	ID          string         `json:"id"`
	TraceID     string         `json:"trace_id"`
	ParentID    string         `json:"parent_id,omitempty"`
	StartTime   float64        `json:"start_time"`
	EndTime     float64        `json:"end_time"`
	Origin      string         `json:"origin"`
	Annotations map[string]any `json:"annotations,omitempty"`
}

// Send writes one segment; errors are dropped (see XRay).
func (x *XRay) Send(seg Segment) {
	b, err := json.Marshal(seg)
	if err != nil {
		return
	}
	_, _ = x.conn.Write(append([]byte(daemonHeader), b...))
}

// Close closes the connection.
func (x *XRay) Close() error { return x.conn.Close() }

// segment is the span as an X-Ray segment in the span's trace: named for
// the service, its span's name and attributes as annotations.
func (s *Span) segment(end time.Time, attrs []slog.Attr) Segment {
	seg := Segment{
		Name: "hookline-" + s.t.Service, ID: s.ctx.SpanIDHex(), TraceID: XRayTraceID(s.ctx),
		ParentID:  (Context{SpanID: s.parent}).SpanIDHex(),
		StartTime: unixSeconds(s.start), EndTime: unixSeconds(end), Origin: "AWS::Lambda::Function",
		Annotations: map[string]any{"span": s.name},
	}
	for _, a := range attrs {
		seg.Annotations[annotationKey(a.Key)] = annotationValue(a.Value)
	}
	return seg
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// annotationKey is k with every character X-Ray refuses in an annotation
// key (it takes letters, digits and underscores) as an underscore.
func annotationKey(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// annotationValue is v as X-Ray takes an annotation: a string, a number
// or a boolean.
func annotationValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return float64(v.Duration().Microseconds()) / 1000
	}
	return v.String()
}
