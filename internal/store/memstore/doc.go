// Package memstore is the in-memory store: every method of package store
// that a consumer's port names, with the semantics the real store has on
// DynamoDB, held to it by the conformance suite (package storetest) that
// runs against both. Consumers' unit tests use it instead of fakes of their
// own; a test that needs a fault or a hook wraps it (a type embedding
// *Store and overriding one method), it does not re-implement it.
//
// What it keeps as the real store does:
//   - the same errors: store.ErrNotFound (missing, or another tenant's),
//     ErrExists, ErrConflict (a write on a record that changed since it was
//     read, a job saved by another), ErrTooManyJobs (a tenant's job slots),
//     ErrNotDead, ErrReplayInFlight, ErrBadCursor, ErrCursorMismatch,
//     ErrBadFilter;
//   - conditional writes: an attempt is recorded on the record as it was
//     read (RecordAttempt applies it again on the record as it is,
//     RecordAttemptIfUnchanged refuses), a delivered delivery never moves,
//     the attempt log keeps the newest store.MaxAttemptLog entries;
//   - the sparse dead index, read oldest death first by ListDead with the
//     store's range bounds, filters and paging (a page stopped by its limit
//     carries a cursor, which is refused under another filter), and the
//     tenant's DLQ depth counter moving in the same write as the delivery;
//   - replay claims, job versions, job slots, the sweep's claim per gap;
//   - DynamoDB's key size limits (2048 bytes of partition key, 1024 of
//     sort key), which the local cloud may not enforce.
//
// Beside the store's methods it has a few for tests only, named as such:
// PutDelivery (a record as an attempt would have left it), InDeadIndex,
// Deliveries, Rejections and APIKeys.
//
// Values are copied in and out through the DynamoDB attribute encoding, so
// a caller sees what a round trip through the table gives (an empty list
// comes back nil, times as stored). It is safe for concurrent use; each
// call is one atomic step, as the real store's conditional writes make
// each of its writes.
//
// Its files are sorted as package store's, by record (tenants.go,
// endpoints.go, health.go, deliveries.go, load.go, deadlisting.go,
// depth.go, deadwindow.go, claims.go, jobs.go, sweep.go, rejections.go,
// erase.go, ...), so that a method and its fake are found under one name;
// messagelog.go is the in-memory message log (MessageLog).
//
// What it does not model: expiry (TTL) and eventual consistency (every
// read sees every write at once).
package memstore
