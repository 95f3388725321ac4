// Package messagelog reads the message log: a tenant's events, from the outbox
// table. Listing is a Query of the outbox's by_tenant index
// (outbox.IndexByTenant: partition tenant_id, sort log_sk, newest first),
// which projects an event's type, occurred_at and endpoint_id but not its
// payload; one event with its payload is a GetItem of the outbox item by
// id. Nothing here scans, and nothing writes.
//
// Guarantees:
//   - Tenant isolation: a listing queries the tenant's partition only (a
//     cursor names a position, never a tenant), and an event read by id is
//     ErrNotFound (store.ErrNotFound) when its tenant_id is another's.
//   - Items a producer wrote without log_sk are delivered but not listed
//     (the index is sparse); they can still be read by id.
//   - The reader serves what the table holds: the payload retention
//     (api.Server.PayloadRetention) is the API's rule, not this package's.
package messagelog
