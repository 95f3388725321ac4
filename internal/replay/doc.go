// Package replay brings dead deliveries back: a tenant's replay by ids or by
// filter. Its Worker is also, for now, the replay function's runner: it
// routes each jobs.Message by its kind through one table (routes) to the
// job that handles it: a step of a replay, a redrive (internal/dlq) or an
// erasure (internal/erasure), a sweep or the depth gauges and
// reconciliation (internal/dlq), a delivery.dead summary
// (opevent.DeadSummaries), a recovery of idle jobs (jobs.Starter.Recover).
// Jobs run in steps, driven by messages on the jobs queue; each step
// checkpoints its progress in the job record before it touches a delivery,
// so a worker that stops anywhere (timeout, crash) is resumed by SQS
// redelivering the job message, and picks up where it was.
//
// Guarantees:
//   - A replayed delivery keeps its id, which is its idempotency key
//     (webhook-id), gets a fresh message and so a fresh retry schedule, and
//     records replayed_at.
//   - A delivery is claimed (dead -> pending, conditionally) before its
//     message is sent and released after: two replays of the same delivery
//     send it once, and a job stopped between claim and send sends it when it
//     resumes. Every delivery ends back in flight or still dead.
//   - Sends are paced: spread over time at a configured rate, with jitter,
//     through SQS message delays, so a receiver that just came back is not
//     flooded.
//   - After a job, a sweep deletes from the SQS dead-letter queue the
//     messages whose deliveries were replayed or delivered since, so the
//     DLQ's depth, and its alarm, count what is really still dead.
//   - A delivery.dead notice (opevent.DeadNotice, sent by deliver, delayed
//     until its window ends) on the operations queue writes one
//     delivery.dead summary of the window into the outbox; a notice handled
//     twice writes it once (its id derives from the window). A death the
//     sweep records (its attempt did not) is added to its window too.
package replay
