// Package deliver handles batches from the delivery queue: one attempt per
// message, sent concurrently, its fate chosen by the pure Decide and
// performed by apply. The path through the code is the deliver tour of
// docs/architecture.md; this comment states what the package guarantees.
//
// # Delivery
//
//   - At least once, under one key: every attempt of a delivery (retries,
//     replays and resends too) carries the delivery id as its idempotency
//     key. A delivery's record is created by its first attempt (enqueue
//     writes none): a message whose delivery has no record is attempted
//     from its own content, and the attempt writes the whole record.
//   - A delivered delivery is not sent again: its message is dropped
//     without a request, unless it is a resend's (message.Message.Resend),
//     whose attempts are logged as the resend's, the delivery left
//     delivered; a resend given up is dropped, never dead-lettered.
//   - The attempt number is the attempts the message carries plus its
//     ApproximateReceiveCount. The queue's maxReceiveCount is the stack's
//     number of attempts. A last failed attempt is dead-lettered
//     explicitly; the last attempt of a message that carries none has its
//     delivery recorded dead before it, so that should the function stop
//     during it, the death is recorded and SQS's redrive policy takes the
//     message (to the DLQ's arrivals, which the sweep moves to the DLQ). A
//     message that carries attempts, or whose endpoint's own schedule is
//     shorter, comes back past its last attempt dead untried (the API
//     refuses a schedule with more attempts than the stack's).
//   - Dead (a permanent failure, the event too old, the endpoint gone,
//     disabled or missing): the delivery is recorded dead, the message sent
//     to the dead-letter queue explicitly, then deleted.
//   - An endpoint's own retry schedule and request timeout
//     (domain.Endpoint.RetrySchedule, TimeoutSeconds) decide its
//     deliveries through retry.ForEndpoint (the stack's jitter, Retry-After
//     rule and age cap with the endpoint's schedule); every request is
//     bounded by its timeout within the invocation's deadline.
//   - The response's batchItemFailures is never nil.
//
// # Waits and retries
//
//   - Waiting never spends an attempt or a receive, and never sits in the
//     queue's in-flight count (about 120,000 at most per queue, past which
//     nothing is received). A message that cannot be attempted now for a
//     reason of its endpoint's (its rate limit, an open breaker, a full
//     gate, its tenant over its share) or of hookline's own (a DynamoDB or
//     KMS read failed: a hitch), or whose retry delay is over HopAfter (2
//     s: every step of the default schedule and every Retry-After), is sent
//     again as a new message, delayed (at most MaxDeferDelay, SQS's 900 s),
//     carrying the attempts made, in its tenant's wait group
//     (message.WaitGroupID), and this one is deleted (Defer, with a Wait
//     naming why; the metric Deferred counts them by it, a retry's first
//     hop counting as RetryScheduled).
//   - The new message is sent first and the old one deleted after the
//     batch: a crash between them makes a duplicate that the delivery id
//     absorbs, never a loss. Only a message that cannot be sent again is
//     left to come back after the visibility timeout.
//   - A retry delay of HopAfter or less hides the message
//     (ChangeMessageVisibility, reported as a batch item failure). A
//     longer one carries its due time (message.Message.NotBefore) and is
//     waited out in hops of at most 900 s, each return before it sent again
//     without an attempt.
//   - No delay exceeds retry.Policy.LongestDelay (12 h less the queue's
//     visibility timeout less a minute), which SQS accepts whenever the
//     call is made: it refuses a visibility ending more than 12 h after the
//     receive, and a message is in flight for at most the visibility
//     timeout after it.
//   - Waits are bounded: a hitch's doubles from 5 s to 15 min
//     (message.Message.Hitches); one for an open breaker or the tenant's
//     share is floored at half a span that doubles per deferral, so a
//     message that keeps waiting comes back at most BreakerReceivesPerHour
//     (8) times an hour; the age cap ends every wait.
//
// # Secrets
//
// An endpoint's signing secrets are stored sealed (package sealing) and
// opened here through a SecretOpener that keeps them across warm
// invocations; a plaintext secret of an endpoint written before secrets
// were sealed signs as it is. A secret that cannot be opened for its
// endpoint makes the delivery dead (invalid_secret); KMS failing or
// throttled returns the message untried. An AWS endpoint's (sqs, sns,
// eventbridge) external ID is sealed the same way, opened by the same
// SecretOpener and kept in memory only; its attempt carries
// sender.Request.Destination (target, role, external ID), which the Sender
// routes through AWS (package destination).
//
// # Endpoint reads: how old what a batch sends by may be
//
// A batch reads its deliveries and its endpoints' gates strongly
// consistent, in one request (a delivery's record decides its fate and the
// conditional writes that follow are made on it as read; the gate's fast
// mark lets batches past the gate's slots); its endpoints and
// their tenants' tombstones (TENANT#<t>) eventually consistent, in a second
// request beside it (one BatchGetItem takes one consistency), kept by the
// instance (endpointCache) for domain.DefaultEndpointCacheTTL (1 s) on the
// handler's clock, for at most domain.DefaultEndpointCacheSize endpoints
// (the one kept longest dropped beyond). So what a batch sends by is up to
// about 2 s old (the TTL and DynamoDB's replication lag), but never older
// than what its messages were made against:
//
//   - every write of an endpoint's configuration through the API adds one
//     to its revision (domain.Endpoint.Revision, an atomic ADD), and every
//     message carries the revision its sender read
//     (message.Message.EndpointRevision). A kept copy older than the
//     greatest revision of its batch's messages is not used: the endpoint
//     is read again, eventually consistent, then strongly if the replica is
//     older still. A message of revision 0 (an earlier version) takes any
//     copy;
//   - a test event (domain.TestEventType) and a resend are sent by the
//     endpoint as it is now, read strongly consistent;
//   - a disabled or missing endpoint (of a tenant not being erased) is read
//     again strongly before its message is made dead, and never kept: an
//     enable, or an endpoint created a moment ago, is seen at once; a
//     disable made elsewhere within about 2 s;
//   - an erasure's tombstone is seen within about 2 s and then kept (a
//     tombstone stays store.TombstoneTTL); the messages sent meanwhile are
//     as those in flight when it was written (the erasure deletes the
//     deliveries afterwards);
//   - a changed URL or headers are used by every message made after the
//     change; the SSRF guard checks the address of every request as sent;
//   - a rotated secret: the signing secrets (the new one and the retiring
//     one for the grace, api.DefaultGrace unless asked otherwise) are
//     chosen at the attempt's time (domain.Endpoint.SigningSecrets), so a
//     retiring secret's end is never missed. A message made after the
//     rotation is signed with the new secret; one made before it may be
//     signed with the old one alone for about 2 s after, as one in flight
//     at the rotation would be (a grace of 0 accepts that);
//   - rate limits and concurrency: a new limit applies within about 2 s;
//     the slots themselves (TakeSlots, TakeGate) are conditional writes,
//     never cached;
//   - the breaker's state is computed at the attempt's time, so an open
//     breaker turns half open on time; one opened or closed elsewhere is
//     seen within about 2 s (meanwhile an endpoint just opened may get this
//     instance's attempts, through its gate, and a probe's success may keep
//     its deliveries waiting; the probe slot keeps one probe at a time); a
//     success resets the failure count only when the endpoint as read
//     shows failures, so failures counted elsewhere within the last 2 s
//     may be reset by a later success only.
//
// This is safe because a late change has the effect it would have had on a
// message already in flight when it was made (an attempt reads at its
// start and sends up to RequestTimeout, 15 s, later). What the instance
// writes to an endpoint itself it sees: a reset, or a failure count that
// moved nothing else, it patches into its copy (keepWritten: the copy
// keeps its read's time, so it is never kept longer); a count that marked
// the endpoint failing, opened its breaker or disabled it, a disable, and
// a batch that both reset and counted (the two writes' order unknown) it
// forgets, and reads strongly at its next batch.
//
// # Isolation: breaker, endpoint gate, tenant gate, rate limit
//
//   - Each endpoint has a circuit breaker (domain.Endpoint.Breaker): it
//     opens when the endpoint is marked failing (FailingAfter consecutive
//     failed attempts, the last a timeout, network error, 408, 429 or 5xx);
//     while open the endpoint's deliveries wait until its probe time; then
//     (half open) one attempt at a time goes out as the probe, holding the
//     gate's probe slot; a failed probe opens it again for twice as long
//     (10 s doubling to 10 min by default), a success closes it.
//   - Each endpoint has a gate (store.TakeGate): at most
//     EndpointConcurrency (3) invocations send to it at once until it has
//     shown itself fast, at most FastConcurrency (the mapping's maximum
//     concurrency) while its batches' requests all answer within SlowAfter
//     (1 s), each such batch keeping it fast for FastFor (5 s). A batch
//     takes one slot per endpoint for all its messages and gives it back
//     when done (one write each); a crashed holder's slot frees at its
//     invocation's deadline.
//   - Each tenant has a gate (store.TenantGate): an attempt to an endpoint
//     not shown fast needs one of TenantConcurrency (6) slots, taken once
//     per batch and tenant (after the breaker, before the endpoint's gate)
//     and given back at once after a fast batch, resting as long as it was
//     held after a slow one (TenantRest): a slow tenant holds at most 6
//     invocations for at most half of the time. Its attempts over the
//     share wait (WaitTenantBusy) while the batch's other tenants' go out;
//     attempts to fast endpoints take no tenant slot.
//   - An endpoint with a rate limit (domain.Endpoint.RateLimit) gets at
//     most that many requests begun in any second of the deliver
//     function's clock, across all invocations: a batch takes its request
//     slots (store.TakeSlots) for all its messages to the endpoint at once
//     (one write per endpoint, batch and window; a limit of 20 or more is
//     sharded, a write granting from one shard, at least 10 slots, trying
//     up to 3 shards), each request sent when its slot is due (slots paced
//     across the second, a shard's every few slots). With no
//     slot left, a message waits in the invocation while that stays within
//     RateWait and leaves RequestTimeout and Reserve before the deadline,
//     else it is deferred. Endpoints without a limit take no slot.
//   - An endpoint is disabled for failures only when its run has reached
//     DisableAfter (50) and lasted DisableAfterFor (5 days), or at once on
//     a 410: the breaker, not the disable, protects the pool meanwhile.
//
// # Endpoint counters
//
// Every sent attempt (and every one the SSRF guard refused) is counted for
// its endpoint: its class (Classify: delivered, timeout, network, http_4xx,
// http_429, http_5xx, http_other, refused) and latency, in the hour it
// began. The counts are written once per endpoint and hour
// (store.AddEndpointStats) and once per endpoint, hour and event type
// (store.AddEndpointTypeStats), all at once, within the deadline less
// StatsWriteReserve: ten messages of one type to one endpoint are two
// writes. An instance writes them at a batch's end when its last write was
// at least Config.StatsFlushEvery ago (10 s as deployed; zero: every
// batch), else keeps them, merged with its next batches', and writes what
// it keeps on SIGTERM (Handler.FlushStats): a busy instance writes an
// endpoint's counters once per interval, not once per batch. What an
// instance keeps when it stops without SIGTERM (a crash, a timeout) is
// lost: at most an interval of its counts; the counts of an instance idle
// after a burst are written at its next batch or its shutdown. A failed
// write is logged and counted (metrics.StatsWriteFailed) and loses those
// counts only: every message was handled before it.
//
// # Operational events
//
// The endpoint's health raises the tenant's operational events (package
// opevent), each once per episode, as the store's conditional writes
// report the transitions: endpoint.failing when the run of consecutive
// failures reaches FailingAfter (failing_since set), endpoint.disabled at
// DisableAfter or on a 410, endpoint.recovered on the first success of an
// endpoint marked failing (the mark survives an enable); failing and
// recovered follow the breaker. A success of a healthy endpoint writes
// nothing to it. Every death (dead at once, dead untried, attempts
// exhausted) is added to its endpoint's delivery.dead window, except an
// operational event's own, so no event is raised about one. A transition
// whose event cannot be written is logged and its notice lost; the
// transition stands.
//
// # Failure-rate alerts
//
// An endpoint with a failure-rate alert (domain.FailureRateAlert, issue
// 38) is weighed when its counters are written: an attempt to it keeps
// its record (the copy the batch read) beside the counters, and once a
// flush has written them the instance reads the alert's window
// (store.EndpointStats over the current hour and the WindowHours before
// it: StatsShards+1 = 9 Queries, each an item per hour) and judges it
// (domain.FailureRateAlert.Judge: failed = attempts - delivered, degraded
// at ThresholdPercent over at least MinAttempts). Degraded, when the copy
// shows no mark, sets degraded_since where absent (one conditional
// UpdateItem) and, if this call set it, raises endpoint.degraded (one
// PutItem into the outbox; its id from the endpoint and the mark, so
// once per episode across instances); healthy (below the threshold over
// at least MinAttempts, or no failure), when the copy shows a mark,
// removes it (one conditional UpdateItem) and raises nothing:
// endpoint.recovered stays the end of a failing episode. An evaluation is
// at most 9 Queries and 2 writes; an instance weighs an endpoint at most
// once a RateCheckEvery (1 min) and at most MaxRateChecksPerFlush (10)
// endpoints a flush, within the deadline less StatsWriteReserve, and not
// at shutdown (FlushStats). An endpoint without an alert adds nothing:
// no read, no write, no field kept. The window includes what other
// instances have not flushed yet only up to their StatsFlushEvery (10 s).
// An endpoint that stops receiving attempts is not weighed again: its
// mark stays until an attempt's flush finds it healthy, or the alert is
// changed (which removes it).
//
// # Decide, then apply
//
// Decide is pure: from an Input (the attempt number, the message, the
// delivery and endpoint records, the Hitch that stopped the preparation,
// the sender.Result once sent), the retry policy, the clock and a random
// source, it returns a typed Decision. It is asked after each step of the
// preparation, so nothing is read or opened after the attempt is ruled
// out; apply is the one function that performs the I/O a decision names.
package deliver
