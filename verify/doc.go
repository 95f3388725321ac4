// Package verify checks the signatures hookline puts on the webhooks it
// sends. Receivers import it; it uses the standard library only and needs
// Go 1.21 or newer.
//
// hookline signs every request with version 1 of the Standard Webhooks
// scheme (https://www.standardwebhooks.com), so any Standard Webhooks
// library verifies it too. This package is the same check, kept small and
// tested against hookline's own signer and the reference Go library.
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
// # Guarantees
//
//   - [Verifier.Verify] returns nil only if webhook-id is present, the
//     timestamp lies within ±Tolerance of the verifier's clock (the bounds
//     count as inside), and at least one "v1" entry of webhook-signature
//     matches at least one of the verifier's secrets. Entries with other
//     version tags are ignored.
//   - Signatures are compared in constant time with [crypto/hmac.Equal].
//   - Every failure wraps one of [ErrMissingHeaders], [ErrInvalidHeaders],
//     [ErrTimestampTooOld], [ErrTimestampTooNew] or
//     [ErrNoMatchingSignature] ([VerifyRequest] adds [ErrBodyTooLarge]), so
//     callers branch with [errors.Is]. [New] wraps [ErrInvalidSecret].
//   - No error message contains a secret, a key or the body. The package
//     logs nothing.
//   - A Verifier is safe for concurrent use once built, as long as its
//     fields are not changed while it is in use.
//   - Verify never panics, whatever its input; a fuzz test checks this.
//
// Verify the raw body exactly as received, before any JSON decoding, and
// treat webhook-id as the idempotency key: hookline delivers at least once.
package verify
