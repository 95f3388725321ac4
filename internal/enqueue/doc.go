// Package enqueue fans outbox events out to endpoints. For each INSERT on the
// outbox stream it decodes and validates the item, finds the tenant's
// subscribed endpoints and sends one message per delivery to the delivery
// queue; the delivery id, derived from the event and endpoint ids, is the
// message's idempotency key (webhook-id). The messages of a whole stream
// batch go out together, in stream order, in as few SendMessageBatch
// requests as SQS's limits allow (ten messages and 256 KiB a request), not a
// request per record.
//
// A delivery is recorded after its message is sent, with a conditional put
// that carries enqueued_at: a delivery that exists has been sent. A stream
// record processed again first reads which of its deliveries exist (one
// batch read for the whole invocation) and sends only the others. The one
// window in which a message is sent twice is a failure between a send and
// the puts of its deliveries, which come before the next send: the retry
// sends that one request's messages again, with the same delivery ids,
// which receivers deduplicate on (the soak counts these duplicates).
// deliver may receive a message before its delivery is recorded; it then
// writes the record itself, and the put finds it exists.
//
// A malformed item, or one for a tenant with no endpoint, is recorded as
// rejected with its reason and skipped: it never fails the batch, so it never
// blocks the stream. Only an infrastructure failure (DynamoDB or SQS
// unavailable) fails the invocation, so the stream retries the batch; what
// was already sent and recorded is not sent again, and nothing after the
// failure is skipped.
package enqueue
