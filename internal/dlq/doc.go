// Package dlq is the delivery dead-letter queue as the background jobs see
// it: receiving its messages hidden for a while, deleting them, showing
// them again, and when each was sent there. The operator's redrive, the
// sweep, the depth gauges and the depth reconciliation run on the replay
// worker (internal/replay) for now, through this queue.
package dlq
