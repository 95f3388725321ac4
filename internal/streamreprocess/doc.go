// Package streamreprocess reprocesses the outbox stream batches that the
// enqueue function's event source mapping gave up on. The mapping retries a
// failing batch, bisecting it, until its oldest record reaches the age cap;
// then it parks the batch on the enqueue failure queue as a failure record,
// which names where the records are (stream, shard, first and last sequence
// numbers) and holds none of them.
//
// For each parked message, Reprocessor reads the batch back from the stream
// (GetShardIterator AT_SEQUENCE_NUMBER on the record's shard, GetRecords up
// to its last sequence number), builds from the records the same DynamoDB
// stream event Lambda would have sent, invokes the enqueue function with it
// synchronously (so the records go through the production decoding and
// code, with the function's own configuration), and deletes the message
// only when every record was processed. A failed invocation is retried a
// few times; a message whose batch still fails is kept, visible again for
// the next run.
//
// The enqueue function also parks there the operational events the
// operator's EventBridge bus kept refusing (enqueue.ParkedEvent). Such a
// message is put on the bus it names, as enqueue would have put it, again
// after a failure, and deleted once the bus took it (Resent); one the bus
// still refuses is kept.
//
// Records older than the stream's 24 h retention can no longer be read.
// Such a message is kept and reported as gone; with the outbox fallback
// enabled, the events are read instead from the outbox table, by the time
// they occurred (a window around the batch's arrival times), and the
// messages are deleted once they are processed.
//
// Reprocessing is at least once, like the stream: enqueue sends nothing for
// a delivery already attempted, and sends again, with the same delivery id
// (webhook-id), a delivery whose message was sent but not yet attempted.
// Processing a batch twice, or an outbox event that was in no parked batch,
// is therefore harmless.
package streamreprocess
