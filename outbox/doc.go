// Package outbox is the producer's side of hookline: it builds the DynamoDB
// item a producer writes to the outbox table, in the same TransactWriteItems
// call as its own business write, so that an event exists if and only if the
// business change committed (the transactional outbox pattern).
//
// The put carries attribute_not_exists(id): an event id is written once, and
// a producer that retries its transaction cannot create a second event.
// Validate is the same check hookline's enqueue function applies to every
// outbox item it reads from the stream; an item that fails it is recorded as
// rejected with its reason and never blocks the events behind it.
//
// Every item carries an expires_at, the outbox table's TTL attribute, so
// that the outbox does not grow forever: by default DefaultRetention (16
// days) after the event occurred, or Event.ExpiresAt; Event.NoExpiry keeps
// the item until someone deletes it. hookline delivers from the stream
// record, so an item's expiry never affects its delivery.
//
// The package imports only the SDK's DynamoDB types: it is what producers
// link.
package outbox
