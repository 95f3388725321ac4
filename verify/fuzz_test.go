package verify

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseSignatures checks the webhook-signature parser: it never panics,
// fails only with ErrInvalidHeaders, returns only 32-byte signatures, and
// finds a valid entry wherever it sits among arbitrary others.
func FuzzParseSignatures(f *testing.F) {
	f.Add("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	f.Add("v1a,abc v1,")
	f.Add("  v1,=== v2,x,y ")
	f.Add("garbage")
	f.Add(",,, v1,,\t\n")
	f.Add("v1," + strings.Repeat("A", sigLen))
	f.Add("v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==")
	f.Add("v1a," + strings.Repeat("A", v1aSigLen) + " v1a,=")
	valid := "v1," + base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))
	f.Fuzz(func(t *testing.T, header string) {
		sigs, v1a, err := parseSignatures(header)
		if err != nil && !errors.Is(err, ErrInvalidHeaders) {
			t.Fatalf("non-sentinel error %v", err)
		}
		for _, s := range sigs {
			if len(s) != sha256.Size {
				t.Fatalf("signature of %d bytes", len(s))
			}
		}
		if len(v1a) > maxV1aEntries {
			t.Fatalf("%d v1a signatures kept, at most %d", len(v1a), maxV1aEntries)
		}
		for _, s := range v1a {
			if len(s) != ed25519.SignatureSize {
				t.Fatalf("v1a signature of %d bytes", len(s))
			}
		}
		n := len(sigs)
		sigs, _, err = parseSignatures(header + " " + valid)
		if err != nil || len(sigs) != n+1 {
			t.Fatalf("appending a valid entry: %d signatures, %v; want %d, nil", len(sigs), err, n+1)
		}
	})
}

// FuzzVerify checks Verify as a whole: arbitrary headers never panic and
// only yield sentinel errors; a fresh signature over any id and body, put
// among arbitrary other entries, verifies with either secret of a rotation.
func FuzzVerify(f *testing.F) {
	const secretA, secretB = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	v, err := New(secretA, secretB)
	if err != nil {
		f.Fatal(err)
	}
	keyB, _ := parseSecret(secretB)
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"test": 2432232314}`))
	f.Add("", int64(-1), "-1", "", []byte(nil))
	f.Add("id with spaces", int64(1<<62), "abc", "v1a,x garbage", []byte("héllo ✓"))
	f.Add("msg.dots.", int64(1<<63-1), "99999999999999999999", "  v1,=== v2,x,y ", []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, id string, ts int64, tsHeader, sigHeader string, body []byte) {
		tsStr, ok := verifyArbitrary(t, v, id, ts, tsHeader, sigHeader, body)
		if !ok {
			return
		}
		good := "v1," + base64.StdEncoding.EncodeToString(sign(keyB, id, tsStr, body))
		h := signedHeaders(id, tsStr, sigHeader+" "+good)
		if err := v.Verify(h, body); err != nil {
			t.Fatalf("a valid signature among others did not verify: %v", err)
		}
	})
}

// sentinels are the errors Verify may return.
var sentinels = []error{ErrMissingHeaders, ErrInvalidHeaders, ErrTimestampTooOld, ErrTimestampTooNew, ErrNoMatchingSignature}

// verifyArbitrary sets v's clock to the fuzzed time ts (made non-negative)
// and fails t unless Verify of the arbitrary headers passes or returns a
// sentinel. It returns the timestamp header of a fresh signature at that
// time, and false when id cannot carry one (empty, or a header break).
func verifyArbitrary(t *testing.T, v *Verifier, id string, ts int64, tsHeader, sigHeader string, body []byte) (string, bool) {
	t.Helper()
	if ts < 0 {
		ts = ^ts
	}
	v.Now = func() time.Time { return time.Unix(ts, 0) }
	h := http.Header{HeaderID: {id}, HeaderTimestamp: {tsHeader}, HeaderSignature: {sigHeader}}
	if err := v.Verify(h, body); err != nil && !isOneOf(err, sentinels) {
		t.Fatalf("non-sentinel error %v", err)
	}
	if id == "" || strings.ContainsAny(id, "\r\n") {
		return "", false
	}
	return strconv.FormatInt(ts, 10), true
}

// signedHeaders are the three webhook headers, set as a receiver reads them.
func signedHeaders(id, ts, signature string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, signature)
	return h
}

func isOneOf(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// FuzzVerifyV1a checks Verify with Ed25519 public keys: arbitrary headers
// never panic and only yield sentinel errors; a fresh v1a signature by
// either key of a rotation verifies in front of arbitrary other entries;
// one by an unrelated key, or over another body, never does.
func FuzzVerifyV1a(f *testing.F) {
	keyA := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	keyB := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	outsider := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	v, err := New(encodePublicKey(keyA.Public().(ed25519.PublicKey)), encodePublicKey(keyB.Public().(ed25519.PublicKey)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), "1614265330", "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==", []byte(`{"test": 2432232314}`), true)
	f.Add("", int64(-1), "-1", "", []byte(nil), false)
	f.Add("id", int64(1<<40), "x", "v1a,"+strings.Repeat("A", v1aSigLen)+" v1,abc", []byte("\x00"), true)
	f.Fuzz(func(t *testing.T, id string, ts int64, tsHeader, sigHeader string, body []byte, useA bool) {
		tsStr, ok := verifyArbitrary(t, v, id, ts, tsHeader, sigHeader, body)
		if !ok {
			return
		}
		msg := []byte(id + "." + tsStr + "." + string(body))
		key := keyB
		if useA {
			key = keyA
		}
		entry := func(k ed25519.PrivateKey, m []byte) string {
			return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(k, m))
		}
		h := signedHeaders(id, tsStr, entry(key, msg)+" "+sigHeader)
		if err := v.Verify(h, body); err != nil {
			t.Fatalf("a valid v1a signature among others did not verify: %v", err)
		}
		h.Set(HeaderSignature, entry(outsider, msg))
		if err := v.Verify(h, body); !errors.Is(err, ErrNoMatchingSignature) {
			t.Fatalf("an unrelated key's signature: got %v, want ErrNoMatchingSignature", err)
		}
		h.Set(HeaderSignature, entry(key, append(msg, 'x')))
		if err := v.Verify(h, body); !errors.Is(err, ErrNoMatchingSignature) {
			t.Fatalf("a signature over another body: got %v, want ErrNoMatchingSignature", err)
		}
	})
}

// FuzzKeysFromJWKS checks the JWKS reader: it never panics, fails only with
// ErrInvalidJWKS, and every key it returns is one New accepts, of the
// endpoint asked for.
func FuzzKeysFromJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4","kid":"ep_a.t","use":"sig","alg":"EdDSA"}]}`), "ep_a")
	f.Add([]byte(`{"keys":[{"kty":"RSA"},{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`), "")
	f.Add([]byte(`{"keys":null}`), "ep_")
	f.Add([]byte(`[]`), "x")
	f.Fuzz(func(t *testing.T, doc []byte, endpoint string) {
		keys, err := KeysFromJWKS(doc, endpoint)
		if err != nil {
			if !errors.Is(err, ErrInvalidJWKS) || keys != nil {
				t.Fatalf("got %v, %v; want nil and an ErrInvalidJWKS", keys, err)
			}
			return
		}
		if len(keys) == 0 {
			t.Fatal("no keys and no error")
		}
		if _, err := New(keys...); err != nil {
			t.Fatalf("New refused a key KeysFromJWKS returned: %v", err)
		}
	})
}
