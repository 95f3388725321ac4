package api

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The regular expressions the hand-written checks replaced: they define the
// syntax, and the checks must agree with them on every input.
var (
	tenantIDRE   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	eventTypeRE  = regexp.MustCompile(`^(\*|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?)$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// Any byte but a control character other than tab; a byte that is not
	// UTF-8 reads as U+FFFD, which is allowed like the byte itself.
	headerValueRE = regexp.MustCompile(`^[^\x00-\x08\x0a-\x1f\x7f]*$`)
)

var nameSamples = []string{
	"", "*", ".", "..", ".*", "*.*", "a", "a.", ".a", "a..b", "a.b", "a.*", "a.*.*", "a.b.*", "*.a", "a*", "a.b*",
	"payment.succeeded", "payment_intent.created-v2", "A-Z_0.9", "X-Custom-Header", "x!#$%&'*+.^_`|~-",
	"with space", "tab\t", "colon:", "slash/", "quote\"", "comma,", "semi;", "paren(", "brace{", "at@",
	"new\nline", "a\n", "\n", "nul\x00", "bell\x07", "del\x7f", "esc\x1b[0m", "cr\r", "a\tb", "\x80\x9f", "é", "ａ", "a\xff", "\xff", "\u00a0",
	strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a.", 40) + "*",
}

func TestNameChecksAgreeWithTheirExpressions(t *testing.T) {
	t.Parallel()
	for _, s := range nameSamples {
		requireAgree(t, s)
	}
	// The documented examples.
	require.True(t, validEventType("payment.succeeded"))
	require.True(t, validEventType("payment.*"))
	require.True(t, validEventType("*"))
	require.False(t, validEventType("payment.*.x"))
	require.True(t, validHeaderName("X-Signature-Extra"))
	require.False(t, validHeaderName("X Extra"))
	require.True(t, validHeaderValue("Bearer abc, q=0.5\t(tab allowed)"))
	require.False(t, validHeaderValue("a\x01b"))
	require.False(t, validHeaderValue("\x7f"))
	require.True(t, validTenantID("acme_co-1"))
	require.False(t, validTenantID(strings.Repeat("t", 65)))
}

func FuzzNameChecks(f *testing.F) {
	for _, s := range nameSamples {
		f.Add(s)
	}
	f.Fuzz(requireAgree)
}

func requireAgree(t *testing.T, s string) {
	t.Helper()
	require.Equal(t, tenantIDRE.MatchString(s), validTenantID(s), "tenant id %q", s)
	require.Equal(t, eventTypeRE.MatchString(s), validEventType(s), "event type %q", s)
	require.Equal(t, headerNameRE.MatchString(s), validHeaderName(s), "header name %q", s)
	require.Equal(t, headerValueRE.MatchString(s), validHeaderValue(s), "header value %q", s)
}
