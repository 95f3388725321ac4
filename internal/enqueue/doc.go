// Package enqueue fans outbox events out to endpoints. For each INSERT on the
// outbox stream it decodes and validates the item, finds the tenant's
// subscribed endpoints, creates one delivery per endpoint (idempotently: the
// delivery id is derived from the event and endpoint ids) and sends one
// message per delivery to the delivery queue.
//
// A malformed item, or one for a tenant with no endpoint, is recorded as
// rejected with its reason and skipped: it never fails the batch, so it never
// blocks the stream. Only an infrastructure failure (DynamoDB or SQS
// unavailable) reports the record as a batch item failure, so the stream
// retries from that record on; everything before it is done, and everything
// from it on is retried without duplicates thanks to the idempotent delivery
// records.
package enqueue
