package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/verify"
)

// Prefixes of Standard Webhooks Ed25519 (v1a) keys.
const (
	// SigningKeyPrefix starts a private signing key: "whsk_" and the
	// standard (padded) base64 of the 64-byte key pair, seed then public
	// key (see the package documentation for why this layout).
	SigningKeyPrefix = "whsk_"
	// PublicKeyPrefix starts a public key: "whpk_" and the standard
	// (padded) base64 of the 32-byte public key.
	PublicKeyPrefix = verify.PublicKeyPrefix
)

// v1aPrefix starts each v1a entry in the signature header.
const v1aPrefix = "v1a,"

// NewSigningKey returns a new Ed25519 signing key in whsk_ form, its seed
// the 32 bytes read from rand (normally crypto/rand.Reader).
func NewSigningKey(rand io.Reader) (string, error) {
	if rand == nil {
		return "", errors.New("signing: nil random source")
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return "", fmt.Errorf("signing: reading random bytes: %w", err)
	}
	return SigningKeyPrefix + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed)), nil
}

// ParseSigningKey checks that s is a whsk_ signing key and returns it: 64
// bytes after the prefix, whose second half is the public key of the
// first (a pair that disagrees would sign with one key and publish
// another). Error messages never contain the key.
func ParseSigningKey(s string) (ed25519.PrivateKey, error) {
	enc, ok := strings.CutPrefix(s, SigningKeyPrefix)
	if !ok || enc == "" {
		return nil, fmt.Errorf("signing: signing key does not start with %q followed by a key", SigningKeyPrefix)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("signing: signing key is not standard base64: %w", err)
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("signing: signing key is %d bytes, want %d (seed and public key)", len(raw), ed25519.PrivateKeySize)
	}
	key := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
	if !bytes.Equal(key[ed25519.SeedSize:], raw[ed25519.SeedSize:]) {
		return nil, errors.New("signing: signing key's public half is not its seed's public key")
	}
	return key, nil
}

// ParsePublicKey checks that s is a whpk_ public key and returns it.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	enc, ok := strings.CutPrefix(s, PublicKeyPrefix)
	if !ok || enc == "" {
		return nil, fmt.Errorf("signing: public key does not start with %q followed by a key", PublicKeyPrefix)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("signing: public key is not standard base64: %w", err)
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("signing: public key is %d bytes, want %d", len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// EncodePublicKey is pub in whpk_ form.
func EncodePublicKey(pub ed25519.PublicKey) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// PublicKeyOf returns the whpk_ public key of a whsk_ signing key.
func PublicKeyOf(signingKey string) (string, error) {
	key, err := ParseSigningKey(signingKey)
	if err != nil {
		return "", err
	}
	return EncodePublicKey(key.Public().(ed25519.PublicKey)), nil
}

// Thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 public key: the
// unpadded base64url SHA-256 of its JWK's required members
// {"crv":"Ed25519","kty":"OKP","x":...}, in that order, without spaces.
func Thumbprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Keys are what NewSignerWith signs with.
type Keys struct {
	// Secrets (whsec_) make the v1 (HMAC-SHA256) entries, one each, in
	// order. None: no v1 entry.
	Secrets []string
	// SigningKeys (whsk_) make the v1a (Ed25519) entries, one each, in
	// order, after the v1 ones. None: no v1a entry.
	SigningKeys []string
}

// NewSignerWith returns a Signer for an endpoint's schemes: a v1 entry per
// secret and a v1a entry per signing key. At least one key of either kind
// is required; errors name a key's position, never its value.
func NewSignerWith(k Keys) (*Signer, error) {
	if len(k.Secrets)+len(k.SigningKeys) == 0 {
		return nil, errors.New("signing: new signer: at least one secret or signing key is required")
	}
	s := &Signer{}
	if len(k.Secrets) > 0 {
		r, err := newKeyring(k.Secrets)
		if err != nil {
			return nil, fmt.Errorf("signing: new signer: %w", err)
		}
		s.ring = r
	}
	for i, sk := range k.SigningKeys {
		key, err := ParseSigningKey(sk)
		if err != nil {
			return nil, fmt.Errorf("signing key %d: %w", i, err)
		}
		s.ed = append(s.ed, key)
	}
	return s, nil
}

// signV1a is Sign for a Signer with Ed25519 keys: the v1 entries, if any,
// then one v1a entry per key.
func (s *Signer) signV1a(id string, ts time.Time, body []byte) string {
	var tsBuf [20]byte
	tsStr := strconv.AppendInt(tsBuf[:0], ts.Unix(), 10)
	msg := make([]byte, 0, len(id)+len(tsStr)+2+len(body))
	msg = append(append(append(append(append(msg, id...), '.'), tsStr...), '.'), body...)
	v1 := s.signV1(id, ts, body)
	const entry = len(v1aPrefix) + 88 // base64 of a 64-byte signature
	var b strings.Builder
	b.Grow(len(v1) + len(s.ed)*(entry+1))
	b.WriteString(v1)
	for _, key := range s.ed {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v1aPrefix)
		b.WriteString(base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)))
	}
	return b.String()
}
