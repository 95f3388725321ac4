package signing_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/verify"
)

// v1aVector is one entry of verify/testdata/v1a_vectors.json, computed by
// pyca/cryptography (verify/testdata/gen_v1a.py).
type v1aVector struct {
	Name        string   `json:"name"`
	Secrets     []string `json:"secrets"`
	SigningKeys []string `json:"signing_keys"`
	PublicKeys  []string `json:"public_keys"`
	JWKS        []struct {
		X          string `json:"x"`
		Thumbprint string `json:"thumbprint"`
	} `json:"jwks"`
	ID        string `json:"id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	Expected  string `json:"expected"`
}

func loadV1aVectors(t *testing.T) []v1aVector {
	t.Helper()
	raw, err := os.ReadFile("../../verify/testdata/v1a_vectors.json")
	require.NoError(t, err)
	var file struct{ Vectors []v1aVector }
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Vectors)
	return file.Vectors
}

// TestV1aKnownAnswerVectors: the signer reproduces, byte for byte, what an
// independent implementation signed (the spec's published example among
// them), and derives the same public keys and JWK thumbprints.
func TestV1aKnownAnswerVectors(t *testing.T) {
	t.Parallel()
	for _, vec := range loadV1aVectors(t) {
		t.Run(vec.Name, func(t *testing.T) {
			for i, sk := range vec.SigningKeys {
				pub, err := signing.PublicKeyOf(sk)
				require.NoError(t, err)
				require.Equal(t, vec.PublicKeys[i], pub)
				key, err := signing.ParsePublicKey(pub)
				require.NoError(t, err)
				require.Equal(t, vec.JWKS[i].Thumbprint, signing.Thumbprint(key))
			}
			s, err := signing.NewSignerWith(signing.Keys{Secrets: vec.Secrets, SigningKeys: vec.SigningKeys})
			require.NoError(t, err)
			require.Equal(t, vec.Expected, s.Sign(vec.ID, time.Unix(vec.Timestamp, 0), []byte(vec.Body)))

			v, err := signing.NewVerifier(vec.PublicKeys...)
			require.NoError(t, err)
			v.Now = func() time.Time { return time.Unix(vec.Timestamp, 0) }
			ts := strconv.FormatInt(vec.Timestamp, 10)
			require.NoError(t, v.Verify(vec.ID, ts, vec.Expected, []byte(vec.Body)))
			require.ErrorIs(t, v.Verify(vec.ID, ts, vec.Expected, []byte(vec.Body+"x")), signing.ErrNoMatch)
		})
	}
}

func TestNewSigningKey(t *testing.T) {
	t.Parallel()
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	sk, err := signing.NewSigningKey(bytes.NewReader(seed))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(sk, signing.SigningKeyPrefix))
	key, err := signing.ParseSigningKey(sk)
	require.NoError(t, err)
	require.Equal(t, ed25519.NewKeyFromSeed(seed), key)

	_, err = signing.NewSigningKey(bytes.NewReader(seed[:10]))
	require.Error(t, err)
	_, err = signing.NewSigningKey(nil)
	require.Error(t, err)
}

func TestParseKeysErrors(t *testing.T) {
	t.Parallel()
	good, err := signing.NewSigningKey(bytes.NewReader(bytes.Repeat([]byte{9}, 32)))
	require.NoError(t, err)
	other, err := signing.NewSigningKey(bytes.NewReader(bytes.Repeat([]byte{8}, 32)))
	require.NoError(t, err)
	rawGood, rawOther := b64(t, strings.TrimPrefix(good, "whsk_")), b64(t, strings.TrimPrefix(other, "whsk_"))
	mismatched := "whsk_" + stdB64(append(append([]byte{}, rawGood[:32]...), rawOther[32:]...))
	for name, s := range map[string]string{
		"empty":             "",
		"no key":            "whsk_",
		"a secret":          "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"seed only":         "whsk_" + stdB64(rawGood[:32]),
		"not base64":        "whsk_!!!!",
		"unpadded":          strings.TrimRight(good, "="),
		"mismatched halves": mismatched,
	} {
		_, err := signing.ParseSigningKey(s)
		require.Error(t, err, name)
		if len(s) > 12 {
			require.NotContains(t, err.Error(), s[5:], "%s: the error quotes the key", name)
		}
	}
	pub, err := signing.PublicKeyOf(good)
	require.NoError(t, err)
	for name, s := range map[string]string{
		"empty":        "",
		"signing key":  good,
		"31 bytes":     "whpk_" + stdB64(make([]byte, 31)),
		"unpadded":     strings.TrimRight(pub, "="),
		"wrong prefix": "whsk_" + strings.TrimPrefix(pub, "whpk_"),
	} {
		_, err := signing.ParsePublicKey(s)
		require.Error(t, err, name)
	}
}

func TestNewSignerWith(t *testing.T) {
	t.Parallel()
	secret := testSecret(t, 1)
	keyA, err := signing.NewSigningKey(bytes.NewReader(bytes.Repeat([]byte{1}, 32)))
	require.NoError(t, err)
	keyB, err := signing.NewSigningKey(bytes.NewReader(bytes.Repeat([]byte{2}, 32)))
	require.NoError(t, err)
	pubA, _ := signing.PublicKeyOf(keyA)
	pubB, _ := signing.PublicKeyOf(keyB)
	body := []byte(`{"type":"x"}`)

	_, err = signing.NewSignerWith(signing.Keys{})
	require.ErrorContains(t, err, "at least one")
	_, err = signing.NewSignerWith(signing.Keys{SigningKeys: []string{keyA, "whsk_x"}})
	require.ErrorContains(t, err, "signing key 1")
	require.NotContains(t, err.Error(), keyA[5:])

	tests := []struct {
		name     string
		keys     signing.Keys
		v1, v1a  int
		verifyBy []string
	}{
		{"v1a only", signing.Keys{SigningKeys: []string{keyA}}, 0, 1, []string{pubA}},
		{"v1a rotating", signing.Keys{SigningKeys: []string{keyB, keyA}}, 0, 2, []string{pubA, pubB}},
		{"both", signing.Keys{Secrets: []string{secret}, SigningKeys: []string{keyA}}, 1, 1, []string{secret, pubA}},
		{"v1 only", signing.Keys{Secrets: []string{secret}}, 1, 0, []string{secret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := signing.NewSignerWith(tt.keys)
			require.NoError(t, err)
			sig := s.Sign("msg_1", fixedNow, body)
			entries := strings.Split(sig, " ")
			require.Len(t, entries, tt.v1+tt.v1a, sig)
			for i, e := range entries {
				if i < tt.v1 {
					require.True(t, strings.HasPrefix(e, "v1,"), e)
				} else {
					require.True(t, strings.HasPrefix(e, "v1a,"), e)
				}
			}
			for _, k := range tt.verifyBy { // every key alone verifies the header
				v, err := verify.New(k)
				require.NoError(t, err)
				v.Now = clock
				h := header("msg_1", fixedNow.Unix(), sig)
				require.NoError(t, v.Verify(h, body), k[:5])
				require.ErrorIs(t, v.Verify(h, append(body, ' ')), verify.ErrNoMatchingSignature)
			}
		})
	}
}

// TestHMACSignerUnchanged: a v1-only Signer made by NewSignerWith signs as
// NewSigner's does.
func TestHMACSignerUnchanged(t *testing.T) {
	t.Parallel()
	a, b := testSecret(t, 1), testSecret(t, 2)
	s, err := signing.NewSignerWith(signing.Keys{Secrets: []string{a, b}})
	require.NoError(t, err)
	body := []byte("x")
	require.Equal(t, newSigner(t, a, b).Sign("m", fixedNow, body), s.Sign("m", fixedNow, body))
}

func BenchmarkSignV1a(b *testing.B) {
	key, err := signing.NewSigningKey(bytes.NewReader(bytes.Repeat([]byte{1}, 32)))
	if err != nil {
		b.Fatal(err)
	}
	s, err := signing.NewSignerWith(signing.Keys{Secrets: []string{testSecret(b, 1)}, SigningKeys: []string{key}})
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = s.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", fixedNow, body)
	}
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return raw
}

func stdB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func header(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(verify.HeaderID, id)
	h.Set(verify.HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(verify.HeaderSignature, sig)
	return h
}
