package signing_test

import (
	"encoding/base64"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/verify"
)

// interopCases is how many generated messages each direction checks.
const interopCases = 300

// interopCase is one generated message: secrets, id, timestamp and body.
type interopCase struct {
	secrets []string // one or two (a rotation)
	id      string
	ts      time.Time
	body    []byte
}

// genCase draws a message from rng: random 16..64-byte keys, printable ids
// of 1..64 bytes (as a header carries them), any body bytes of 0..4 KiB and
// a timestamp within ±4 minutes of now, so that the reference library,
// whose clock is time.Now and tolerance 5 minutes, accepts it.
func genCase(t *testing.T, rng *rand.Rand, now time.Time) interopCase {
	t.Helper()
	c := interopCase{
		ts:   now.Add(time.Duration(rng.Int63n(int64(8*time.Minute))) - 4*time.Minute),
		body: make([]byte, rng.Intn(4097)),
	}
	rng.Read(c.body)
	id := make([]byte, 1+rng.Intn(64))
	for i := range id {
		id[i] = byte('!' + rng.Intn('~'-'!'+1))
	}
	c.id = string(id)
	for range 1 + rng.Intn(2) {
		key := make([]byte, 16+rng.Intn(49))
		rng.Read(key)
		c.secrets = append(c.secrets, signing.SecretPrefix+base64.StdEncoding.EncodeToString(key))
	}
	return c
}

func (c interopCase) header(sig string) http.Header {
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, c.id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(c.ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	return h
}

// TestInteropHooklineSignsReferenceVerifies: whatever hookline's signer
// sends verifies with the official Standard Webhooks Go library, with each
// secret of a rotation, and a changed body does not.
func TestInteropHooklineSignsReferenceVerifies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(18))
	for n := range interopCases {
		c := genCase(t, rng, time.Now())
		signer, err := signing.NewSigner(c.secrets...)
		require.NoError(t, err)
		h := c.header(signer.Sign(c.id, c.ts, c.body))
		for i, s := range c.secrets {
			wh, err := standardwebhooks.NewWebhook(s)
			require.NoError(t, err)
			require.NoError(t, wh.Verify(c.body, h), "case %d, secret %d", n, i)
			require.ErrorIs(t, wh.Verify(append(c.body, 'x'), h), standardwebhooks.ErrNoMatchingSignature, "case %d, secret %d", n, i)
		}
	}
}

// TestInteropReferenceSignsHooklineVerifies: what the official library
// signs verifies with the public verify package and with internal/signing's
// Verifier, alone or next to the other secret of a rotation, and a changed
// body does not.
func TestInteropReferenceSignsHooklineVerifies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(81))
	for n := range interopCases {
		now := time.Now()
		c := genCase(t, rng, now)
		var sigs []string
		for _, s := range c.secrets {
			wh, err := standardwebhooks.NewWebhook(s)
			require.NoError(t, err)
			sig, err := wh.Sign(c.id, c.ts, c.body)
			require.NoError(t, err)
			sigs = append(sigs, sig)
		}
		for i, sig := range sigs {
			msg := fmt.Sprintf("case %d, signature %d", n, i)
			h := c.header(sig)
			pub, err := verify.New(c.secrets...)
			require.NoError(t, err)
			pub.Now = func() time.Time { return now }
			require.NoError(t, pub.Verify(h, c.body), msg)
			require.ErrorIs(t, pub.Verify(h, append(c.body, 'x')), verify.ErrNoMatchingSignature, msg)

			in, err := signing.NewVerifier(c.secrets...)
			require.NoError(t, err)
			in.Now = pub.Now
			require.NoError(t, in.VerifyRequest(h, c.body), msg)
			require.ErrorIs(t, in.VerifyRequest(h, append(c.body, 'x')), signing.ErrNoMatch, msg)
		}
	}
}

// TestInteropSignerAndPublicVerifierAgree runs hookline's signer against
// the public verify package on timestamps the reference library cannot
// take (its clock is time.Now): any non-negative Unix second, at the
// verifier's clock and at both edges of the tolerance.
func TestInteropSignerAndPublicVerifierAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1818))
	for n := range interopCases {
		at := time.Unix(rng.Int63n(1<<40), 0)
		c := genCase(t, rng, at)
		c.ts = at
		signer, err := signing.NewSigner(c.secrets...)
		require.NoError(t, err)
		h := c.header(signer.Sign(c.id, c.ts, c.body))
		for i, s := range c.secrets {
			v, err := verify.New(s)
			require.NoError(t, err)
			for _, off := range []time.Duration{0, verify.DefaultTolerance, -verify.DefaultTolerance} {
				v.Now = func() time.Time { return at.Add(off) }
				require.NoError(t, v.Verify(h, c.body), "case %d, secret %d, clock %s", n, i, off)
			}
			v.Now = func() time.Time { return at.Add(verify.DefaultTolerance + time.Second) }
			require.ErrorIs(t, v.Verify(h, c.body), verify.ErrTimestampTooOld, "case %d", n)
		}
	}
}

// TestVerifyVectorsAreACopy keeps verify/testdata/vectors.json (the public
// module cannot read this module's files) identical to the signer's.
func TestVerifyVectorsAreACopy(t *testing.T) {
	t.Parallel()
	ours, err := os.ReadFile("testdata/vectors.json")
	require.NoError(t, err)
	theirs, err := os.ReadFile("../../verify/testdata/vectors.json")
	require.NoError(t, err)
	require.Equal(t, string(ours), string(theirs), "copy internal/signing/testdata/vectors.json to verify/testdata/")
}
