// Package jobs is the background-job machinery the replay function runs:
// the queue Message with its typed Kind; the Runner, which routes each
// message by its kind through one table (Routes, given by
// internal/background) and runs jobs step by step (the StepFunc of each
// kind of job, Jobs), completing a job or enqueueing its next step after
// its paced sends' span; the Starter, which records a job, takes its
// tenant's slot and enqueues its first step (what the api function wires);
// the recovery of idle jobs; and the pacing (Config.Delay, Config.Span). A
// job's step checkpoints its progress in the job record (domain.Job: the
// fields every job has, and its kind's arguments, a type of the package
// that runs the kind, read with ArgsOf) before it touches anything, so a
// worker that stops anywhere is resumed by SQS redelivering the job
// message.
//
// Guarantees:
//   - A job starts with its kind's arguments (Start refuses it without);
//     ArgsOf answers an error, never another kind's arguments.
//   - Every message names one Kind; a message in the format before kinds
//     (a struct of booleans: sweep, recover, gauges, dead_notice, or a bare
//     job_id) decodes to the kind it meant, so messages in flight during an
//     upgrade, and schedule inputs, keep working.
//   - A tenant has at most Config.MaxOpenJobs jobs queued or running:
//     Start refuses one more with store.ErrTooManyJobs, after giving back
//     the places of jobs that completed without giving theirs back.
//   - A tenant's job runs on the jobs queue; the operator's (redrive,
//     erase) and every other kind on the operations queue, where no
//     tenant's jobs are ahead of them.
package jobs
