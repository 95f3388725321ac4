package api

import (
	"strings"

	"github.com/hookline/hookline/internal/domain"
)

// The syntax of the names a request may carry, checked by hand rather than
// by regular expressions compiled at start (names_test.go checks them
// against those expressions). Every byte outside ASCII is refused.

// validTenantID reports whether s is 1 to 64 letters, digits, _ or -.
func validTenantID(s string) bool {
	return len(s) >= 1 && len(s) <= 64 && allBytes(s, isWordByte)
}

// validEventType reports whether s is "*", an event type (segments of
// letters, digits, _ or -, joined by dots: payment.succeeded) or such a
// type followed by ".*", a prefix (payment.*).
func validEventType(s string) bool {
	if s == "*" {
		return true
	}
	for seg := range strings.SplitSeq(strings.TrimSuffix(s, ".*"), ".") {
		if seg == "" || !allBytes(seg, isWordByte) {
			return false
		}
	}
	return true
}

// validHeaderName reports whether s is an HTTP field name: one or more
// token characters (RFC 9110, section 5.6.2).
func validHeaderName(s string) bool {
	return s != "" && allBytes(s, func(c byte) bool {
		return isWordByte(c) || strings.IndexByte("!#$%&'*+.^`|~", c) >= 0
	})
}

// validHeaderValue reports whether s can be sent as an HTTP field value
// (domain.ValidHeaderValue).
func validHeaderValue(s string) bool { return domain.ValidHeaderValue(s) }

// isWordByte reports whether c is an ASCII letter, digit, _ or -.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
