// Package erasure erases a tenant: an operator's job (domain.KindErase) on
// the operations queue, run in steps by the replay worker, phase after
// phase (domain.ErasePhases), a page at a time. Every deletion is
// idempotent and each page's counts are checkpointed in the job record
// before the next, so a step stopped anywhere is resumed by the job's
// message and does the rest. The outbox items are found through the outbox
// table's message log index, then the message log's pages (OutboxTable),
// each deleted after the deliveries that derive from it (under their ids
// and their legacy ids), and each page after its items; then the
// deliveries the state table's delivery log still lists (to endpoints
// deleted before the erasure, or of expired events) are deleted through
// it: the tenant's shards of records, and store.IndexLog for records of
// legacy ids. The DLQ's messages are received; those someone else
// holds hidden are waited for a few steps, then left to the DLQ sweep, which
// deletes a tombstoned tenant's (Eraser.eraseDLQ).
package erasure
