// Package signing implements version 1 of the Standard Webhooks signature
// scheme (https://www.standardwebhooks.com).
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
// # Guarantees
//
//   - [Signer.Sign] is deterministic. For the same secrets, id, timestamp
//     (truncated to whole seconds) and body it always returns the same header
//     value, with one "v1," entry per secret in the order the secrets were
//     given. It performs a single allocation, the returned string, once its
//     internal pool is warm.
//   - [Verifier.Verify] accepts a request only if its timestamp lies within
//     ±Tolerance of the verifier's clock (the bounds count as inside) and at
//     least one "v1" entry in the signature header matches at least one of
//     the verifier's keys. Signatures are compared in constant time with
//     [crypto/hmac.Equal]. Entries with other version tags (for example
//     "v1a,...") are ignored.
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
