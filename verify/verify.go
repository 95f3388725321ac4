package verify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// SecretPrefix starts every Standard Webhooks secret.
const SecretPrefix = "whsec_"

// Names of the headers that carry a Standard Webhooks signature.
const (
	// HeaderID holds the unique message id.
	HeaderID = "webhook-id"
	// HeaderTimestamp holds the time of signing in Unix seconds.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature holds the space-separated "v1,<base64>" signatures.
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is the largest gap, either way, between a message's
// timestamp and the verifier's clock, used when Verifier.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// DefaultMaxBodyBytes is the largest body VerifyRequest reads, used when
// Verifier.MaxBodyBytes is zero. hookline's own requests stay well below it.
const DefaultMaxBodyBytes = 1 << 20

// Errors that Verify, VerifyRequest and New wrap; test for them with
// errors.Is.
var (
	// ErrMissingHeaders means webhook-id, webhook-timestamp or
	// webhook-signature is absent or empty.
	ErrMissingHeaders = errors.New("verify: missing required headers")
	// ErrInvalidHeaders means a header is present but cannot be parsed: a
	// timestamp that is not a non-negative decimal integer, or a signature
	// header without any "<version>,<signature>" entry.
	ErrInvalidHeaders = errors.New("verify: invalid headers")
	// ErrTimestampTooOld means the timestamp is further in the past than the
	// tolerance allows (a late delivery or a replay).
	ErrTimestampTooOld = errors.New("verify: timestamp too old")
	// ErrTimestampTooNew means the timestamp is further in the future than
	// the tolerance allows.
	ErrTimestampTooNew = errors.New("verify: timestamp too new")
	// ErrNoMatchingSignature means no "v1" signature matched any secret
	// and no "v1a" signature matched any public key.
	ErrNoMatchingSignature = errors.New("verify: no matching signature")
	// ErrInvalidSecret means a key given to New is neither "whsec_"
	// followed by non-empty standard base64 nor "whpk_" followed by the
	// standard base64 of a 32-byte Ed25519 public key.
	ErrInvalidSecret = errors.New("verify: invalid secret")
	// ErrBodyTooLarge means the request body is longer than MaxBodyBytes.
	ErrBodyTooLarge = errors.New("verify: body too large")
)

const (
	// sigLen is the length of a base64-encoded HMAC-SHA256.
	sigLen = 44 // base64.StdEncoding.EncodedLen(sha256.Size)
	// maxTimestampLen bounds the digits parsed; no valid int64 is longer.
	maxTimestampLen = 19
)

// strictB64 rejects non-canonical encodings, so every signature has exactly
// one accepted spelling (as hookline's signer and the reference library
// produce).
var strictB64 = base64.StdEncoding.Strict()

// Verifier checks the signed requests hookline sends. Build it with New; set
// its fields, if at all, before first use.
type Verifier struct {
	// Tolerance is the largest allowed gap, in either direction, between
	// the webhook-timestamp and Now(). Zero or negative means
	// DefaultTolerance (5 minutes).
	Tolerance time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes is the largest body VerifyRequest reads. Zero or
	// negative means DefaultMaxBodyBytes (1 MiB).
	MaxBodyBytes int64

	keys [][]byte            // HMAC keys of the "whsec_" secrets (v1)
	pubs []ed25519.PublicKey // the "whpk_" public keys (v1a)
}

// New returns a Verifier that accepts a signature made with any of keys,
// each as hookline shows it: a "whsec_..." secret verifies "v1" (HMAC)
// signatures, a "whpk_..." public key "v1a" (Ed25519) ones, and the two
// may be mixed. Pass the old and the new key while an endpoint's key
// rotates. At least one key is required; a malformed one fails with an
// error wrapping ErrInvalidSecret that names its position, never its
// value.
func New(keys ...string) (*Verifier, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: at least one secret or public key is required", ErrInvalidSecret)
	}
	v := &Verifier{}
	for i, s := range keys {
		if err := v.parseKey(s); err != nil {
			what := "secret"
			if strings.HasPrefix(s, PublicKeyPrefix) {
				what = "public key"
			}
			return nil, fmt.Errorf("%w: %s %d: %s", ErrInvalidSecret, what, i, err)
		}
	}
	return v, nil
}

// parseSecret returns the HMAC key of a secret. Its errors never quote the
// secret: base64.CorruptInputError reports only an offset.
func parseSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	switch {
	case s == "":
		return nil, errors.New("empty")
	case !ok:
		return nil, fmt.Errorf("does not start with %q", SecretPrefix)
	case enc == "":
		return nil, fmt.Errorf("no key after %q", SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("key after %q is not standard base64: %v", SecretPrefix, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("empty key after %q", SecretPrefix)
	}
	return key, nil
}

// Verify checks the webhook-id, webhook-timestamp and webhook-signature
// values in header against body, which must be the raw request body as
// received. It returns nil if the request is authentic and fresh; otherwise
// an error wrapping one of the package's sentinel errors (see the package
// documentation).
func (v *Verifier) Verify(header http.Header, body []byte) error {
	id, ts, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	switch {
	case id == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderID)
	case ts == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderTimestamp)
	case strings.TrimSpace(sigs) == "":
		return fmt.Errorf("%w: %s", ErrMissingHeaders, HeaderSignature)
	}
	sec, err := parseTimestamp(ts)
	if err != nil {
		return err
	}
	if err := v.checkTimestamp(sec); err != nil {
		return err
	}
	entries, v1a, err := parseSignatures(sigs)
	if err != nil {
		return err
	}
	if v == nil || len(v.keys)+len(v.pubs) == 0 {
		return fmt.Errorf("%w: %v", ErrNoMatchingSignature, errNoKeys)
	}
	for _, key := range v.keys {
		want := sign(key, id, ts, body)
		for _, got := range entries {
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	if verifyV1a(v.pubs, v1a, id, ts, body) {
		return nil
	}
	return ErrNoMatchingSignature
}

// VerifyRequest reads r's body (at most MaxBodyBytes), verifies it with
// Verify and returns it. It always leaves r.Body readable from the start,
// so a handler can decode it afterwards. A longer body fails with
// ErrBodyTooLarge and is not verified.
func (v *Verifier) VerifyRequest(r *http.Request) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil request", ErrMissingHeaders)
	}
	body, err := v.readBody(r)
	if err != nil {
		return nil, err
	}
	return body, v.Verify(r.Header, body)
}

// readBody reads up to the body limit and puts back a body that yields the
// same bytes, followed by whatever was not read.
func (v *Verifier) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	limit := int64(DefaultMaxBodyBytes)
	if v != nil && v.MaxBodyBytes > 0 {
		limit = v.MaxBodyBytes
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, limit+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), orig), orig}
	if err != nil {
		return nil, fmt.Errorf("verify: reading body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBodyTooLarge, limit)
	}
	return body, nil
}

// readCloser restores a request body: reads come from the replay, Close
// closes the original.
type readCloser struct {
	io.Reader
	io.Closer
}

// sign returns the raw HMAC-SHA256 of "{id}.{ts}.{body}" under key.
func sign(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
