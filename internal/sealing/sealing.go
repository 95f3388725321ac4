package sealing

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// Encryption context keys and the purpose value of every sealed secret.
const (
	ContextPurpose  = "purpose"
	ContextTenant   = "tenant_id"
	ContextEndpoint = "endpoint_id"
	// Purpose is the encryption context's purpose of an endpoint signing
	// secret. The stack's grants are conditioned on it.
	Purpose = "hookline-endpoint-signing-secret"
)

// ErrInvalid wraps a sealed secret that can never be opened for the
// endpoint it was read from: not base64, or refused by KMS as a ciphertext
// of another endpoint (its encryption context differs) or of another key.
// Other errors (throttling, the network, a disabled key) may pass.
var ErrInvalid = errors.New("sealed secret cannot be opened for this endpoint")

// Ref names the endpoint a secret belongs to; the encryption context binds
// the ciphertext to it.
type Ref struct{ TenantID, EndpointID string }

// Context is the encryption context of the endpoint's secrets.
func (r Ref) Context() map[string]string {
	return map[string]string{ContextPurpose: Purpose, ContextTenant: r.TenantID, ContextEndpoint: r.EndpointID}
}

// Encrypter is what a Sealer needs of KMS.
type Encrypter interface {
	Encrypt(ctx context.Context, in *kms.EncryptInput, optFns ...func(*kms.Options)) (*kms.EncryptOutput, error)
}

// Decrypter is what an Opener needs of KMS.
type Decrypter interface {
	Decrypt(ctx context.Context, in *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

var (
	_ Encrypter = (*kms.Client)(nil)
	_ Decrypter = (*kms.Client)(nil)
)

// Sealer encrypts signing secrets under one KMS key.
type Sealer struct {
	KMS Encrypter
	// KeyID is the key's ARN (or id, or alias). Required.
	KeyID string
}

// Seal returns secret encrypted for the endpoint ref names.
func (s *Sealer) Seal(ctx context.Context, ref Ref, secret string) (string, error) {
	if s.KeyID == "" {
		return "", fmt.Errorf("seal the secret of endpoint %s: no key configured", ref.EndpointID)
	}
	out, err := s.KMS.Encrypt(ctx, &kms.EncryptInput{
		KeyId: aws.String(s.KeyID), Plaintext: []byte(secret), EncryptionContext: ref.Context(),
	})
	if err != nil {
		return "", fmt.Errorf("seal the secret of endpoint %s: %w", ref.EndpointID, err)
	}
	return base64.StdEncoding.EncodeToString(out.CiphertextBlob), nil
}

// Opener decrypts sealed secrets and keeps them, so that a warm function
// asks KMS once per secret. It is safe for concurrent use; concurrent
// opens of one secret share one Decrypt.
type Opener struct {
	KMS Decrypter
	// KeyID, when set, is the only key Decrypt may use: a ciphertext of
	// another key is refused (ErrInvalid). Default: the key the ciphertext
	// names.
	KeyID string
	// MaxEntries bounds the secrets kept; the least recently used goes
	// first. Default 4096 (about 1.5 MB).
	MaxEntries int
	// MaxAge is how long an opened secret is kept before KMS is asked
	// again, so that a key disabled, or a grant revoked, takes effect in
	// a warm function too. Default 1 h.
	MaxAge time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element
	lru     list.List // of *entry, most recently used first
}

// DefaultMaxEntries and DefaultMaxAge are an Opener's defaults.
const (
	DefaultMaxEntries = 4096
	DefaultMaxAge     = time.Hour
)

type entry struct {
	key    [sha256.Size]byte
	done   chan struct{} // closed when secret and err are set
	secret string
	err    error
	at     time.Time
}

// cacheKey binds a ciphertext to the endpoint it was read for: a ciphertext
// opened for one endpoint is never served, from the cache, to another.
func cacheKey(ref Ref, sealed string) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{ref.TenantID, ref.EndpointID, sealed} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (o *Opener) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Open returns the secret sealed for the endpoint ref names: from what it
// kept, or from KMS. An error wrapping ErrInvalid will not pass by asking
// again; any other may.
func (o *Opener) Open(ctx context.Context, ref Ref, sealed string) (string, error) {
	k := cacheKey(ref, sealed)
	maxAge := o.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	o.mu.Lock()
	if o.entries == nil {
		o.entries = map[[sha256.Size]byte]*list.Element{}
	}
	if el, ok := o.entries[k]; ok {
		e := el.Value.(*entry)
		select {
		case <-e.done:
			if e.err == nil && o.now().Sub(e.at) < maxAge {
				o.lru.MoveToFront(el)
				o.mu.Unlock()
				return e.secret, nil
			}
			o.remove(el) // too old, or failed: ask again
		default:
			// Another caller is opening it: wait for its answer.
			o.mu.Unlock()
			select {
			case <-e.done:
				return e.secret, e.err
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	e := &entry{key: k, done: make(chan struct{})}
	o.entries[k] = o.lru.PushFront(e)
	o.evict()
	o.mu.Unlock()

	e.secret, e.err = o.decrypt(ctx, ref, sealed)
	e.at = o.now()
	close(e.done)
	if e.err != nil {
		o.mu.Lock()
		if el, ok := o.entries[k]; ok && el.Value.(*entry) == e {
			o.remove(el) // errors are not kept: the next call asks again
		}
		o.mu.Unlock()
	}
	return e.secret, e.err
}

// Len is the number of secrets kept (or being opened).
func (o *Opener) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lru.Len()
}

func (o *Opener) remove(el *list.Element) {
	delete(o.entries, el.Value.(*entry).key)
	o.lru.Remove(el)
}

// evict drops the least recently used entries beyond MaxEntries.
func (o *Opener) evict() {
	limit := o.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	for o.lru.Len() > limit {
		o.remove(o.lru.Back())
	}
}

func (o *Opener) decrypt(ctx context.Context, ref Ref, sealed string) (string, error) {
	blob, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(blob) == 0 {
		return "", fmt.Errorf("open the secret of endpoint %s: not base64: %w", ref.EndpointID, ErrInvalid)
	}
	in := &kms.DecryptInput{CiphertextBlob: blob, EncryptionContext: ref.Context()}
	if o.KeyID != "" {
		in.KeyId = aws.String(o.KeyID)
	}
	out, err := o.KMS.Decrypt(ctx, in)
	var invalid *types.InvalidCiphertextException
	var incorrect *types.IncorrectKeyException
	if errors.As(err, &invalid) || errors.As(err, &incorrect) {
		return "", fmt.Errorf("open the secret of endpoint %s: %w: %w", ref.EndpointID, ErrInvalid, err)
	}
	if err != nil {
		return "", fmt.Errorf("open the secret of endpoint %s: %w", ref.EndpointID, err)
	}
	return string(out.Plaintext), nil
}
