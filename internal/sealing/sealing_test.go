package sealing_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/stretchr/testify/require"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var (
	ctx = context.Background()
	ep1 = sealing.Ref{TenantID: "t1", EndpointID: "ep_1"}
)

func seal(t *testing.T, k *sealingtest.KMS, ref sealing.Ref, s string) string {
	t.Helper()
	sealed, err := (&sealing.Sealer{KMS: k, KeyID: sealingtest.KeyARN}).Seal(ctx, ref, s)
	require.NoError(t, err)
	return sealed
}

func TestSealThenOpen(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	require.NotContains(t, sealed, secret)
	require.NotContains(t, sealed, "whsec_")
	got, err := (&sealing.Opener{KMS: k, KeyID: sealingtest.KeyARN}).Open(ctx, ep1, sealed)
	require.NoError(t, err)
	require.Equal(t, secret, got)
}

func TestContextBindsTheCiphertextToItsEndpoint(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	for name, tc := range map[string]struct {
		ref    sealing.Ref
		sealed string
		keyID  string
	}{
		"another endpoint of the tenant":       {ref: sealing.Ref{TenantID: "t1", EndpointID: "ep_2"}, sealed: sealed},
		"the same endpoint id, another tenant": {ref: sealing.Ref{TenantID: "t2", EndpointID: "ep_1"}, sealed: sealed},
		"not base64":                           {ref: ep1, sealed: "whsec_not~base64"},
		"empty":                                {ref: ep1, sealed: ""},
		"a ciphertext KMS never made":          {ref: ep1, sealed: "AAAA"},
		"another key asked for":                {ref: ep1, sealed: sealed, keyID: "arn:aws:kms:us-east-1:000000000000:key/other"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := (&sealing.Opener{KMS: k, KeyID: tc.keyID}).Open(ctx, tc.ref, tc.sealed)
			require.ErrorIs(t, err, sealing.ErrInvalid)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestSealerNeedsAKey(t *testing.T) {
	t.Parallel()
	_, err := (&sealing.Sealer{KMS: sealingtest.New()}).Seal(ctx, ep1, secret)
	require.ErrorContains(t, err, "no key configured")
}

func TestServiceErrorsAreNotInvalidAndNotKept(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	o := &sealing.Opener{KMS: k}
	k.Fail = errors.New("ThrottlingException: rate exceeded")
	_, err := o.Open(ctx, ep1, sealed)
	require.ErrorContains(t, err, "ThrottlingException")
	require.NotErrorIs(t, err, sealing.ErrInvalid, "a throttle may pass: the delivery is retried, not given up on")
	require.NotContains(t, err.Error(), sealed)
	require.Equal(t, 0, o.Len(), "a failure is not kept")

	k.Fail = nil
	got, err := o.Open(ctx, ep1, sealed)
	require.NoError(t, err)
	require.Equal(t, secret, got)
	_, decrypts := k.Calls()
	require.Equal(t, 2, decrypts)

	_, err = (&sealing.Sealer{KMS: failing{}, KeyID: sealingtest.KeyARN}).Seal(ctx, ep1, secret)
	require.ErrorContains(t, err, "AccessDeniedException")
	require.NotContains(t, err.Error(), secret)
}

type failing struct{}

func (failing) Encrypt(context.Context, *kms.EncryptInput, ...func(*kms.Options)) (*kms.EncryptOutput, error) {
	return nil, errors.New("AccessDeniedException: not authorized to perform kms:Encrypt")
}

func TestOpenerKeepsWhatItOpened(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	o := &sealing.Opener{KMS: k, Now: func() time.Time { return now }}
	decrypts := func() int { _, d := k.Calls(); return d }

	for range 5 {
		got, err := o.Open(ctx, ep1, sealed)
		require.NoError(t, err)
		require.Equal(t, secret, got)
	}
	require.Equal(t, 1, decrypts(), "one Decrypt for five deliveries")

	// The same ciphertext read for another endpoint is never served from
	// what was kept: KMS checks it, and refuses it.
	_, err := o.Open(ctx, sealing.Ref{TenantID: "t1", EndpointID: "ep_2"}, sealed)
	require.ErrorIs(t, err, sealing.ErrInvalid)
	require.Equal(t, 2, decrypts())

	now = now.Add(sealing.DefaultMaxAge - time.Second)
	_, err = o.Open(ctx, ep1, sealed)
	require.NoError(t, err)
	require.Equal(t, 2, decrypts(), "still fresh")
	now = now.Add(time.Second)
	_, err = o.Open(ctx, ep1, sealed)
	require.NoError(t, err)
	require.Equal(t, 3, decrypts(), "after MaxAge KMS is asked again")
}

func TestOpenerIsBounded(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	o := &sealing.Opener{KMS: k, MaxEntries: 2}
	refs := []sealing.Ref{{"t", "a"}, {"t", "b"}, {"t", "c"}}
	sealed := make([]string, len(refs))
	for i, r := range refs {
		sealed[i] = seal(t, k, r, fmt.Sprintf("whsec_%d", i))
	}
	open := func(i int) {
		got, err := o.Open(ctx, refs[i], sealed[i])
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("whsec_%d", i), got)
	}
	decrypts := func() int { _, d := k.Calls(); return d }
	open(0)
	open(1)
	open(0) // a is now the most recently used
	require.Equal(t, 2, decrypts())
	open(2) // evicts b, the least recently used
	require.Equal(t, 2, o.Len())
	open(0)
	require.Equal(t, 3, decrypts(), "a was kept")
	open(1)
	require.Equal(t, 4, decrypts(), "b was evicted")
}

// Concurrent opens of one secret (a batch's deliveries to one endpoint, on
// a cold start) share one Decrypt.
func TestConcurrentOpensShareOneDecrypt(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(1)
	var once sync.Once
	k.Hook = func() {
		once.Do(entered.Done)
		// Hold the first Decrypt a moment, so the others arrive while it is
		// in flight. However the goroutines are scheduled, a correct
		// Opener makes one Decrypt: an arrival finds it in flight or done.
		select {
		case <-release:
		case <-time.After(100 * time.Millisecond):
		}
	}
	o := &sealing.Opener{KMS: k}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := o.Open(ctx, ep1, sealed)
			if err == nil && got != secret {
				err = errors.New("wrong secret")
			}
			errs[i] = err
		}()
	}
	entered.Wait()
	wg.Wait()
	close(release)
	for _, err := range errs {
		require.NoError(t, err)
	}
	_, decrypts := k.Calls()
	require.Equal(t, 1, decrypts)
}

func TestWaiterGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	k := sealingtest.New()
	sealed := seal(t, k, ep1, secret)
	release := make(chan struct{})
	inFlight := make(chan struct{})
	k.Hook = func() { close(inFlight); <-release }
	o := &sealing.Opener{KMS: k}
	done := make(chan error)
	go func() { _, err := o.Open(ctx, ep1, sealed); done <- err }()
	<-inFlight
	c, cancel := context.WithCancel(ctx)
	cancel()
	_, err := o.Open(c, ep1, sealed)
	require.ErrorIs(t, err, context.Canceled)
	close(release)
	require.NoError(t, <-done, "the first caller still gets its answer")
}
