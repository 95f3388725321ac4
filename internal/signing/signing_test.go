package signing_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/verify"
)

// fixedNow is the clock used by every test that checks timestamps.
var fixedNow = time.Unix(1700000000, 0)

func clock() time.Time { return fixedNow }

// testSecret returns a deterministic secret whose 32 key bytes all equal seed.
func testSecret(t testing.TB, seed byte) string {
	t.Helper()
	s, err := signing.NewSecret(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)))
	require.NoError(t, err)
	return s
}

func newSigner(t testing.TB, secrets ...string) *signing.Signer {
	t.Helper()
	s, err := signing.NewSigner(secrets...)
	require.NoError(t, err)
	return s
}

func newVerifier(t testing.TB, secrets ...string) *signing.Verifier {
	t.Helper()
	v, err := signing.NewVerifier(secrets...)
	require.NoError(t, err)
	v.Now = clock
	return v
}

type vector struct {
	Name      string   `json:"name"`
	Secrets   []string `json:"secrets"`
	ID        string   `json:"id"`
	Timestamp int64    `json:"timestamp"`
	Body      string   `json:"body"`
	Expected  string   `json:"expected"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	require.NoError(t, err)
	var file struct {
		Vectors []vector `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Vectors)
	return file.Vectors
}

func TestKnownAnswerVectors(t *testing.T) {
	t.Parallel()
	for _, vec := range loadVectors(t) {
		t.Run(vec.Name, func(t *testing.T) {
			ts := time.Unix(vec.Timestamp, 0)
			got := newSigner(t, vec.Secrets...).Sign(vec.ID, ts, []byte(vec.Body))
			require.Equal(t, vec.Expected, got)

			tsHeader := strconv.FormatInt(vec.Timestamp, 10)
			v, err := signing.NewVerifier(vec.Secrets...)
			require.NoError(t, err)
			v.Now = func() time.Time { return ts }
			require.NoError(t, v.Verify(vec.ID, tsHeader, vec.Expected, []byte(vec.Body)))

			// Each secret on its own accepts the combined header.
			for i, s := range vec.Secrets {
				v, err := signing.NewVerifier(s)
				require.NoError(t, err)
				v.Now = func() time.Time { return ts }
				require.NoError(t, v.Verify(vec.ID, tsHeader, vec.Expected, []byte(vec.Body)), "secret %d", i)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	t.Run("deterministic reader", func(t *testing.T) {
		key := make([]byte, 32)
		for i := range key {
			key[i] = byte(i)
		}
		s, err := signing.NewSecret(bytes.NewReader(key))
		require.NoError(t, err)
		require.Equal(t, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", s)

		parsed, err := signing.ParseSecret(s)
		require.NoError(t, err)
		require.Equal(t, key, parsed)
	})
	t.Run("crypto rand", func(t *testing.T) {
		a, err := signing.NewSecret(rand.Reader)
		require.NoError(t, err)
		b, err := signing.NewSecret(rand.Reader)
		require.NoError(t, err)
		require.NotEqual(t, a, b)
		require.True(t, strings.HasPrefix(a, signing.SecretPrefix))
		key, err := signing.ParseSecret(a)
		require.NoError(t, err)
		require.Len(t, key, 32)
	})
	t.Run("short reader", func(t *testing.T) {
		_, err := signing.NewSecret(bytes.NewReader(make([]byte, 31)))
		require.Error(t, err)
	})
	t.Run("nil reader", func(t *testing.T) {
		_, err := signing.NewSecret(nil)
		require.Error(t, err)
	})
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secret  string
		wantKey []byte
		wantErr string // substring of the error; empty means success
	}{
		{name: "valid 32 bytes", secret: "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)), wantKey: bytes.Repeat([]byte{7}, 32)},
		{name: "valid reference 24 bytes", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", wantKey: mustB64(t, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")},
		{name: "empty", secret: "", wantErr: "secret is empty"},
		{name: "no prefix", secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", wantErr: "does not start with"},
		{name: "wrong prefix case", secret: "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", wantErr: "does not start with"},
		{name: "prefix only", secret: "whsec_", wantErr: "no key"},
		{name: "bad base64 characters", secret: "whsec_not*valid*base64!!", wantErr: "not valid standard base64"},
		{name: "url-safe alphabet", secret: "whsec_" + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe}), wantErr: "not valid standard base64"},
		{name: "missing padding", secret: "whsec_" + base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)), wantErr: "not valid standard base64"},
		{name: "padding only", secret: "whsec_====", wantErr: "not valid standard base64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, err := signing.ParseSecret(tc.secret)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tc.wantKey, key)
				return
			}
			require.Error(t, err)
			require.Nil(t, key)
			require.Contains(t, err.Error(), tc.wantErr)
			assertNoLeak(t, err, tc.secret)
		})
	}
}

