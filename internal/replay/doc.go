// Package replay brings dead deliveries back: the step of a tenant's replay
// by ids or by filter (Replayer.Step, the jobs.StepFunc of domain.KindIDs
// and domain.KindFilter). The runner that drives it, step by step, is
// internal/jobs'; the table that gives it its jobs, internal/background's.
//
// Guarantees:
//   - A step checkpoints the ids it selected in the job record before it
//     touches a delivery, so a step stopped anywhere is resumed from them.
//   - A replayed delivery keeps its id, which is its idempotency key
//     (webhook-id), gets a fresh message and so a fresh retry schedule, and
//     records replayed_at.
//   - A delivery is claimed (dead -> pending, conditionally) before its
//     message is sent and released after: two replays of the same delivery
//     send it once, and a job stopped between claim and send sends it when it
//     resumes. Every delivery ends back in flight or still dead. A step
//     claims an SQS batch's worth (ten) at once, and releases them at once
//     once sent: its writes are a round trip per ten deliveries, and what
//     it counts (replayed, skipped by reason) is counted in the ids' order.
//   - Sends are paced: spread over time at a configured rate, with jitter,
//     through SQS message delays, so a receiver that just came back is not
//     flooded.
//   - A delivery that is not the job's tenant's, not dead, without its
//     message, or of a disabled endpoint is skipped, and counted by reason.
package replay
