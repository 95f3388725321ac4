// Package background assembles the replay function's handler from the
// packages that do the work: its route table (routes.go) sends each
// jobs.Message kind, and each kind of job, to the package named for what it
// does. The machinery (job records, the step loop, per-tenant slots,
// recovery, pacing) is internal/jobs'; replaying dead deliveries, and the
// replay since a time, is internal/replay's; cancelling an endpoint's
// pending deliveries is internal/cancel's; the DLQ's redrive, sweep, gauges and reconciliation
// are internal/dlq's; tenant erasure is internal/erasure's; the
// delivery.dead summaries are internal/opevent's. This package holds
// wiring only: which port of the store and of SQS each job is given.
//
// Guarantees (each job's package states its own):
//   - Jobs run in steps, driven by messages on the jobs queue (a tenant's)
//     or the operations queue (the operator's, and every other kind); each
//     step checkpoints its progress in the job record before it touches a
//     delivery, so a worker that stops anywhere is resumed by SQS
//     redelivering the job message.
//   - After a job completes, the DLQ is swept twice (5 s and 90 s later;
//     coalesced to one sweep per jobs.Config.SweepGap), so its depth, and
//     its alarm, count what is really still dead.
//   - A death the sweep records (its attempt did not) is added to its
//     endpoint's delivery.dead window, as deliver does for the deaths it
//     records.
package background