// assertNoLeak checks that err does not echo the secret or its encoded key.
func assertNoLeak(t *testing.T, err error, secret string) {
	t.Helper()
	body := strings.TrimPrefix(secret, signing.SecretPrefix)
	if len(body) >= 4 { // shorter strings could match by coincidence
		require.NotContains(t, err.Error(), body)
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestNewSignerAndVerifierErrors(t *testing.T) {
	t.Parallel()
	good := testSecret(t, 1)
	bad := "whsec_c2VjcmV0LW1hdGVyaWFs!!" // invalid base64
	tests := []struct {
		name    string
		secrets []string
		wantErr string
	}{
		{name: "no secrets", secrets: nil, wantErr: "at least one secret"},
		{name: "bad first", secrets: []string{bad, good}, wantErr: "secret 0"},
		{name: "bad second", secrets: []string{good, bad}, wantErr: "secret 1"},
		{name: "missing prefix", secrets: []string{strings.TrimPrefix(good, "whsec_")}, wantErr: "does not start with"},
		{name: "empty", secrets: []string{""}, wantErr: "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := signing.NewSigner(tc.secrets...)
			require.ErrorContains(t, err, tc.wantErr)
			require.Nil(t, s)
			v, err := signing.NewVerifier(tc.secrets...)
			require.ErrorContains(t, err, tc.wantErr)
			require.ErrorIs(t, err, verify.ErrInvalidSecret, "NewVerifier reports the verify package's error")
			require.Nil(t, v)
			for _, sec := range tc.secrets {
				assertNoLeak(t, err, sec)
			}
		})
	}
}

func TestSignFormat(t *testing.T) {
	t.Parallel()
	a, b, c := testSecret(t, 1), testSecret(t, 2), testSecret(t, 3)
	ts := fixedNow
	body := []byte(`{"k":"v"}`)

	one := newSigner(t, a).Sign("msg_1", ts, body)
	require.True(t, strings.HasPrefix(one, "v1,"))
	require.Len(t, one, 47)
	require.NotContains(t, one, " ")

	three := newSigner(t, a, b, c).Sign("msg_1", ts, body)
	parts := strings.Split(three, " ")
	require.Len(t, parts, 3)
	require.Equal(t, one, parts[0], "signatures come in the order the secrets were given")
	require.Equal(t, newSigner(t, b).Sign("msg_1", ts, body), parts[1])
	require.Equal(t, newSigner(t, c).Sign("msg_1", ts, body), parts[2])

	// Deterministic, and truncated to whole seconds.
	require.Equal(t, one, newSigner(t, a).Sign("msg_1", ts.Add(999*time.Millisecond), body))
	require.NotEqual(t, one, newSigner(t, a).Sign("msg_1", ts.Add(time.Second), body))

	// A nil Signer or a zero Signer does not panic.
	var nilSigner *signing.Signer
	require.Empty(t, nilSigner.Sign("msg_1", ts, body))
	require.Empty(t, (&signing.Signer{}).Sign("msg_1", ts, body))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secA, secB, secC := testSecret(t, 0xA), testSecret(t, 0xB), testSecret(t, 0xC)
	const id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	body := []byte(`{"type":"user.created","data":{"id":42}}`)
	tsNow := strconv.FormatInt(fixedNow.Unix(), 10)
	tsAt := func(d time.Duration) string { return strconv.FormatInt(fixedNow.Add(d).Unix(), 10) }
	sigAt := func(secrets []string, msgID string, d time.Duration, b []byte) string {
		return newSigner(t, secrets...).Sign(msgID, fixedNow.Add(d), b)
	}
	sigA := sigAt([]string{secA}, id, 0, body)
	sigB := sigAt([]string{secB}, id, 0, body)
	sigAB := sigAt([]string{secA, secB}, id, 0, body)
	// flipPadBits changes the two unused low bits of the last base64
	// character, giving a non-canonical spelling of the same bytes.
	flipPadBits := func(sig string) string {
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		i := len(sig) - 2 // the last data character, before the single '='
		idx := strings.IndexByte(alphabet, sig[i])
		return sig[:i] + string(alphabet[idx^1]) + sig[i+1:]
	}

	tests := []struct {
		name      string
		verifier  []string      // secrets of the verifier
		tolerance time.Duration // zero means default
		id        string
		ts        string
		sig       string
		body      []byte
		wantErr   error // nil means success
	}{
		// Round trip and rotation.
		{name: "round trip", verifier: []string{secA}, id: id, ts: tsNow, sig: sigA, body: body},
		{name: "rotation: verifier has old and new, message signed with old", verifier: []string{secA, secB}, id: id, ts: tsNow, sig: sigA, body: body},
		{name: "rotation: verifier has old and new, message signed with new", verifier: []string{secA, secB}, id: id, ts: tsNow, sig: sigB, body: body},
		{name: "rotation: two signatures, verifier has first only", verifier: []string{secA}, id: id, ts: tsNow, sig: sigAB, body: body},
		{name: "rotation: two signatures, verifier has second only", verifier: []string{secB}, id: id, ts: tsNow, sig: sigAB, body: body},
		{name: "rotation: two signatures, neither key", verifier: []string{secC}, id: id, ts: tsNow, sig: sigAB, body: body, wantErr: signing.ErrNoMatch},
		{name: "empty body", verifier: []string{secA}, id: id, ts: tsNow, sig: sigAt([]string{secA}, id, 0, nil), body: nil},

		// Wrong key or tampered content.
		{name: "wrong secret", verifier: []string{secC}, id: id, ts: tsNow, sig: sigA, body: body, wantErr: signing.ErrNoMatch},
		{name: "tampered body", verifier: []string{secA}, id: id, ts: tsNow, sig: sigA, body: []byte(`{"type":"user.created","data":{"id":43}}`), wantErr: signing.ErrNoMatch},
		{name: "body with trailing newline", verifier: []string{secA}, id: id, ts: tsNow, sig: sigA, body: append(append([]byte{}, body...), '\n'), wantErr: signing.ErrNoMatch},
		{name: "tampered id", verifier: []string{secA}, id: id + "x", ts: tsNow, sig: sigA, body: body, wantErr: signing.ErrNoMatch},
		{name: "tampered timestamp within tolerance", verifier: []string{secA}, id: id, ts: tsAt(time.Second), sig: sigA, body: body, wantErr: signing.ErrNoMatch},
		{name: "timestamp with leading zero", verifier: []string{secA}, id: id, ts: "0" + tsNow, sig: sigA, body: body, wantErr: signing.ErrNoMatch},
		{name: "tampered signature", verifier: []string{secA}, id: id, ts: tsNow, sig: "v1," + strings.Repeat("A", 43) + "=", body: body, wantErr: signing.ErrNoMatch},
		{name: "non-canonical base64 of correct signature", verifier: []string{secA}, id: id, ts: tsNow, sig: flipPadBits(sigA), body: body, wantErr: signing.ErrNoMatch},

		// Timestamp window on the fixed clock.
		{name: "too old", verifier: []string{secA}, id: id, ts: tsAt(-5*time.Minute - time.Second), sig: sigAt([]string{secA}, id, -5*time.Minute-time.Second, body), body: body, wantErr: signing.ErrTimestampTooOld},
		{name: "too new", verifier: []string{secA}, id: id, ts: tsAt(5*time.Minute + time.Second), sig: sigAt([]string{secA}, id, 5*time.Minute+time.Second, body), body: body, wantErr: signing.ErrTimestampTooNew},
		{name: "exactly default tolerance old", verifier: []string{secA}, id: id, ts: tsAt(-5 * time.Minute), sig: sigAt([]string{secA}, id, -5*time.Minute, body), body: body},
		{name: "exactly default tolerance new", verifier: []string{secA}, id: id, ts: tsAt(5 * time.Minute), sig: sigAt([]string{secA}, id, 5*time.Minute, body), body: body},
		{name: "custom tolerance accepts", verifier: []string{secA}, tolerance: time.Hour, id: id, ts: tsAt(-59 * time.Minute), sig: sigAt([]string{secA}, id, -59*time.Minute, body), body: body},
		{name: "custom tolerance rejects old", verifier: []string{secA}, tolerance: 10 * time.Second, id: id, ts: tsAt(-11 * time.Second), sig: sigAt([]string{secA}, id, -11*time.Second, body), body: body, wantErr: signing.ErrTimestampTooOld},
		{name: "custom tolerance rejects new", verifier: []string{secA}, tolerance: 10 * time.Second, id: id, ts: tsAt(11 * time.Second), sig: sigAt([]string{secA}, id, 11*time.Second, body), body: body, wantErr: signing.ErrTimestampTooNew},
		{name: "epoch zero", verifier: []string{secA}, id: id, ts: "0", sig: sigA, body: body, wantErr: signing.ErrTimestampTooOld},
		{name: "max int64 timestamp", verifier: []string{secA}, id: id, ts: "9223372036854775807", sig: sigA, body: body, wantErr: signing.ErrTimestampTooNew},

		// Missing parts.
		{name: "missing id", verifier: []string{secA}, id: "", ts: tsNow, sig: sigA, body: body, wantErr: signing.ErrMissingHeader},
		{name: "missing timestamp", verifier: []string{secA}, id: id, ts: "", sig: sigA, body: body, wantErr: signing.ErrMissingHeader},
		{name: "missing signature", verifier: []string{secA}, id: id, ts: tsNow, sig: "", body: body, wantErr: signing.ErrMissingHeader},
		{name: "whitespace-only signature", verifier: []string{secA}, id: id, ts: tsNow, sig: "   ", body: body, wantErr: signing.ErrMissingHeader},

		// Malformed timestamp.
		{name: "non-numeric timestamp", verifier: []string{secA}, id: id, ts: "yesterday", sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "negative timestamp", verifier: []string{secA}, id: id, ts: "-" + tsNow, sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "plus-signed timestamp", verifier: []string{secA}, id: id, ts: "+" + tsNow, sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "timestamp with space", verifier: []string{secA}, id: id, ts: " " + tsNow, sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "fractional timestamp", verifier: []string{secA}, id: id, ts: tsNow + ".5", sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "millisecond timestamp", verifier: []string{secA}, id: id, ts: tsNow + "000", sig: sigA, body: body, wantErr: signing.ErrTimestampTooNew},
		{name: "overflowing timestamp", verifier: []string{secA}, id: id, ts: "99999999999999999999", sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},
		{name: "zero-padded timestamp longer than 19 digits", verifier: []string{secA}, id: id, ts: "0000000000" + tsNow, sig: sigA, body: body, wantErr: signing.ErrInvalidHeader},

		// Malformed or unusual signature headers.
		{name: "no comma", verifier: []string{secA}, id: id, ts: tsNow, sig: "garbage", body: body, wantErr: signing.ErrInvalidHeader},
		{name: "empty version", verifier: []string{secA}, id: id, ts: tsNow, sig: strings.TrimPrefix(sigA, "v1"), body: body, wantErr: signing.ErrInvalidHeader},
		{name: "empty signature", verifier: []string{secA}, id: id, ts: tsNow, sig: "v1,", body: body, wantErr: signing.ErrInvalidHeader},
		{name: "bare signature without version", verifier: []string{secA}, id: id, ts: tsNow, sig: strings.TrimPrefix(sigA, "v1,"), body: body, wantErr: signing.ErrInvalidHeader},
		{name: "only other versions", verifier: []string{secA}, id: id, ts: tsNow, sig: "v1a," + strings.TrimPrefix(sigA, "v1,") + " v2,abc", body: body, wantErr: signing.ErrNoMatch},
		{name: "other version before v1", verifier: []string{secA}, id: id, ts: tsNow, sig: "v1a,Zm9vYmFy " + sigA, body: body},
		{name: "garbage entries around valid one", verifier: []string{secA}, id: id, ts: tsNow, sig: "junk ,x " + sigA + " v1,", body: body},
		{name: "extra whitespace", verifier: []string{secA}, id: id, ts: tsNow, sig: "  " + sigB + "   " + sigA + "\t", body: body},
		{name: "v1 with invalid base64", verifier: []string{secA}, id: id, ts: tsNow, sig: "v1,!!!!", body: body, wantErr: signing.ErrNoMatch},
		{name: "v1 truncated", verifier: []string{secA}, id: id, ts: tsNow, sig: sigA[:len(sigA)-4], body: body, wantErr: signing.ErrNoMatch},
		{name: "v1 with appended data", verifier: []string{secA}, id: id, ts: tsNow, sig: sigA + "AAAA", body: body, wantErr: signing.ErrNoMatch},
		{name: "uppercase version", verifier: []string{secA}, id: id, ts: tsNow, sig: "V1," + strings.TrimPrefix(sigA, "v1,"), body: body, wantErr: signing.ErrNoMatch},
		{name: "comma-separated instead of space-separated", verifier: []string{secB}, id: id, ts: tsNow, sig: sigA + "," + sigB, body: body, wantErr: signing.ErrNoMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifier(t, tc.verifier...)
			v.Tolerance = tc.tolerance
			err := v.Verify(tc.id, tc.ts, tc.sig, tc.body)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			for _, other := range []error{signing.ErrNoMatch, signing.ErrTimestampTooOld, signing.ErrTimestampTooNew, signing.ErrMissingHeader, signing.ErrInvalidHeader} {
				if other != tc.wantErr {
					require.NotErrorIs(t, err, other)
				}
			}
			for _, s := range tc.verifier {
				assertNoLeak(t, err, s)
			}
		})
	}
}

