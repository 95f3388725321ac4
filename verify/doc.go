// Package verify checks the signatures hookline puts on the webhooks it
// sends. Receivers import it; it uses the standard library only and needs
// Go 1.21 or newer.
//
// hookline signs every request with the Standard Webhooks scheme
// (https://www.standardwebhooks.com): "v1" (HMAC-SHA256 with a shared
// secret) by default, "v1a" (Ed25519: the receiver holds only a public key)
// or both while an endpoint migrates. Any Standard Webhooks library
// verifies v1; no official one verifies v1a yet (checked December 2026:
// the Go, Python and JavaScript libraries of
// github.com/standard-webhooks/standard-webhooks read v1 entries only).
// This package checks both, kept small and tested against hookline's own
// signer, the reference Go library (v1) and known-answer vectors computed
// by an independent implementation, pyca/cryptography (v1a:
// testdata/gen_v1a.py).
//
// # Scheme
//
// A secret is "whsec_" followed by the standard (padded) base64 encoding of
// the key bytes; the HMAC key is the decoded bytes, not the string. A request
// carries three headers:
//
//	webhook-id:        the message id (hookline's delivery id, the same on every attempt)
//	webhook-timestamp: Unix seconds, in decimal
//	webhook-signature: space-separated "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"
//
// While an endpoint's secret rotates, hookline sends one "v1," entry per
// active secret, and a receiver may hold both the old and the new secret.
//
// For v1a, a public key is "whpk_" followed by the standard (padded) base64
// of the 32-byte Ed25519 public key, and each entry is
// "v1a,<base64 Ed25519 signature of id.timestamp.body>" (64 bytes). Pass
// "whpk_..." keys to [New] beside, or instead of, "whsec_..." secrets: the
// prefix says which scheme a key verifies. [KeysFromJWKS] and
// [NewFromJWKS] read an endpoint's public keys from the tenant's JWKS
// document (GET /v1/jwks.json), where each key's kid is
// "<endpoint id>.<RFC 7638 thumbprint>". While a key rotates, hookline
// sends one v1a entry per active key and the JWKS lists both.
//
// # Guarantees
//
//   - [Verifier.Verify] returns nil only if webhook-id is present, the
//     timestamp lies within ±Tolerance of the verifier's clock (the bounds
//     count as inside), and at least one "v1" entry of webhook-signature
//     matches at least one of the verifier's secrets, or at least one
//     "v1a" entry is a valid Ed25519 signature by one of its public keys
//     ([crypto/ed25519.Verify]). Entries with other version tags are
//     ignored, and so are v1a entries after the eighth (a bound on a
//     forged header's cost).
//   - HMAC signatures are compared in constant time with [crypto/hmac.Equal].
//   - Every failure wraps one of [ErrMissingHeaders], [ErrInvalidHeaders],
//     [ErrTimestampTooOld], [ErrTimestampTooNew] or
//     [ErrNoMatchingSignature] ([VerifyRequest] adds [ErrBodyTooLarge]), so
//     callers branch with [errors.Is]. [New] wraps [ErrInvalidSecret],
//     [KeysFromJWKS] [ErrInvalidJWKS].
//   - No error message contains a secret, a key or the body. The package
//     logs nothing.
//   - A Verifier is safe for concurrent use once built, as long as its
//     fields are not changed while it is in use.
//   - Verify never panics, whatever its input; a fuzz test checks this.
//
// Verify the raw body exactly as received, before any JSON decoding, and
// treat webhook-id as the idempotency key: hookline delivers at least once.
package verify
