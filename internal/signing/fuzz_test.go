package signing_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/signing"
)

// FuzzVerify checks that:
//   - Verify never panics and only returns nil or one of the sentinel errors,
//     whatever the id, timestamp header, signature header and body;
//   - whatever Sign produces verifies, with all secrets or with either
//     secret alone (rotation), for any non-empty id, non-negative timestamp
//     and body;
//   - a header signed with an unrelated secret never verifies.
func FuzzVerify(f *testing.F) {
	const (
		secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		secretB = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		secretC = "whsec_kemv2xXq9nXTvj/hUlAFESvzyV/F8mYGx8gvY13k2RE="
	)
	signer, err := signing.NewSigner(secretA, secretB)
	if err != nil {
		f.Fatal(err)
	}
	outsider, err := signing.NewSigner(secretC)
	if err != nil {
		f.Fatal(err)
	}
	verifiers := make([]*signing.Verifier, 0, 3)
	for _, secrets := range [][]string{{secretA, secretB}, {secretA}, {secretB}} {
		v, err := signing.NewVerifier(secrets...)
		if err != nil {
			f.Fatal(err)
		}
		verifiers = append(verifiers, v)
	}
	sentinels := []error{signing.ErrNoMatch, signing.ErrTimestampTooOld, signing.ErrTimestampTooNew, signing.ErrMissingHeader, signing.ErrInvalidHeader}

	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"test": 2432232314}`))
	f.Add("msg_1", int64(0), "0", "v1a,abc v1,", []byte{})
	f.Add("", int64(-1), "-1", "", []byte(nil))
	f.Add("id with spaces", int64(1<<62), "abc", "garbage", []byte("héllo ✓"))
	f.Add("msg.dots.", int64(9223372036854775807), "99999999999999999999", "  v1,=== v2,x,y ", []byte("\x00\xff"))

	f.Fuzz(func(t *testing.T, id string, ts int64, tsHeader, sigHeader string, body []byte) {
		if ts < 0 {
			ts = ^ts // a non-negative value
		}
		now := time.Unix(ts, 0)
		for _, v := range verifiers {
			v.Now = func() time.Time { return now }
		}

		// 1. Arbitrary input: no panic, and only sentinel errors.
		for _, v := range verifiers {
			if err := v.Verify(id, tsHeader, sigHeader, body); err != nil && !isOneOf(err, sentinels) {
				t.Fatalf("Verify returned a non-sentinel error: %v", err)
			}
		}

		// 2. What Sign produces verifies with every key set.
		sig := signer.Sign(id, now, body)
		tsStr := strconv.FormatInt(ts, 10)
		for i, v := range verifiers {
			err := v.Verify(id, tsStr, sig, body)
			if id == "" {
				if !errors.Is(err, signing.ErrMissingHeader) {
					t.Fatalf("verifier %d: empty id: got %v, want ErrMissingHeader", i, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("verifier %d: Sign output %q did not verify: %v", i, sig, err)
			}
		}

		// 3. A signature from an unrelated secret never verifies.
		if id != "" {
			if err := verifiers[0].Verify(id, tsStr, outsider.Sign(id, now, body), body); !errors.Is(err, signing.ErrNoMatch) {
				t.Fatalf("outsider signature: got %v, want ErrNoMatch", err)
			}
		}
	})
}

func isOneOf(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
