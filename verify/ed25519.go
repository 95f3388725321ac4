package verify

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// PublicKeyPrefix starts every Standard Webhooks Ed25519 public key
// ("whpk_"), the key a receiver verifies "v1a" signatures with.
const PublicKeyPrefix = "whpk_"

const (
	// v1aSigLen is the length of a base64-encoded Ed25519 signature.
	v1aSigLen = 88 // base64.StdEncoding.EncodedLen(ed25519.SignatureSize)
	// maxV1aEntries bounds the "v1a" entries Verify checks: each costs an
	// Ed25519 verification per public key, and hookline sends at most two
	// (a key and, while it rotates, the one it replaces). Later ones are
	// ignored, so a header stuffed with entries costs a bounded amount.
	maxV1aEntries = 8
)

// parsePublicKey returns the Ed25519 key of "whpk_" followed by the
// standard (padded) base64 encoding of its 32 bytes. Its errors never quote
// the key.
func parsePublicKey(s string) (ed25519.PublicKey, error) {
	enc, ok := strings.CutPrefix(s, PublicKeyPrefix)
	if !ok || enc == "" {
		return nil, fmt.Errorf("no key after %q", PublicKeyPrefix)
	}
	key, err := strictB64.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("key after %q is not standard base64: %v", PublicKeyPrefix, err)
	}
	if len(key) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key after %q is %d bytes, an Ed25519 public key is %d", PublicKeyPrefix, len(key), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(key), nil
}

// parseKey adds one key given to New to v: a "whpk_" public key (v1a) or a
// "whsec_" secret (v1).
func (v *Verifier) parseKey(s string) error {
	if strings.HasPrefix(s, PublicKeyPrefix) {
		pub, err := parsePublicKey(s)
		if err != nil {
			return err
		}
		v.pubs = append(v.pubs, pub)
		return nil
	}
	k, err := parseSecret(s)
	if err != nil {
		return err
	}
	v.keys = append(v.keys, k)
	return nil
}

// decodeV1a returns the signature of a "v1a" entry's value, or nil when it
// is not a canonical base64 Ed25519 signature.
func decodeV1a(sig string) []byte {
	if len(sig) != v1aSigLen {
		return nil
	}
	dec := make([]byte, ed25519.SignatureSize+2)
	n, err := strictB64.Decode(dec, []byte(sig))
	if err != nil || n != ed25519.SignatureSize {
		return nil
	}
	return dec[:n]
}

// verifyV1a reports whether one of sigs is an Ed25519 signature of
// "{id}.{ts}.{body}" by one of pubs.
func verifyV1a(pubs []ed25519.PublicKey, sigs [][]byte, id, ts string, body []byte) bool {
	if len(pubs) == 0 || len(sigs) == 0 {
		return false
	}
	msg := make([]byte, 0, len(id)+len(ts)+2+len(body))
	msg = append(append(append(append(append(msg, id...), '.'), ts...), '.'), body...)
	for _, pub := range pubs {
		for _, sig := range sigs {
			if ed25519.Verify(pub, msg, sig) {
				return true
			}
		}
	}
	return false
}

// errNoKeys is the reason a Verifier with neither secrets nor public keys
// matches nothing.
var errNoKeys = errors.New("verifier has no secrets or public keys (build it with New)")

// encodePublicKey is the "whpk_" form of an Ed25519 public key.
func encodePublicKey(pub []byte) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}
