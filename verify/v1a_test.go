package verify_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/verify"
)

// v1aVector is one entry of testdata/v1a_vectors.json (gen_v1a.py).
type v1aVector struct {
	Name        string   `json:"name"`
	Secrets     []string `json:"secrets"`
	SigningKeys []string `json:"signing_keys"`
	PublicKeys  []string `json:"public_keys"`
	JWKS        []struct {
		Kty        string `json:"kty"`
		Crv        string `json:"crv"`
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
	raw, err := os.ReadFile("testdata/v1a_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Vectors []v1aVector }
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return file.Vectors
}

// jwksOf is the JWKS document hookline would serve for the vector's keys,
// as endpoint ep's, beside a key of another endpoint and a key of another
// type.
func jwksOf(t *testing.T, vec v1aVector, ep string) []byte {
	t.Helper()
	keys := []map[string]string{
		{"kty": "RSA", "n": "xyz", "e": "AQAB", "kid": ep + ".rsa"},
		{"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "ep_other.k", "use": "sig", "alg": "EdDSA"},
	}
	for _, k := range vec.JWKS {
		keys = append(keys, map[string]string{"kty": k.Kty, "crv": k.Crv, "x": k.X, "kid": ep + "." + k.Thumbprint, "use": "sig", "alg": "EdDSA"})
	}
	doc, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestV1aKnownAnswerVectors holds Verify to the vectors an independent
// implementation (pyca/cryptography) computed: the whole header verifies
// with every key, with each public key alone and with the keys read from
// a JWKS document; a changed body, id or timestamp does not.
func TestV1aKnownAnswerVectors(t *testing.T) {
	t.Parallel()
	for _, vec := range loadV1aVectors(t) {
		t.Run(vec.Name, func(t *testing.T) {
			at := func() time.Time { return time.Unix(vec.Timestamp, 0) }
			h := header(vec.ID, vec.Timestamp, vec.Expected)
			check := func(name string, keys []string, want error) {
				t.Helper()
				v, err := verify.New(keys...)
				if err != nil {
					t.Fatalf("%s: New: %v", name, err)
				}
				v.Now = at
				if err := v.Verify(h, []byte(vec.Body)); !sameErr(err, want) {
					t.Fatalf("%s: got %v, want %v", name, err, want)
				}
			}
			check("every key", append(slices.Clone(vec.Secrets), vec.PublicKeys...), nil)
			for i, pk := range vec.PublicKeys {
				check(fmt.Sprintf("public key %d alone", i), []string{pk}, nil)
			}
			jwksKeys, err := verify.KeysFromJWKS(jwksOf(t, vec, "ep_test"), "ep_test")
			if err != nil || !slices.Equal(jwksKeys, vec.PublicKeys) {
				t.Fatalf("KeysFromJWKS: %v, %v; want %v", jwksKeys, err, vec.PublicKeys)
			}
			check("keys from the JWKS", jwksKeys, nil)

			v, err := verify.New(vec.PublicKeys...)
			if err != nil {
				t.Fatal(err)
			}
			v.Now = at
			for name, hh := range map[string]struct {
				id, body string
				ts       int64
			}{
				"body changed": {vec.ID, vec.Body + " ", vec.Timestamp},
				"id changed":   {vec.ID + "x", vec.Body, vec.Timestamp},
				"ts changed":   {vec.ID, vec.Body, vec.Timestamp ^ 1},
			} {
				err := v.Verify(header(hh.id, hh.ts, vec.Expected), []byte(hh.body))
				if !sameErr(err, verify.ErrNoMatchingSignature) {
					t.Fatalf("%s: got %v, want ErrNoMatchingSignature", name, err)
				}
			}
		})
	}
}

func sameErr(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

// TestV1aWithoutPublicKeys: a receiver that holds only the secret still
// verifies a migrating endpoint's v1 entry, and one that holds another
// endpoint's public key verifies nothing.
func TestV1aWithoutPublicKeys(t *testing.T) {
	t.Parallel()
	vecs := loadV1aVectors(t)
	var both, other v1aVector
	for _, v := range vecs {
		switch v.Name {
		case "migration-v1-and-v1a":
			both = v
		case "hookline-body":
			other = v
		}
	}
	v := newVerifier(t, both.Secrets...)
	v.Now = func() time.Time { return time.Unix(both.Timestamp, 0) }
	wantErr(t, v.Verify(header(both.ID, both.Timestamp, both.Expected), []byte(both.Body)), nil)
	v = newVerifier(t, other.PublicKeys...)
	v.Now = func() time.Time { return time.Unix(both.Timestamp, 0) }
	wantErr(t, v.Verify(header(both.ID, both.Timestamp, both.Expected), []byte(both.Body)), verify.ErrNoMatchingSignature)
}

func TestNewPublicKeys(t *testing.T) {
	t.Parallel()
	good := "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4="
	tests := []struct {
		name string
		keys []string
		want string // "" for no error, else a part of the message
	}{
		{"public key", []string{good}, ""},
		{"public key and secret", []string{secretA, good}, ""},
		{"empty after prefix", []string{"whpk_"}, "public key 0"},
		{"not base64", []string{secretA, "whpk_!!!!"}, "public key 1"},
		{"unpadded", []string{strings.TrimRight(good, "=")}, "public key 0"},
		{"url-safe alphabet", []string{"whpk_" + strings.Repeat("_", 43) + "="}, "public key 0"},
		{"31 bytes", []string{"whpk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}, "is 31 bytes"},
		{"a signing key is not a public key", []string{"whsk_6Xb/dCcHpPea21PS1N9VY/NZW723CEc77N4rJCubMbfVKIDij2HKpMKkioLlX0dRqSKJp4AJ6p9lMicMFs6Kvg=="}, "secret 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := verify.New(tt.keys...)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: got %v, want an error with %q", err, tt.want)
			case err != nil && !sameErr(err, verify.ErrInvalidSecret):
				t.Fatalf("New: %v does not wrap ErrInvalidSecret", err)
			case err != nil && strings.Contains(err.Error(), strings.TrimPrefix(tt.keys[len(tt.keys)-1], "whpk_")) && len(tt.keys[len(tt.keys)-1]) > 10:
				t.Fatalf("New: the error quotes the key: %v", err)
			}
		})
	}
}

func TestKeysFromJWKS(t *testing.T) {
	t.Parallel()
	const x = "1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4"
	const pk = "whpk_1SiA4o9hyqTCpIqC5V9HUakiiaeACeqfZTInDBbOir4="
	key := func(extra string) string {
		return `{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"ep_a.t1"` + extra + `}`
	}
	tests := []struct {
		name, doc, endpoint string
		want                []string
		wantErr             string
	}{
		{"one key", `{"keys":[` + key("") + `]}`, "ep_a", []string{pk}, ""},
		{"every endpoint", `{"keys":[` + key("") + `]}`, "", []string{pk}, ""},
		{"another endpoint's", `{"keys":[` + key("") + `]}`, "ep_ab", nil, "no Ed25519 signing key"},
		{"kid prefix is not enough", `{"keys":[` + key("") + `]}`, "ep_", nil, "no Ed25519 signing key"},
		{"use enc is skipped", `{"keys":[` + key(`,"use":"enc"`) + `]}`, "ep_a", nil, "no Ed25519 signing key"},
		{"alg other is skipped", `{"keys":[` + key(`,"alg":"ES256"`) + `]}`, "ep_a", nil, "no Ed25519 signing key"},
		{"X25519 is skipped", `{"keys":[{"kty":"OKP","crv":"X25519","x":"` + x + `","kid":"ep_a.t"}]}`, "ep_a", nil, "no Ed25519 signing key"},
		{"padded x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `=","kid":"ep_a.t"}]}`, "ep_a", nil, "keys[0]"},
		{"short x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"ep_a.t"}]}`, "ep_a", nil, "keys[0]"},
		{"not json", `nope`, "", nil, "not a JSON object"},
		{"no keys", `{}`, "", nil, "not a JSON object"},
		{"keys not an array", `{"keys":{}}`, "", nil, "not a JSON object"},
		{"a key not an object", `{"keys":[1]}`, "", nil, "keys[0]"},
		{"empty", `{"keys":[]}`, "", nil, "no Ed25519 signing key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := verify.KeysFromJWKS([]byte(tt.doc), tt.endpoint)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !sameErr(err, verify.ErrInvalidJWKS) {
					t.Fatalf("got %v, %v; want an ErrInvalidJWKS with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestV1aEntriesAreBounded: a header stuffed with v1a entries is not
// checked past the first few, so a forged header's cost is bounded; the
// valid entry hookline sends first is found.
func TestV1aEntriesAreBounded(t *testing.T) {
	t.Parallel()
	vec := loadV1aVectors(t)[0]
	v := newVerifier(t, vec.PublicKeys...)
	v.Now = func() time.Time { return time.Unix(vec.Timestamp, 0) }
	junk := strings.Repeat("v1a,"+strings.Repeat("A", 86)+"== ", 20)
	wantErr(t, v.Verify(header(vec.ID, vec.Timestamp, vec.Expected+" "+junk), []byte(vec.Body)), nil)
	wantErr(t, v.Verify(header(vec.ID, vec.Timestamp, junk+vec.Expected), []byte(vec.Body)), verify.ErrNoMatchingSignature)
}
