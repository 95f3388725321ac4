// Package enqueue fans outbox events out to endpoints. For each INSERT on the
// outbox stream it decodes and validates the item, finds the tenant's
// subscribed endpoints, creates one delivery per endpoint (idempotently: the
// delivery id is derived from the event and endpoint ids) and sends one
// message per delivery to the delivery queue.
//
// A malformed item, or one for a tenant with no endpoint, is recorded as
// rejected with its reason and skipped: it never fails the batch, so it never
// blocks the stream. Only an infrastructure failure (DynamoDB or SQS
// unavailable) fails the invocation, so the stream retries the batch; the
// records already processed are no-ops the second time, thanks to the
// idempotent delivery records, and nothing after the failure is skipped.
package enqueue
