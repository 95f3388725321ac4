package signing

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/verify"
)

// SecretPrefix is the prefix that every Standard Webhooks secret starts with.
const SecretPrefix = verify.SecretPrefix

// Names of the HTTP headers that carry a Standard Webhooks signature.
const (
	// HeaderID is the header holding the unique message identifier.
	HeaderID = verify.HeaderID
	// HeaderTimestamp is the header holding the Unix timestamp in seconds.
	HeaderTimestamp = verify.HeaderTimestamp
	// HeaderSignature is the header holding the space-separated signatures.
	HeaderSignature = verify.HeaderSignature
)

// DefaultTolerance is the largest allowed gap between a message's timestamp
// and the verifier's clock, used when Verifier.Tolerance is zero.
const DefaultTolerance = verify.DefaultTolerance

// Sentinel errors returned (possibly wrapped) by Verify and VerifyRequest.
// They are the verify package's errors of the same meaning, so errors.Is
// matches either name.
var (
	// ErrNoMatch means no v1 signature in the header matched any key.
	ErrNoMatch = verify.ErrNoMatchingSignature
	// ErrTimestampTooOld means the timestamp is further in the past than the tolerance allows.
	ErrTimestampTooOld = verify.ErrTimestampTooOld
	// ErrTimestampTooNew means the timestamp is further in the future than the tolerance allows.
	ErrTimestampTooNew = verify.ErrTimestampTooNew
	// ErrMissingHeader means the id, timestamp or signature is empty or absent.
	ErrMissingHeader = verify.ErrMissingHeaders
	// ErrInvalidHeader means a header is present but cannot be parsed.
	ErrInvalidHeader = verify.ErrInvalidHeaders
)

const (
	// secretBytes is the number of random key bytes NewSecret generates.
	secretBytes = 32
	// v1Prefix starts each v1 entry in the signature header.
	v1Prefix = "v1,"
	// sigLen is the length of a base64-encoded HMAC-SHA256.
	sigLen = 44 // base64.StdEncoding.EncodedLen(sha256.Size)
	// entryLen is the length of one "v1,<sig>" entry.
	entryLen = len(v1Prefix) + sigLen
	// maxPooledBuf caps the scratch buffer kept in the pool so that one
	// unusually long id cannot pin memory.
	maxPooledBuf = 256
)

// NewSecret returns a new secret: SecretPrefix followed by the standard
// base64 encoding of 32 bytes read from rand (normally crypto/rand.Reader).
func NewSecret(rand io.Reader) (string, error) {
	if rand == nil {
		return "", errors.New("signing: nil random source")
	}
	var key [secretBytes]byte
	if _, err := io.ReadFull(rand, key[:]); err != nil {
		return "", fmt.Errorf("signing: reading random bytes: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:]), nil
}

// ParseSecret checks that s is a valid secret and returns its HMAC key: the
// base64-decoded bytes after SecretPrefix. Error messages never contain the
// secret.
func ParseSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("signing: secret is empty")
	}
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("signing: secret does not start with %q", SecretPrefix)
	}
	if enc == "" {
		return nil, fmt.Errorf("signing: secret has no key after the %q prefix", SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		// base64.CorruptInputError only reports a byte offset, never the input.
		return nil, fmt.Errorf("signing: secret key after the %q prefix is not valid standard base64: %w", SecretPrefix, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("signing: secret has an empty key after the %q prefix", SecretPrefix)
	}
	return key, nil
}

// keyring holds the Signer's decoded keys plus a pool of per-call HMAC
// state.
type keyring struct {
	keys [][]byte
	pool sync.Pool // of *macState
}

// macState is scratch space for one Sign call: one HMAC per key and buffers
// that would otherwise escape to the heap.
type macState struct {
	macs []hash.Hash
	buf  []byte // "{id}.{ts}."
	sums [][sha256.Size]byte
	enc  [sigLen]byte
}

func newKeyring(secrets []string) (*keyring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("signing: at least one secret is required")
	}
	keys := make([][]byte, len(secrets))
	for i, s := range secrets {
		k, err := ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i, err)
		}
		keys[i] = k
	}
	return &keyring{keys: keys}, nil
}

func (r *keyring) get() *macState {
	if st, ok := r.pool.Get().(*macState); ok {
		return st
	}
	st := &macState{
		macs: make([]hash.Hash, len(r.keys)),
		buf:  make([]byte, 0, 64),
		sums: make([][sha256.Size]byte, len(r.keys)),
	}
	for i, k := range r.keys {
		st.macs[i] = hmac.New(sha256.New, k)
	}
	return st
}

func (r *keyring) put(st *macState) {
	for _, m := range st.macs {
		m.Reset()
	}
	if cap(st.buf) > maxPooledBuf {
		st.buf = make([]byte, 0, 64)
	}
	r.pool.Put(st)
}

// sum computes the HMAC of "{id}.{ts}.{body}" under every key into st.sums.
// ts is already in decimal form.
func (st *macState) sum(id string, ts []byte, body []byte) {
	st.buf = append(st.buf[:0], id...)
	st.buf = append(st.buf, '.')
	st.buf = append(st.buf, ts...)
	st.buf = append(st.buf, '.')
	for i, m := range st.macs {
		m.Write(st.buf)
		m.Write(body)
		m.Sum(st.sums[i][:0])
	}
}