func TestVerifierDefaults(t *testing.T) {
	t.Parallel()
	sec := testSecret(t, 9)
	s := newSigner(t, sec)
	body := []byte("hello")

	t.Run("nil Now uses time.Now", func(t *testing.T) {
		v, err := signing.NewVerifier(sec)
		require.NoError(t, err)
		now := time.Now()
		require.NoError(t, v.Verify("msg", strconv.FormatInt(now.Unix(), 10), s.Sign("msg", now, body), body))
		old := now.Add(-time.Hour)
		require.ErrorIs(t, v.Verify("msg", strconv.FormatInt(old.Unix(), 10), s.Sign("msg", old, body), body), signing.ErrTimestampTooOld)
	})
	t.Run("zero and negative Tolerance mean DefaultTolerance", func(t *testing.T) {
		require.Equal(t, 5*time.Minute, signing.DefaultTolerance)
		for _, tol := range []time.Duration{0, -time.Second} {
			v := newVerifier(t, sec)
			v.Tolerance = tol
			in := fixedNow.Add(-signing.DefaultTolerance)
			out := in.Add(-time.Second)
			require.NoError(t, v.Verify("msg", strconv.FormatInt(in.Unix(), 10), s.Sign("msg", in, body), body))
			require.ErrorIs(t, v.Verify("msg", strconv.FormatInt(out.Unix(), 10), s.Sign("msg", out, body), body), signing.ErrTimestampTooOld)
		}
	})
	t.Run("sub-second clock is compared exactly", func(t *testing.T) {
		v, err := signing.NewVerifier(sec)
		require.NoError(t, err)
		v.Tolerance = 10 * time.Second
		v.Now = func() time.Time { return fixedNow.Add(500 * time.Millisecond) }
		in := fixedNow.Add(-9 * time.Second)   // 9.5s behind
		out := fixedNow.Add(-10 * time.Second) // 10.5s behind
		require.NoError(t, v.Verify("msg", strconv.FormatInt(in.Unix(), 10), s.Sign("msg", in, body), body))
		require.ErrorIs(t, v.Verify("msg", strconv.FormatInt(out.Unix(), 10), s.Sign("msg", out, body), body), signing.ErrTimestampTooOld)
	})
	t.Run("clock before the epoch", func(t *testing.T) {
		v := newVerifier(t, sec)
		v.Now = func() time.Time { return time.Unix(-1<<62, 0) }
		require.ErrorIs(t, v.Verify("msg", "9223372036854775807", "v1,x", body), signing.ErrTimestampTooNew)
	})
	t.Run("nil and zero Verifier do not panic", func(t *testing.T) {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		var nilV *signing.Verifier
		require.ErrorIs(t, nilV.Verify("msg", ts, "v1,x", body), signing.ErrNoMatch)
		require.ErrorIs(t, (&signing.Verifier{}).Verify("msg", ts, "v1,x", body), signing.ErrNoMatch)
		// A malformed signature header is reported as such even without keys
		// (the verify package parses it before it looks at the keys).
		require.ErrorIs(t, nilV.Verify("msg", ts, "garbage", body), signing.ErrInvalidHeader)
		require.ErrorIs(t, (&signing.Verifier{}).Verify("msg", ts, "garbage", body), signing.ErrInvalidHeader)
		// A zero Verifier still honours its Tolerance and Now.
		zero := &signing.Verifier{Now: clock}
		require.ErrorIs(t, zero.Verify("msg", strconv.FormatInt(fixedNow.Add(-time.Hour).Unix(), 10), "v1,x", body), signing.ErrTimestampTooOld)
	})
}

