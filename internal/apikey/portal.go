package apikey

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// PortalPrefix starts every portal link token, so the API tells one from an
// API key before any lookup.
const PortalPrefix = "plt_"

// NewPortalToken makes a portal link's token, "plt_" + 43 base64url
// characters of 256 random bits from rand, and its hash (Hash, as for keys).
func NewPortalToken(rand io.Reader) (plain, hash string, err error) {
	var b [32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", "", fmt.Errorf("make portal token: %w", err)
	}
	plain = PortalPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return plain, Hash(plain), nil
}

// IsPortalToken reports whether a presented credential is a portal link's
// token (by its prefix: it may still be unknown).
func IsPortalToken(s string) bool { return strings.HasPrefix(s, PortalPrefix) }