// Signer produces webhook-signature header values. Create it with NewSigner.
// It is safe for concurrent use.
type Signer struct {
	ring *keyring             // v1 secrets; nil: none
	ed   []ed25519.PrivateKey // v1a keys
}

// NewSigner returns a Signer for the given secrets. At least one secret is
// required and every secret must pass ParseSecret. Sign emits one signature
// per secret, in this order.
func NewSigner(secrets ...string) (*Signer, error) {
	r, err := newKeyring(secrets)
	if err != nil {
		return nil, fmt.Errorf("signing: new signer: %w", err)
	}
	return &Signer{ring: r}, nil
}

// Sign returns the webhook-signature header value for a message. It has one
// "v1,<base64 signature>" entry per secret, separated by single spaces and in
// the order the secrets were given to NewSigner. ts is truncated to whole
// Unix seconds. The caller must send the same id and ts.Unix() in the
// webhook-id and webhook-timestamp headers.
//
// A Signer made by NewSignerWith with signing keys appends one
// "v1a,<base64 Ed25519 signature>" entry per key, after the v1 ones.
func (s *Signer) Sign(id string, ts time.Time, body []byte) string {
	if s != nil && len(s.ed) > 0 {
		return s.signV1a(id, ts, body)
	}
	return s.signV1(id, ts, body)
}

// signV1 is the v1 entries of Sign, "" when s has no secret: HMAC only,
// with a single allocation once the pool is warm.
func (s *Signer) signV1(id string, ts time.Time, body []byte) string {
	if s == nil || s.ring == nil || len(s.ring.keys) == 0 {
		return ""
	}
	st := s.ring.get()
	defer s.ring.put(st)

	var tsBuf [20]byte // the longest int64 in decimal, including the sign
	st.sum(id, strconv.AppendInt(tsBuf[:0], ts.Unix(), 10), body)

	var b strings.Builder
	b.Grow(len(st.sums)*(entryLen+1) - 1)
	for i := range st.sums {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v1Prefix)
		base64.StdEncoding.Encode(st.enc[:], st.sums[i][:])
		b.Write(st.enc[:])
	}
	return b.String()
}

// Verifier checks incoming webhook signatures. Create it with NewVerifier,
// then optionally set Tolerance and Now before first use. It is safe for
// concurrent use as long as those fields are not changed afterwards.
//
// It is a thin adapter over the public verify package's Verifier: the
// parsing, the timestamp window and the signature comparison are
// verify.Verifier.Verify's, so hookline's own tests check exactly what
// receivers run.
type Verifier struct {
	// Tolerance is the largest allowed gap, in either direction, between
	// the message timestamp and Now(). Zero or negative means
	// DefaultTolerance.
	Tolerance time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time

	// pub holds the keys; its own Tolerance and Now are never set. Nil in
	// a Verifier not made by NewVerifier, which then matches nothing.
	pub *verify.Verifier
}

// NewVerifier returns a Verifier that accepts signatures made with any of the
// given secrets. Passing several secrets supports rotation. At least one
// secret is required and every secret must pass ParseSecret; otherwise the
// error wraps verify.ErrInvalidSecret and names the secret's position, never
// its value.
func NewVerifier(secrets ...string) (*Verifier, error) {
	pub, err := verify.New(secrets...)
	if err != nil {
		return nil, fmt.Errorf("signing: new verifier: %w", err)
	}
	return &Verifier{pub: pub}, nil
}

// Canonical forms of the header names, computed once so that Verify builds
// its header without canonicalising on every call.
var (
	canonicalID        = http.CanonicalHeaderKey(HeaderID)
	canonicalTimestamp = http.CanonicalHeaderKey(HeaderTimestamp)
	canonicalSignature = http.CanonicalHeaderKey(HeaderSignature)
)

// Verify checks a webhook's id, timestamp header, signature header and raw
// body.
//
// It returns nil if the timestamp is within ±Tolerance of Now() and some "v1"
// entry in signatureHeader matches some key of v; the comparison is constant
// time. Entries with other version tags are ignored. Otherwise the error
// wraps:
//   - ErrMissingHeader if id, timestamp or signatureHeader is empty;
//   - ErrInvalidHeader if timestamp is not a non-negative decimal integer of
//     at most 19 digits that fits an int64, or signatureHeader has no entry
//     of the form "<version>,<signature>";
//   - ErrTimestampTooOld or ErrTimestampTooNew if the timestamp is outside the
//     tolerance window;
//   - ErrNoMatch if no v1 signature matches.
//
// The checks are those of verify.Verifier.Verify, in its order.
func (v *Verifier) Verify(id, timestamp, signatureHeader string, body []byte) error {
	return v.VerifyRequest(http.Header{
		canonicalID:        {id},
		canonicalTimestamp: {timestamp},
		canonicalSignature: {signatureHeader},
	}, body)
}

// VerifyRequest checks the webhook-id, webhook-timestamp and
// webhook-signature values of h (as h.Get returns them) against body, with
// the same rules and errors as Verify. body must be the raw, unmodified
// request body.
func (v *Verifier) VerifyRequest(h http.Header, body []byte) error {
	if v == nil {
		return (*verify.Verifier)(nil).Verify(h, body)
	}
	// A copy per call carries this Verifier's Tolerance and Now, so the
	// shared verify.Verifier is never written and concurrent calls are safe.
	var pub verify.Verifier
	if v.pub != nil {
		pub = *v.pub
	}
	pub.Tolerance, pub.Now = v.Tolerance, v.Now
	return pub.Verify(h, body)
}
