// Package domain is hookline's vocabulary: the records and the values every
// other package speaks of, defined once. It owns
//
//   - a delivery (one event bound for one endpoint): its id, derived from the
//     event id and the endpoint id alone (DeliveryID), which is the
//     idempotency key (webhook-id) of every attempt and every replay; its
//     states (DeliveryState: pending, delivered, dead); its record
//     (Delivery), its attempt log (Attempt) and what an attempt did to it
//     (Outcome);
//   - the typed reasons: why a delivery died (DeadReason), why an endpoint
//     was disabled (DisableReason), why enqueue rejected an outbox item
//     (RejectReason, beside the public outbox package's validation codes);
//   - a tenant (Tenant), its API keys (APIKey), its portal links
//     (PortalLink, with the write Scopes they carry) and its endpoints
//     (Endpoint, with the signing secrets they hold, StoredSecret);
//   - a rejected outbox item (Rejection);
//   - a background job's record (Job, its JobKind and JobStatus), with the
//     JobArgs of its kind, whose types the job packages own (replay,
//     cancel, erasure, dlq); the values those are made of: the DeadFilter
//     a filter replay selects by, the Range a replay since a time and a
//     cancel select by, an erasure's progress (Erasure).
//
// It does no I/O and imports no other hookline package: package store
// persists these types (their dynamodbav tags are the state table's
// attribute names), package message carries a delivery on SQS, and the
// functions' packages decide with them.
package domain
