// Package dlq is the delivery dead-letter queue and the jobs that work on
// it, run by the replay worker from the operations queue:
//
//   - Redriver: the operator's redrive of the whole DLQ (domain.KindRedrive),
//     in paced steps. Each message is sent back before it is deleted, so a
//     stop anywhere leaves it in the DLQ or in flight (at worst both: a
//     duplicate, never a loss); a dead delivery is claimed first, so a
//     tenant's concurrent replay does not send it twice. A receive's
//     messages (ten) are handled at once, and counted in their order.
//   - Sweeper: the sweeps. The schedule's (every 5 minutes) moves the
//     arrivals, SQS's redrive target, to the DLQ, each checked on its way
//     (MoveArrivals: a death its attempt did not record is recorded, a
//     stale copy or an erased tenant's message deleted), and passes over
//     the whole DLQ once a day (FullPassGap, store.ClaimSweep); a sweep
//     after a job of a tenant passes over that tenant's messages. A pass
//     deletes the stale copies of deliveries delivered or replayed since,
//     and the messages of tenants being erased (a tombstone), and records
//     the deaths their attempts did not (never an erased tenant's). A dead
//     message is received about 14 times over the DLQ's 14 days, and once
//     more per job of its tenant.
//   - Depths: every tenant's DLQ depth as gauges, and the reconciliation of
//     the depth counters with the dead index.
//   - Queue: receiving, deleting and showing again the DLQ's messages, and
//     when each was sent there (used by all of the above and by the
//     erasure).
package dlq
