package verify

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidJWKS means a JWKS document given to KeysFromJWKS is not one, or
// holds a malformed Ed25519 key, or none for the endpoint asked for.
var ErrInvalidJWKS = errors.New("verify: invalid JWKS document")

// jwk is the part of a JSON Web Key (RFC 7517, RFC 8037) KeysFromJWKS reads.
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// KeysFromJWKS returns, in "whpk_" form for New, the Ed25519 public keys of
// a JWKS document (hookline's GET /v1/jwks.json) that belong to
// endpointID: those whose kid is "<endpointID>.<thumbprint>", as hookline
// names them. An empty endpointID takes every Ed25519 key of the document.
//
// A key is an Ed25519 signing key when its kty is "OKP" and its crv
// "Ed25519" (RFC 8037); x must then be the unpadded base64url encoding of
// 32 bytes. Keys of other types, and keys whose use is not "sig" or whose
// alg is not "EdDSA" (when given), are skipped. Errors wrap ErrInvalidJWKS:
// a document that is not a JSON object with a "keys" array, a malformed
// Ed25519 key, or no key left for endpointID.
//
// Fetch the document over an authenticated channel and keep it as a trust
// list: never take keys from the webhook request itself.
func KeysFromJWKS(doc []byte, endpointID string) ([]string, error) {
	var set struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil || set.Keys == nil {
		return nil, fmt.Errorf("%w: not a JSON object with a \"keys\" array", ErrInvalidJWKS)
	}
	var out []string
	for i, raw := range *set.Keys {
		var k jwk
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("%w: keys[%d] is not a JSON Web Key", ErrInvalidJWKS, i)
		}
		if k.Kty != "OKP" || k.Crv != "Ed25519" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "EdDSA") {
			continue
		}
		if endpointID != "" && !strings.HasPrefix(k.Kid, endpointID+".") {
			continue
		}
		pub, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: keys[%d] (kid %q): x is not the unpadded base64url of a 32-byte Ed25519 public key", ErrInvalidJWKS, i, k.Kid)
		}
		out = append(out, encodePublicKey(pub))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no Ed25519 signing key for endpoint %q", ErrInvalidJWKS, endpointID)
	}
	return out, nil
}

// NewFromJWKS returns a Verifier for endpointID's Ed25519 keys in a JWKS
// document: New(KeysFromJWKS(doc, endpointID)...).
func NewFromJWKS(doc []byte, endpointID string) (*Verifier, error) {
	keys, err := KeysFromJWKS(doc, endpointID)
	if err != nil {
		return nil, err
	}
	return New(keys...)
}
