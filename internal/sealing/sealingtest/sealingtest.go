// Package sealingtest is a fake of the part of AWS KMS that package sealing
// uses, for tests: it enforces what KMS enforces and the local cloud may
// not, and counts the calls.
package sealingtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// KeyARN is the fake's one key.
const KeyARN = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"

// KMS limits the fake holds callers to, as AWS does.
const (
	// MaxPlaintext is Encrypt's limit on the plaintext: 4,096 bytes.
	MaxPlaintext = 4096
	// MaxCiphertext is Decrypt's limit on the ciphertext blob: 6,144 bytes.
	MaxCiphertext = 6144
)

// KMS encrypts and decrypts under one key, KeyARN. A ciphertext is 64
// random bytes that index what was encrypted, so it holds no trace of the
// plaintext. Decrypt refuses a ciphertext under another encryption context
// than its Encrypt's (InvalidCiphertextException), or when asked for
// another key (IncorrectKeyException), as KMS does. Safe for concurrent use.
type KMS struct {
	mu      sync.Mutex
	sealed  map[string]record
	encrypt int
	decrypt int
	// Fail, when set, is returned by the next calls (then Encrypt and
	// Decrypt work again once it is set back to nil).
	Fail error
	// Hook, when set, runs at the start of every Decrypt, outside the lock
	// (a test makes concurrent callers meet there).
	Hook func()
}

type record struct {
	plaintext []byte
	context   map[string]string
}

// New returns an empty fake.
func New() *KMS { return &KMS{sealed: map[string]record{}} }

// Encrypt records the plaintext and its context and returns a ciphertext
// naming them.
func (k *KMS) Encrypt(_ context.Context, in *kms.EncryptInput, _ ...func(*kms.Options)) (*kms.EncryptOutput, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.encrypt++
	if k.Fail != nil {
		return nil, k.Fail
	}
	if aws.ToString(in.KeyId) != KeyARN {
		return nil, &types.NotFoundException{Message: aws.String(fmt.Sprintf("key %q does not exist (fake)", aws.ToString(in.KeyId)))}
	}
	if len(in.Plaintext) == 0 || len(in.Plaintext) > MaxPlaintext {
		return nil, errors.New("ValidationException: plaintext must be 1 to 4096 bytes (fake)")
	}
	blob := make([]byte, 64)
	if _, err := rand.Read(blob); err != nil {
		return nil, err
	}
	k.sealed[string(blob)] = record{plaintext: append([]byte(nil), in.Plaintext...), context: maps.Clone(in.EncryptionContext)}
	return &kms.EncryptOutput{CiphertextBlob: blob, KeyId: aws.String(KeyARN)}, nil
}

// Decrypt returns the plaintext of a ciphertext Encrypt returned, under
// the same encryption context.
func (k *KMS) Decrypt(_ context.Context, in *kms.DecryptInput, _ ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	if k.Hook != nil {
		k.Hook()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.decrypt++
	if k.Fail != nil {
		return nil, k.Fail
	}
	if len(in.CiphertextBlob) == 0 || len(in.CiphertextBlob) > MaxCiphertext {
		return nil, errors.New("ValidationException: ciphertext blob must be 1 to 6144 bytes (fake)")
	}
	if id := aws.ToString(in.KeyId); id != "" && id != KeyARN {
		return nil, &types.IncorrectKeyException{Message: aws.String("the ciphertext was not encrypted under the key asked for (fake)")}
	}
	r, ok := k.sealed[string(in.CiphertextBlob)]
	if !ok || !maps.Equal(r.context, in.EncryptionContext) {
		return nil, &types.InvalidCiphertextException{Message: aws.String("(fake)")}
	}
	return &kms.DecryptOutput{Plaintext: append([]byte(nil), r.plaintext...), KeyId: aws.String(KeyARN)}, nil
}

// Calls returns how many times Encrypt and Decrypt were called.
func (k *KMS) Calls() (encrypt, decrypt int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.encrypt, k.decrypt
}
