// Package retry decides when, and whether, a failed webhook delivery is
// tried again.
//
// # Model
//
// Deliveries ride on SQS. A message is received, the endpoint is called,
// and on failure the consumer does not delete the message: it changes the
// message's visibility timeout to the delay chosen here, and SQS hands the
// message out again when that timeout expires. Consequently:
//
//   - The attempt number is the message's ApproximateReceiveCount
//     (1 on the first delivery, 2 on the first retry, ...).
//   - The queue's redrive policy must use maxReceiveCount = Policy.Attempts(),
//     so that SQS moves the message to the dead-letter queue exactly when
//     the schedule runs out.
//   - A delay is always a whole number of seconds and never exceeds
//     Policy.LongestDelay: SQS hides a message at most 12 h (MaxDelay)
//     counted from its receive, and the function calls
//     ChangeMessageVisibility up to a queue visibility timeout after that
//     receive, so the longest delay is 12 h less the queue's visibility
//     timeout less a minute's margin (11h57m with the default 2 min).
//
// # Schedule
//
// A Policy's Schedule lists one delay per attempt: element i is the delay
// before attempt i+1, counted from the failure of attempt i. Element 0
// belongs to the first attempt and is normally 0; Decide never reads it.
// DefaultSchedule tries at 0, 5s, 30s, 5m, 30m, 2h, 8h and 12h, i.e. eight
// attempts. Steps are numbered from 0, like the slice index, in error
// messages.
//
// After attempt n fails, Decide takes Schedule[n], applies jitter, honours a
// Retry-After hint from the endpoint (never waiting less than scheduled),
// rounds up to whole seconds, shortens the result to LongestDelay, and gives
// up if the attempts are exhausted or if the next attempt would fall after
// the event's MaxAge. A 12 h step is valid and means "as long as SQS
// allows": LongestDelay.
//
// The package is pure: the current time and the random source are passed
// in, so every decision is reproducible in tests.
package retry
