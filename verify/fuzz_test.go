package verify

import (
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
	valid := "v1," + base64.StdEncoding.EncodeToString(make([]byte, sha256.Size))
	f.Fuzz(func(t *testing.T, header string) {
		sigs, err := parseSignatures(header)
		if err != nil && !errors.Is(err, ErrInvalidHeaders) {
			t.Fatalf("non-sentinel error %v", err)
		}
		for _, s := range sigs {
			if len(s) != sha256.Size {
				t.Fatalf("signature of %d bytes", len(s))
			}
		}
		n := len(sigs)
		sigs, err = parseSignatures(header + " " + valid)
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
	sentinels := []error{ErrMissingHeaders, ErrInvalidHeaders, ErrTimestampTooOld, ErrTimestampTooNew, ErrNoMatchingSignature}
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", int64(1614265330), "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"test": 2432232314}`))
	f.Add("", int64(-1), "-1", "", []byte(nil))
	f.Add("id with spaces", int64(1<<62), "abc", "v1a,x garbage", []byte("héllo ✓"))
	f.Add("msg.dots.", int64(1<<63-1), "99999999999999999999", "  v1,=== v2,x,y ", []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, id string, ts int64, tsHeader, sigHeader string, body []byte) {
		if ts < 0 {
			ts = ^ts
		}
		v.Now = func() time.Time { return time.Unix(ts, 0) }
		h := http.Header{HeaderID: {id}, HeaderTimestamp: {tsHeader}, HeaderSignature: {sigHeader}}
		if err := v.Verify(h, body); err != nil && !isOneOf(err, sentinels) {
			t.Fatalf("non-sentinel error %v", err)
		}
		if id == "" || strings.ContainsAny(id, "\r\n") {
			return
		}
		tsStr := strconv.FormatInt(ts, 10)
		good := "v1," + base64.StdEncoding.EncodeToString(sign(keyB, id, tsStr, body))
		h = http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, tsStr)
		h.Set(HeaderSignature, sigHeader+" "+good)
		if err := v.Verify(h, body); err != nil {
			t.Fatalf("a valid signature among others did not verify: %v", err)
		}
	})
}

func isOneOf(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
