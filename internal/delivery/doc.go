// Package delivery defines a delivery: one event bound for one endpoint. Its
// ID is derived from the event id and the endpoint id alone, so processing the
// same outbox stream record twice names the same delivery, and the ID is the
// idempotency key (webhook-id) of every attempt and every replay. Message is
// the SQS message that carries a delivery from enqueue to deliver and, when it
// dies, sits in the dead-letter queue as the durable copy of what to replay.
package delivery
