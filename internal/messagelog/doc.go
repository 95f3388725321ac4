// Package messagelog keeps the message log: a tenant's events, listed
// newest first (by occurred_at, then id), and one event with its payload.
//
// Where the events are listed:
//   - Pages (pages.go): enqueue writes a stream batch's events into pages
//     in the state table, one per tenant and second of the events' times
//     (Pages.Write, one BatchWriteItem a batch), each page an item of up to
//     100 entries (id, type, occurred_at, endpoint id, expiry), partition
//     TENANT#<tenant>#EVENTS#<n>, one of PageShards. Every outbox item
//     without log_pk is listed there: all of outbox.Event.Item's since it
//     stopped writing the index keys, and items written by hand.
//   - The outbox's sharded index by_tenant_shard (outbox.IndexByTenantShard:
//     partition log_pk, one of outbox.LogShards values a tenant, sort
//     log_sk), which lists the items of earlier producer libraries (they
//     wrote log_pk, and their index entries are what they paid for); while
//     the stack keeps the unsharded index by_tenant (outbox.IndexByTenant:
//     partition tenant_id), Reader.Legacy reads that instead.
//
// A listing queries every shard of both, newest first, and merges them
// (shards.go) on the log key (outbox.LogKey); one event with its payload
// is a GetItem of the outbox item by id. Nothing here scans.
//
// Guarantees:
//   - Tenant isolation: a listing queries the tenant's partitions only (a
//     cursor names a position, never a tenant), a page of another tenant
//     is an error, and an event read by id is ErrNotFound
//     (store.ErrNotFound) when its tenant_id is another's.
//   - Listed once: an event on two pages (a stream batch tried again, split
//     differently) is listed once, its copies being adjacent in the merge.
//   - Bounded: a page holds at most 100 entries (far below DynamoDB's 400
//     KB), a listing's read of a shard goes to the end of one second of its
//     pages and no further (at most maxBucketQueries queries), and its
//     rounds are at most maxQueries.
//   - An event is listed until its outbox item's expiry (its page keeps
//     it), then no longer, whatever DynamoDB's TTL has deleted yet.
//   - The reader serves what the tables hold: the payload retention
//     (api.Server.PayloadRetention) is the API's rule, not this package's.
package messagelog