func TestVerifyRequest(t *testing.T) {
	t.Parallel()
	secOld, secNew := testSecret(t, 0x10), testSecret(t, 0x20)
	body := []byte(`{"event":"ping"}`)
	const id = "msg_request"
	header := func(id, ts, sig string) http.Header {
		h := http.Header{}
		if id != "" {
			h.Set(signing.HeaderID, id)
		}
		if ts != "" {
			h.Set(signing.HeaderTimestamp, ts)
		}
		if sig != "" {
			h.Set(signing.HeaderSignature, sig)
		}
		return h
	}
	tsNow := strconv.FormatInt(fixedNow.Unix(), 10)
	sig := newSigner(t, secOld, secNew).Sign(id, fixedNow, body)

	tests := []struct {
		name    string
		h       http.Header
		wantErr error
	}{
		{name: "valid", h: header(id, tsNow, sig)},
		{name: "missing id", h: header("", tsNow, sig), wantErr: signing.ErrMissingHeader},
		{name: "missing timestamp", h: header(id, "", sig), wantErr: signing.ErrMissingHeader},
		{name: "missing signature", h: header(id, tsNow, ""), wantErr: signing.ErrMissingHeader},
		{name: "bad timestamp", h: header(id, "abc", sig), wantErr: signing.ErrInvalidHeader},
		{name: "wrong id", h: header("msg_other", tsNow, sig), wantErr: signing.ErrNoMatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := newVerifier(t, secNew).VerifyRequest(tc.h, body)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
		})
	}

	t.Run("header names are case-insensitive", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, "https://example.com/hook", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Webhook-Id", id)
		req.Header.Set("WEBHOOK-TIMESTAMP", tsNow)
		req.Header.Set("webhook-signature", sig)
		require.NoError(t, newVerifier(t, secOld).VerifyRequest(req.Header, body))
	})
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	secA, secB := testSecret(t, 0x31), testSecret(t, 0x32)
	s := newSigner(t, secA, secB)
	v := newVerifier(t, secB)
	ts := strconv.FormatInt(fixedNow.Unix(), 10)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := "msg_" + strconv.Itoa(g) + "_" + strconv.Itoa(i)
				body := []byte(strings.Repeat("x", i))
				if err := v.Verify(id, ts, s.Sign(id, fixedNow, body), body); err != nil {
					errs <- err
					return
				}
				if err := v.Verify(id, ts, s.Sign(id, fixedNow, body), append(body, 'y')); !errors.Is(err, signing.ErrNoMatch) {
					errs <- errors.New("tampered body verified")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// raceEnabled reports whether the test binary was built with -race. Under the
// race detector sync.Pool drops items on purpose, so allocation counts are not
// meaningful there.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func TestSignAllocations(t *testing.T) {
	if raceEnabled() {
		t.Skip("sync.Pool drops items under the race detector")
	}
	body := bytes.Repeat([]byte("a"), 1024)
	for _, n := range []int{1, 2} {
		secrets := make([]string, n)
		for i := range secrets {
			secrets[i] = testSecret(t, byte(i+1))
		}
		s := newSigner(t, secrets...)
		s.Sign("msg_warmup", fixedNow, body)
		allocs := testing.AllocsPerRun(200, func() {
			_ = s.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", fixedNow, body)
		})
		require.LessOrEqual(t, allocs, 1.0, "Sign with %d secret(s) should allocate only the result string", n)
	}
}

func BenchmarkSign(b *testing.B) {
	for _, size := range []int{0, 1 << 10, 16 << 10} {
		for _, n := range []int{1, 2} {
			secrets := make([]string, n)
			for i := range secrets {
				secrets[i] = testSecret(b, byte(i+1))
			}
			s := newSigner(b, secrets...)
			body := bytes.Repeat([]byte("x"), size)
			b.Run("body="+strconv.Itoa(size)+"/secrets="+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					_ = s.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", fixedNow, body)
				}
			})
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	sec := testSecret(b, 1)
	s := newSigner(b, sec)
	v := newVerifier(b, sec)
	body := bytes.Repeat([]byte("x"), 1<<10)
	const id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	sig := s.Sign(id, fixedNow, body)
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Verify(id, ts, sig, body); err != nil {
			b.Fatal(err)
		}
	}
}
