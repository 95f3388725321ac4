package trace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"time"
)

// Header is the name of the HTTP header, the SQS and SNS message
// attribute, the EventBridge detail field and the outbox item attribute
// that carry a trace context, as W3C Trace Context names it.
const Header = "traceparent"

// Len is the length of a version 00 traceparent:
// "00-" 32 hex "-" 16 hex "-" 2 hex.
const Len = 55

// Context is one span's place in a trace: the trace it belongs to, its own
// id and the trace flags (bit 0: sampled). A Context with a zero SpanID
// is a trace's root, no span yet: a span started under it has no parent.
type Context struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// FlagSampled is the sampled bit of the trace flags.
const FlagSampled = 0x01

// Parse reads a traceparent header value by W3C Trace Context's rules:
// version 00 exactly 55 characters; a later version at least that, with
// a "-" after the flags when longer; lowercase hex only; version ff, an
// all-zero trace id or span id refused. ok is false for anything else
// (nothing is an error: the caller starts a new trace).
func Parse(s string) (c Context, ok bool) {
	if len(s) < Len || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return Context{}, false
	}
	ver, ok1 := hexByte(s[0:2])
	switch {
	case !ok1 || ver == 0xff:
		return Context{}, false
	case ver == 0 && len(s) != Len:
		return Context{}, false
	case ver != 0 && len(s) > Len && s[Len] != '-':
		return Context{}, false
	}
	flags, ok2 := hexByte(s[53:55])
	if !ok2 || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) {
		return Context{}, false
	}
	_, _ = hex.Decode(c.TraceID[:], []byte(s[3:35]))
	_, _ = hex.Decode(c.SpanID[:], []byte(s[36:52]))
	c.Flags = flags
	if c.TraceID == ([16]byte{}) || c.SpanID == ([8]byte{}) {
		return Context{}, false
	}
	return c, true
}

func hexByte(s string) (byte, bool) {
	if !lowerHex(s) {
		return 0, false
	}
	var b [1]byte
	_, _ = hex.Decode(b[:], []byte(s))
	return b[0], true
}

// lowerHex reports whether s is made of 0-9 and a-f only.
func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// String is the traceparent header value of c (version 00), "" when c
// has no span (a root, or the zero Context).
func (c Context) String() string {
	if !c.Valid() || c.SpanID == ([8]byte{}) {
		return ""
	}
	var b [Len]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], c.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], c.SpanID[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{c.Flags})
	return string(b[:])
}

// Valid reports whether c names a trace (a non-zero trace id).
func (c Context) Valid() bool { return c.TraceID != [16]byte{} }

// TraceIDHex is the trace id as 32 lowercase hex digits.
func (c Context) TraceIDHex() string { return hex.EncodeToString(c.TraceID[:]) }

// SpanIDHex is the span id as 16 lowercase hex digits, "" for a root.
func (c Context) SpanIDHex() string {
	if c.SpanID == ([8]byte{}) {
		return ""
	}
	return hex.EncodeToString(c.SpanID[:])
}

// Sampled reports the sampled flag.
func (c Context) Sampled() bool { return c.Flags&FlagSampled != 0 }

// New starts a trace at now: a root with a fresh trace id whose first four
// bytes are now in unix seconds, as X-Ray's trace ids are (XRayTraceID),
// the other twelve random; sampled.
func New(now time.Time) Context {
	var c Context
	binary.BigEndian.PutUint32(c.TraceID[0:4], uint32(now.Unix()))
	binary.BigEndian.PutUint64(c.TraceID[4:12], rand.Uint64())
	binary.BigEndian.PutUint32(c.TraceID[12:16], rand.Uint32())
	c.Flags = FlagSampled
	return c
}

// Derive is the root of the trace hookline starts for an event that came
// without one, from key (the tenant and event id) and at (the event's
// occurrence): the first four bytes of the trace id are at in unix
// seconds, the other twelve those of key's SHA-256, sampled. Every hop
// that finds no trace context on the event (enqueue, a message of an
// earlier version, a resend) derives the same trace id, with nothing
// stored.
func Derive(key string, at time.Time) Context {
	var c Context
	sum := sha256.Sum256([]byte(key))
	binary.BigEndian.PutUint32(c.TraceID[0:4], uint32(at.Unix()))
	copy(c.TraceID[4:], sum[:12])
	c.Flags = FlagSampled
	return c
}

// EventKey is the key Derive is given for an event: its tenant and id.
func EventKey(tenantID, eventID string) string { return tenantID + "/" + eventID }

// Or returns the Context traceparent s names, else fallback (a malformed
// or absent value is ignored, never an error).
func Or(s string, fallback Context) Context {
	if c, ok := Parse(s); ok {
		return c
	}
	return fallback
}

// newSpanID is a random, non-zero span id.
func newSpanID() [8]byte {
	var id [8]byte
	for id == ([8]byte{}) {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
