// Package dlq is the delivery dead-letter queue as the background jobs see
// it. Queue receives its messages hidden for a while, deletes them, shows
// them again, and says when each was sent there (used by the operator's
// redrive, the sweep and the erasure). Depths publishes every tenant's DLQ
// depth as gauges (a value each minute, also when no depth changed) and
// reconciles the depth counters with the dead index (each correction
// logged and counted in DLQDepthCorrections; a tenant that fails does not
// stop the others).
//
// The operator's redrive of the whole DLQ and the sweep still run in
// internal/replay's worker, through Queue: moving them here is the next
// step of issue 24.
package dlq
