// Package apikey makes and checks API keys. A key is shown once, when it is
// made; only its SHA-256 hash is stored. Keys carry 256 random bits, so a
// plain hash (no salt, no stretching) is enough: there is nothing to guess.
//
// Format: "hk_" + key id (12 base32 characters, safe to log and to show in
// listings) + "_" + 43 base64url characters of secret.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Key is a freshly made API key.
type Key struct {
	// Plain is the key itself: give it to its owner once, store it nowhere.
	Plain string
	// ID identifies the key in listings and logs.
	ID string
	// Hash is what is stored and looked up.
	Hash string
}

// New makes a key from rand (crypto/rand.Reader in production).
func New(rand io.Reader) (Key, error) {
	var b [8 + 32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return Key{}, fmt.Errorf("make API key: %w", err)
	}
	id := idEncoding.EncodeToString(b[:8])[:12]
	plain := "hk_" + id + "_" + base64.RawURLEncoding.EncodeToString(b[8:])
	return Key{Plain: plain, ID: id, Hash: Hash(plain)}, nil
}

// Hash returns the stored form of a key: hex SHA-256.
func Hash(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// ID returns the key id of a well-formed key, or "" (for logs: never log the key).
func ID(plain string) string {
	if !strings.HasPrefix(plain, "hk_") || len(plain) != 3+12+1+43 || plain[15] != '_' {
		return ""
	}
	return plain[3:15]
}

// Equal compares a presented key with a configured one in constant time.
func Equal(presented, configured string) bool {
	a, b := sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(configured))
	return configured != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
