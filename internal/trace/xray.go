package trace

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// XRayTraceID is the X-Ray form of a W3C trace id: "1-", the first 8 hex
// digits (X-Ray reads them as the trace's start in unix seconds), "-",
// the other 24. X-Ray refuses a segment whose trace id's time is more than
// 30 days old, so this form is sent only when XRayAccepts; otherwise
// segments go under XRayTraceIDAt's derived id.
func XRayTraceID(c Context) string {
	h := c.TraceIDHex()
	return "1-" + h[:8] + "-" + h[8:]
}

// The window of trace id times hookline sends to X-Ray as they are.
const (
	// XRayMaxAge is the oldest a trace id's time may be: X-Ray rejects
	// segments of trace ids more than 30 days old (PutTraceSegments);
	// 28 days, the OpenTelemetry collector's awsxray exporter's bound,
	// leaves room for clocks and for a trace that lasts.
	XRayMaxAge = 28 * 24 * time.Hour
	// XRayMaxSkew is how far in the future a trace id's time may be: a
	// time ahead of the clock is no start X-Ray has seen (the
	// collector's exporter allows 5 minutes, as here).
	XRayMaxSkew = 5 * time.Minute
)

// XRayAccepts reports whether c's trace id, as XRayTraceID maps it, is
// one X-Ray takes at now: its first 4 bytes, read as unix seconds, within
// XRayMaxAge before now and XRayMaxSkew after it. The traces hookline
// starts (New at now, Derive at the event's occurrence) are, unless the
// event's occurred_at is far from now; a producer's W3C trace id, whose
// first 32 bits are random, almost never is.
func XRayAccepts(c Context, now time.Time) bool {
	t, n := int64(binary.BigEndian.Uint32(c.TraceID[:4])), now.Unix()
	return t >= n-int64(XRayMaxAge/time.Second) && t <= n+int64(XRayMaxSkew/time.Second)
}

// xrayDay is the period a derived X-Ray trace id's time is rounded to.
const xrayDay = 24 * 60 * 60

// XRayTraceIDAt is the X-Ray trace id c's segments are sent under at now:
// XRayTraceID(c) when XRayAccepts it; else (derived true) "1-", the start
// of now's UTC day in unix seconds as 8 hex digits, "-", and c's last 24
// hex digits. The derived id is one X-Ray takes (at most a day old), the
// same for every span of the trace sent that day whichever function sends
// it (so X-Ray still joins them), and it keeps the W3C id's last 24
// digits; each derived segment also carries the W3C id as its
// w3c_trace_id annotation. A trace whose spans cross midnight UTC is two
// X-Ray traces, joined by that annotation.
func XRayTraceIDAt(c Context, now time.Time) (id string, derived bool) {
	b, derived := appendXRayTraceID(make([]byte, 0, 35), c, now)
	return string(b), derived
}

// appendXRayTraceID appends XRayTraceIDAt's id.
func appendXRayTraceID(b []byte, c Context, now time.Time) ([]byte, bool) {
	b = append(b, "1-"...)
	derived := !XRayAccepts(c, now)
	if derived {
		var day [4]byte
		u := now.Unix()
		binary.BigEndian.PutUint32(day[:], uint32(u-u%xrayDay))
		b = appendHex(b, day[:])
	} else {
		b = appendHex(b, c.TraceID[:4])
	}
	b = append(b, '-')
	return appendHex(b, c.TraceID[4:]), derived
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
// failed delivery. It sends the spans of a share of the traces only
// (Rate, decided by InSample).
type XRay struct {
	conn net.Conn
	// Rate is the share of traces whose spans are sent, above 0 and at
	// most 1 (every trace); DialXRay sets it to 1.
	Rate float64
}

// DialXRay connects to the daemon at addr: AWS_XRAY_DAEMON_ADDRESS's
// value, "host:port" or "tcp:host:port udp:host:port" (the udp one is
// used). Its Rate is 1: every sampled trace's spans are sent.
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
	return &XRay{conn: conn, Rate: 1}, nil
}

// takes reports whether c's spans are sent: the trace is sampled (its
// flag, as the producer or hookline set it) and InSample at x's Rate.
func (x *XRay) takes(c Context) bool { return c.Sampled() && InSample(c, x.Rate) }

// sampleSpace is 2^56, the values of a trace id's last 7 bytes.
const sampleSpace = 1 << 56

// InSample reports whether the trace c is among a share rate (0 to 1) of
// all traces: its trace id's last 7 bytes, read as a number, below rate
// times 2^56. Those bytes are random in a trace hookline starts (New), a
// hash of the event in one it derives (Derive), and random in a W3C
// producer's (its level 2 says so of the last 7): every function decides
// alike for one trace, with nothing passed along, so X-Ray holds all of a
// trace's spans or none.
func InSample(c Context, rate float64) bool {
	if rate >= 1 {
		return true
	}
	v := binary.BigEndian.Uint64(c.TraceID[8:16]) & (sampleSpace - 1)
	return float64(v) < rate*sampleSpace
}

// daemonHeader starts every datagram the daemon reads.
const daemonHeader = "{\"format\":\"json\",\"version\":1}\n"

// Segment is an X-Ray segment document as the daemon takes it: what a
// span sends (appendSegment encodes the same fields).
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

// write sends one datagram; errors are dropped (see XRay).
func (x *XRay) write(b []byte) { _, _ = x.conn.Write(b) }

// Close closes the connection.
func (x *XRay) Close() error { return x.conn.Close() }

// XRayW3CAnnotation is the annotation that carries the W3C trace id (32
// hex digits) on a segment sent under a derived X-Ray trace id
// (XRayTraceIDAt): filter with annotation.w3c_trace_id = "<id>".
const XRayW3CAnnotation = "w3c_trace_id"

// appendSegment appends the daemon's header and the span as an X-Ray
// segment in the span's trace (under XRayTraceIDAt's id at end): named
// for the service, its span's name and attributes as annotations, and
// the W3C trace id as XRayW3CAnnotation when the X-Ray id is derived.
func (s *Span) appendSegment(b []byte, end time.Time, attrs []slog.Attr) []byte {
	b = append(b, daemonHeader...)
	b = append(b, `{"name":`...)
	b = appendString(b, "hookline-"+s.t.Service)
	b = append(b, `,"id":"`...)
	b = appendHex(b, s.ctx.SpanID[:])
	b = append(b, `","trace_id":"`...)
	b, derived := appendXRayTraceID(b, s.ctx, end)
	if s.parent != ([8]byte{}) {
		b = append(b, `","parent_id":"`...)
		b = appendHex(b, s.parent[:])
	}
	b = append(b, `","start_time":`...)
	b = appendSeconds(b, s.start)
	b = append(b, `,"end_time":`...)
	b = appendSeconds(b, end)
	b = append(b, `,"origin":"AWS::Lambda::Function","annotations":{"span":`...)
	b = appendString(b, s.name)
	if derived {
		b = append(b, `,"`+XRayW3CAnnotation+`":"`...)
		b = appendHex(b, s.ctx.TraceID[:])
		b = append(b, '"')
	}
	if len(attrs) > 0 {
		b = append(b, ',')
		b = appendMembers(b, attrs, true)
	}
	return append(b, "}}"...)
}

// appendSeconds appends t in unix seconds, to the microsecond.
func appendSeconds(b []byte, t time.Time) []byte {
	return strconv.AppendFloat(b, float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

// annotationKey is k with every character X-Ray refuses in an annotation
// key (it takes letters, digits and underscores) as an underscore.
func annotationKey(k string) string {
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b := []byte(k)
			for j := i; j < len(b); j++ {
				if c := b[j]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return k
}
