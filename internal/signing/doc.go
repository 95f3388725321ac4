// Package signing implements the Standard Webhooks signature schemes
// (https://www.standardwebhooks.com): v1 (HMAC-SHA256) and v1a (Ed25519).
//
// Receivers outside this module use the public module
// github.com/hookline/hookline/verify instead of this package's Verifier.
// This package's Verifier is a thin adapter over verify.Verifier (string
// arguments instead of an http.Header, the same rules and the same sentinel
// errors), so the repository's own tests and tools check exactly what
// receivers run; only the Signer is implemented here. interop_test.go holds
// the Signer, this Verifier, the verify package and the official Standard
// Webhooks Go library to one another.
//
// # Scheme
//
// A secret is the string "whsec_" followed by the standard (padded) base64
// encoding of the key bytes. [NewSecret] generates 32 random key bytes. The
// HMAC key is the base64-decoded bytes after the prefix, not the secret
// string itself.
//
// The signed content is
//
//	{webhook-id}.{webhook-timestamp}.{body}
//
// where webhook-timestamp is the Unix time in seconds, written in decimal. The
// webhook-signature header holds one or more space-separated entries of the
// form "v1,<base64 HMAC-SHA256(key, content)>", one per active secret. This
// lets a sender rotate secrets without downtime.
//
// # v1a (Ed25519)
//
// A signing key is "whsk_" followed by the standard (padded) base64 of the
// 64-byte Ed25519 key pair: the 32-byte seed, then the 32-byte public key
// (RFC 8032's private key as crypto/ed25519.PrivateKey and NaCl hold it).
// The specification says only "base64 encoded, prefixed with whsk_" of a
// "standard ed25519 key pair"; this is the layout Svix, the scheme's
// author and main user, reads and writes (its whsk_ keys decode to 64
// bytes), so a key moves between the two unchanged. [ParseSigningKey]
// refuses any other length and a pair whose halves disagree. A public key
// is "whpk_" followed by the standard base64 of its 32 bytes. hookline
// generates signing keys ([NewSigningKey]); they never leave the stack
// unsealed. Each v1a entry is "v1a,<base64 Ed25519 signature of
// {webhook-id}.{webhook-timestamp}.{body}>", after the v1 entries, one per
// active key: [NewSignerWith] takes an endpoint's secrets and signing keys
// together. The known-answer vectors in verify/testdata/v1a_vectors.json
// (computed by pyca/cryptography, gen_v1a.py) hold the signer to the
// specification's published example and to an independent implementation.
// [Thumbprint] is a public key's RFC 7638 JWK thumbprint, the second part
// of its kid in a tenant's JWKS document.
//
// # Guarantees
//
//   - [Signer.Sign] is deterministic. For the same secrets, id, timestamp
//     (truncated to whole seconds) and body it always returns the same header
//     value, with one "v1," entry per secret in the order the secrets were
//     given. It performs a single allocation, the returned string, once its
//     internal pool is warm, when it signs v1 only; v1a entries (Ed25519 is
//     deterministic too) cost a copy of the signed content and the
//     signatures.
//   - [Verifier.Verify] accepts a request only if its timestamp lies within
//     ±Tolerance of the verifier's clock (the bounds count as inside) and at
//     least one "v1" entry in the signature header matches at least one of
//     the verifier's secrets, or some "v1a" entry is an Ed25519 signature by
//     one of its whpk_ public keys (NewVerifier takes both kinds, as
//     verify.New does). HMAC signatures are compared in constant time with
//     [crypto/hmac.Equal]. Entries with other version tags are ignored.
//   - Every failure wraps one of the sentinel errors [ErrMissingHeader],
//     [ErrInvalidHeader], [ErrTimestampTooOld], [ErrTimestampTooNew] or
//     [ErrNoMatch], so callers can branch with [errors.Is]. They are the
//     verify package's errors of the same meaning under this package's
//     names (ErrNoMatch is verify.ErrNoMatchingSignature, and so on).
//   - Error messages never contain secret or key material.
//   - [Signer] and [Verifier] are safe for concurrent use once built. A
//     Verifier's Tolerance and Now fields must not be changed while it is in
//     use.
//   - Verify never panics, whatever its input. A fuzz test checks this.
package signing
