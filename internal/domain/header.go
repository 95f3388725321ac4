package domain

import "net/textproto"

// ReservedHeaders are the request headers hookline sets itself on every
// attempt, or that HTTP owns, in their canonical form: an endpoint's custom
// headers may not use them, and the sender sets them after the custom ones.
var ReservedHeaders = []string{
	"Content-Type", "Content-Length", "Host", "User-Agent", "Transfer-Encoding", "Connection",
	"Idempotency-Key", "X-Idempotency-Key", "X-Event-Id", "X-Event-Type", "X-Attempt",
	"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature", "Te", "Trailer", "Upgrade",
	"Traceparent",
}

// ReservedHeader reports whether a header name, in any case, is one of
// ReservedHeaders.
func ReservedHeader(name string) bool {
	canonical := textproto.CanonicalMIMEHeaderKey(name)
	for _, h := range ReservedHeaders {
		if h == canonical {
			return true
		}
	}
	return false
}

// ValidHeaderValue reports whether s can be sent as an HTTP field value:
// no control character but horizontal tab (RFC 9110, section 5.5; the
// rule net/http's client enforces before it sends a request).
func ValidHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}
