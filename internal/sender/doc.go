// Package sender sends one delivery attempt: it POSTs the signed body to
// the endpoint and classifies what came back as delivered, retry (with any
// Retry-After the receiver asked for) or dead (with the reason).
//
// The HTTP client it builds never follows redirects, reads at most a few KiB
// of any response, bounds the connect and whole-request time, reuses
// connections across warm invocations, and dials only addresses the SSRF
// guard (package netguard) allows, checked after DNS resolution. It sends the
// Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature); webhook-id is the delivery id, which is also sent as
// Idempotency-Key and X-Idempotency-Key and stays the same on every attempt
// and replay.
package sender
