// Package message is the SQS message that carries a delivery (one event bound
// for one endpoint, named by domain.DeliveryID) from enqueue to deliver and,
// when it dies, sits in the dead-letter queue as the durable copy of what to
// replay: its format (Message, Decode, Encode, Replayed), the body POSTed to
// the endpoint (Body), its MessageGroupId, the tenant's (GroupID,
// CheckGroupID), and the sending of messages in SQS batches within SQS's
// limits (Fits, CheckBatch, SendBatch; SQS's limits, one definition
// of each, in sqsrules.go). A message's delivery id is the
// idempotency key (webhook-id) of every attempt and every replay: the same
// event processed twice yields messages with the same id.
package message
