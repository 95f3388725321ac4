// Package enqueue fans outbox events out to endpoints. For each INSERT on the
// outbox stream it decodes and validates the item, finds the tenant's
// subscribed endpoints and sends one message per delivery to the delivery
// queue; the delivery id, derived from the event and endpoint ids, is the
// message's idempotency key (webhook-id). The messages of a whole stream
// batch go out together, in as few SendMessageBatch requests as SQS's
// limits allow (ten messages and 256 KiB a request), not a request per
// record. The requests are formed in stream order and sent concurrently,
// Config.SendConcurrency at once (default 4), so they may arrive out of
// it: the delivery queue is a standard queue (with fair queues), which
// keeps no order anyway, and nothing downstream relies on one (a receiver
// that needs order reads the event's sequence, docs/receiving.md). A
// record's messages are all sent or its invocation fails and is retried
// whole.
//
// Ordering across invocations is the stream's: with the mapping's
// parallelization factor above 1 (Props.EnqueueParallelization) Lambda
// still processes the records of one outbox item (one partition key) in
// order, and enqueue needs nothing more: it only ever acts on an item's
// INSERT, and each record's deliveries are keyed by the event, not by its
// place in the stream.
//
// enqueue writes no delivery record: a delivery's first attempt creates
// it (deliver), so a delivery delivered at its first attempt is written
// once, not twice. A stream record processed again first reads which of its deliveries
// exist (one eventually consistent batch read for the whole invocation)
// and sends only the others: what was attempted is not sent again. What was
// sent and not yet attempted exists only as its message, so a batch retried
// after a failure (or processed twice) sends those messages again, with the
// same delivery ids, which receivers deduplicate on (the soak counts these
// duplicates); so may a delivery whose first attempt was recorded too
// recently for the eventually consistent read to see. deliver drops a
// message whose delivery is already delivered. Delivery is at least once:
// a message may be sent twice, none is lost.
//
// Operational events (domain.OpEventTypes, written by hookline through
// package opevent) are outbox items like any other, but for three rules:
// an item of such a type is accepted only with hookline's marker
// (opevent.AttrOrigin), so a producer's is rejected (reserved_type); it goes
// only to the tenant's enabled endpoints that name its type
// (domain.Endpoint.SubscribesExplicitly), never to one with no filter or a
// disabled one; and when none does, it is dropped, not rejected.
//
// Accepted operational events are also put on the operator's
// EventBridge bus (source EventSource, detail-type the event type, detail an
// OperatorDetail), whatever their fan-out, in as few PutEvents requests as
// its limits allow (ten entries, 256 KiB), before the batch's messages are
// sent. The bus is optional and never holds up a delivery: the events a
// request or an entry failed for are put again, alone, up to
// DefaultPutTries (3) tries with a short backoff, and those that still
// fail are parked on the enqueue failure queue as ParkedEvent messages
// (counted, OperatorEventsParked; put on the bus again by make
// reprocess-enqueue), and the invocation goes on. Only when they cannot be
// parked either does the invocation fail, and the stream's retry puts the
// batch's operational events again: at least once, deduplicated by the
// detail's id.
//
// A malformed item, or one for a tenant with no endpoint, is recorded as
// rejected with its reason and skipped: it never fails the batch, so it never
// blocks the stream. Only an infrastructure failure (DynamoDB or SQS
// unavailable) fails the invocation, so the stream retries the batch;
// what was already attempted is not sent again, and nothing after the
// failure is skipped.
package enqueue
