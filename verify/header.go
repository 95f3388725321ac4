package verify

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseTimestamp parses a timestamp made only of ASCII digits: no sign, no
// spaces, no fraction.
func parseTimestamp(s string) (int64, error) {
	if len(s) > maxTimestampLen {
		return 0, fmt.Errorf("%w: %s is out of range", ErrInvalidHeaders, HeaderTimestamp)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %s is not a non-negative decimal integer", ErrInvalidHeaders, HeaderTimestamp)
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is out of range", ErrInvalidHeaders, HeaderTimestamp)
	}
	return sec, nil
}

// parseSignatures returns the decoded "v1" (HMAC-SHA256) and "v1a"
// (Ed25519, at most maxV1aEntries) signatures of a webhook-signature value:
// entries separated by any run of spaces, each "<version>,<base64>".
// Malformed entries, entries of other versions and entries that are not a
// canonical base64 signature of their scheme's size are skipped: another
// entry may still match. It fails with ErrInvalidHeaders only if no entry
// has the "<version>,<signature>" shape at all.
func parseSignatures(header string) (v1, v1a [][]byte, err error) {
	wellFormed := false
	for _, entry := range strings.Fields(header) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version == "" || sig == "" {
			continue
		}
		wellFormed = true
		switch {
		case version == "v1" && len(sig) == sigLen:
			dec := make([]byte, sigLen)
			n, err := strictB64.Decode(dec, []byte(sig))
			if err == nil && n == sha256.Size {
				v1 = append(v1, dec[:n])
			}
		case version == "v1a" && len(v1a) < maxV1aEntries:
			if dec := decodeV1a(sig); dec != nil {
				v1a = append(v1a, dec)
			}
		}
	}
	if !wellFormed {
		return nil, nil, fmt.Errorf("%w: %s has no \"<version>,<signature>\" entry", ErrInvalidHeaders, HeaderSignature)
	}
	return v1, v1a, nil
}

// checkTimestamp reports whether sec (Unix seconds) lies within the
// tolerance of the verifier's clock, both bounds included.
func (v *Verifier) checkTimestamp(sec int64) error {
	tol, now := DefaultTolerance, time.Now
	if v != nil && v.Tolerance > 0 {
		tol = v.Tolerance
	}
	if v != nil && v.Now != nil {
		now = v.Now
	}
	nowT := now()
	cur := nowT.Unix()
	// Whole seconds first, in uint64 arithmetic that cannot overflow for
	// any int64 pair: that rejects far-away timestamps without building a
	// time.Time that might overflow. What is still close is compared exactly.
	tolSec := uint64(tol/time.Second) + 1
	switch {
	case sec < cur && uint64(cur)-uint64(sec) > tolSec:
		return fmt.Errorf("%w: %s is %ds behind the clock (tolerance %s)", ErrTimestampTooOld, HeaderTimestamp, uint64(cur)-uint64(sec), tol)
	case sec > cur && uint64(sec)-uint64(cur) > tolSec:
		return fmt.Errorf("%w: %s is %ds ahead of the clock (tolerance %s)", ErrTimestampTooNew, HeaderTimestamp, uint64(sec)-uint64(cur), tol)
	}
	d := nowT.Sub(time.Unix(sec, 0))
	switch {
	case d > tol:
		return fmt.Errorf("%w: %s is %s behind the clock (tolerance %s)", ErrTimestampTooOld, HeaderTimestamp, d, tol)
	case -d > tol:
		return fmt.Errorf("%w: %s is %s ahead of the clock (tolerance %s)", ErrTimestampTooNew, HeaderTimestamp, -d, tol)
	}
	return nil
}
