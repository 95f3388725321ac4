// Package messagelog reads the message log: a tenant's events, from the outbox
// table. Listing queries the outbox's sharded index by_tenant_shard
// (outbox.IndexByTenantShard: partition log_pk, one of outbox.LogShards
// values a tenant, sort log_sk), each shard newest first, and merges them
// (shards.go); while the stack keeps the unsharded index by_tenant
// (outbox.IndexByTenant: partition tenant_id), Reader.Legacy lists from it
// alone. Both project an event's type, occurred_at and endpoint_id but not
// its payload; one event with its payload is a GetItem of the outbox item by
// id. Nothing here scans, and nothing writes.
//
// Guarantees:
//   - Tenant isolation: a listing queries the tenant's partition only (a
//     cursor names a position, never a tenant), and an event read by id is
//     ErrNotFound (store.ErrNotFound) when its tenant_id is another's.
//   - Items a producer wrote without log_sk are delivered but not listed
//     (the index is sparse); they can still be read by id. Items written
//     without log_pk (by a producer library before it) are listed by
//     by_tenant only.
//   - The reader serves what the table holds: the payload retention
//     (api.Server.PayloadRetention) is the API's rule, not this package's.
package messagelog
