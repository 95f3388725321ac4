// Package deliver processes batches from the delivery queue: one attempt per
// message, sent concurrently, and the message's fate decided by the outcome.
//
//   - delivered: the delivery is marked delivered and the message deleted;
//   - retry: the attempt is logged and, the delay being over HopAfter (2 s:
//     every step of the default schedule and every Retry-After), the
//     message sent again, delayed, carrying the attempt made, in its
//     tenant's wait group, and this one deleted, so the wait is out of the
//     queue's in-flight count (see Waits); the send goes first, the delete
//     after the batch, so a crash between them makes a duplicate that the
//     delivery id absorbs, never a loss. A delay of HopAfter or less hides
//     the message (ChangeMessageVisibility), reported as a batch item
//     failure, so SQS delivers it again later. The delay never exceeds
//     retry.Policy.LongestDelay (12 h less the queue's visibility timeout
//     less a minute), which SQS accepts whenever the call is made: it
//     refuses a visibility ending more than 12 h after the receive, and a
//     message is in flight for at most the queue's visibility timeout after
//     it. The attempt number is the attempts the message carries plus its
//     ApproximateReceiveCount; after the last attempt of a message that
//     carries none the message is made visible at once and SQS's redrive
//     policy moves it to the dead-letter queue, and one that carries
//     attempts is dead-lettered explicitly;
//   - dead (permanent failure, event too old, endpoint gone or disabled): the
//     delivery is marked dead, the message sent to the dead-letter queue
//     explicitly and deleted from the delivery queue.
//
// An endpoint may have its own retry schedule and request timeout
// (domain.Endpoint.RetrySchedule, TimeoutSeconds): its deliveries are
// decided by retry.ForEndpoint (the stack's policy with the endpoint's
// schedule; the stack's jitter, Retry-After rule and age cap) and its
// requests bounded by its timeout, within the invocation's deadline as
// every attempt is. The queue's maxReceiveCount is the stack's number of
// attempts, so the last attempt of an endpoint with fewer is dead-lettered
// explicitly, like a message that carries attempts, not left to the
// redrive; the API refuses a schedule with more.
//
// A delivery's record is created by its first attempt (enqueue writes none):
// a message whose delivery has no record is attempted from its own content,
// and the attempt writes the whole record. Delivery is at least once: a
// message whose delivery is already delivered is dropped without a request
// (unless it is a resend's, message.Message.Resend: then it is attempted,
// its attempts logged as the resend's and the delivery left delivered; a
// resend given up is dropped, never dead-lettered), and every attempt
// carries the same idempotency key, the delivery id. The response's
// batchItemFailures is never nil.
//
// An endpoint's signing secrets are stored sealed (package sealing) and
// opened here, through a SecretOpener that keeps them across warm
// invocations; a plaintext secret of an endpoint written before secrets
// were sealed signs as it is. A secret that cannot be opened for its
// endpoint makes the delivery dead (invalid_secret); KMS failing or
// throttled returns the message to the queue untried. An endpoint of an
// AWS type (sqs, sns, eventbridge) has its external ID sealed the same way,
// opened by the same SecretOpener and kept in memory only; its attempt
// carries sender.Request.Destination (its target, role and external ID),
// which the Sender routes through AWS (package destination).
//
// # Endpoint reads
//
// A batch's records are read at once (load): its deliveries and its
// endpoints' gates strongly consistent, in one request, for every batch
// (a delivery's record decides its fate, and the conditional writes that
// follow are made on it as read; the gate's fast mark lets batches past
// the gate's slots); its endpoints and their tenants' tombstones (on the
// tenant's partition, TENANT#<t>, which every batch of all its endpoints
// would read) eventually consistent, in a request beside the first (one
// table's BatchGetItem takes one consistency), and kept by the Lambda instance
// (endpointCache) for domain.DefaultEndpointCacheTTL (1 s) on the
// handler's clock, for at most domain.DefaultEndpointCacheSize endpoints
// (the one kept longest is dropped beyond). What a batch sends by is so
// up to the TTL and DynamoDB's replication lag old: about 2 s, but never
// older than what its messages were made against:
//
//   - every write of an endpoint's configuration through the API (a
//     change, a rotation, an enable or a disable) adds one to its revision
//     (domain.Endpoint.Revision, an atomic ADD), and every message carries
//     the revision its sender read (message.Message.EndpointRevision:
//     enqueue's, from the tenant's endpoints it fanned the event out by).
//     A kept copy older than the greatest revision of its batch's messages
//     is not used: the endpoint is read again, eventually consistent, and,
//     if the replica answers with an older revision still, strongly
//     consistent. A message of an earlier version (revision 0) takes any
//     copy, as before;
//   - a test event (domain.TestEventType) and a resend (Resend) are sent by
//     the endpoint as it is now, read strongly consistent whatever is kept
//     (a tenant sends them right after a change, and enqueue's listing of
//     the endpoints is itself eventually consistent); they are rare.
//
// That is safe where a late change has the effect it would have had on a
// message already in flight when it was made (an attempt reads at its
// start and sends up to RequestTimeout, 15 s, later), and it is not kept
// where it is not:
//
//   - a disabled or missing endpoint makes its message dead: one that the
//     eventual read shows disabled or missing (of a tenant not being
//     erased) is read again strongly before, and is never kept, so an
//     enable, or an endpoint created a moment ago, is seen at once; a
//     disable made elsewhere is seen within about 2 s, its messages sent
//     meanwhile as those in flight at the disable are;
//   - an erasure (the tombstone): seen within about 2 s, the messages
//     sent meanwhile as those already in flight when the tombstone was
//     written are (the erasure deletes the deliveries afterwards, phase by
//     phase); once seen it is kept, a tombstone staying store.TombstoneTTL;
//   - a changed URL or headers: used by every message made after the
//     change (its revision), by those made before it within about 2 s;
//     the SSRF guard checks the address of every request as it is sent;
//   - a rotated secret: the signing secrets (the new one and the retiring
//     one, for the rotation's grace, api.DefaultGrace unless asked
//     otherwise) come from the endpoint's record, and are chosen at the
//     attempt's time (domain.Endpoint.SigningSecrets), so a retiring
//     secret's end is never missed. A message made after the rotation
//     (its revision the rotation's or later) is signed with the new secret
//     (beside the old one, for its grace): the rotation's revision is
//     newer than any copy kept from before it. A message made before it
//     may be signed with the old secret alone for about 2 s after it, as
//     one in flight at the rotation would be; the old one stays valid for
//     the grace, and a grace of 0 means the tenant accepts that;
//   - the rate limit and the concurrency: a new limit applies within
//     about 2 s; the slots themselves (TakeSlots, TakeGate) are
//     conditional writes, never cached;
//   - the breaker and the failure count: the breaker's state is computed
//     at the attempt's time from the endpoint as read, so an open breaker
//     turns half open on time; one opened or closed elsewhere is seen
//     within about 2 s (meanwhile an endpoint just opened may get this
//     instance's attempts, through its gate, and a probe's success may
//     keep this instance's deliveries waiting; the probe slot keeps one
//     probe at a time); a success resets the count when the endpoint as
//     read shows failures, so failures counted elsewhere within the last
//     2 s may be reset by a later success only.
//
// What the instance writes to an endpoint itself (a failure counted, a
// reset, a disable) it forgets, and reads again strongly consistent at
// its next batch: it sees its own writes.
//
// # Endpoint counters
//
// Every sent attempt (and every attempt the SSRF guard refused) is counted
// for its endpoint: its class (Classify: delivered, timeout, network,
// http_4xx, http_429, http_5xx, http_other, refused) and its latency, in
// the hour it began. The counts are gathered over the batch and written at
// its end, once per endpoint and hour (Counters, store.AddEndpointStats)
// and once per endpoint, hour and event type (the message's event_type;
// store.AddEndpointTypeStats), all endpoints' writes at once, within the
// invocation's deadline less StatsWriteReserve: a batch of ten of one type
// to one endpoint is two writes, not twenty.
// A write that fails is logged and counted (metrics.StatsWriteFailed) and
// loses those counts; the batch's messages were all handled before it, and
// nothing of their handling depends on it.
//
// # Operational events
//
// The endpoint's health raises the tenant's operational events (package
// opevent), each once per episode, as the store's conditional writes
// report the transitions: endpoint.failing when the run of consecutive
// failures reaches FailingAfter (failing_since is set), endpoint.disabled
// when it reaches DisableAfter or on a 410, endpoint.recovered on the first
// success of an endpoint marked failing (the mark survives an enable). A
// success of a healthy endpoint writes nothing to it: the reset is asked
// for only when the endpoint as read has failures or the mark. Every death
// (dead at once, dead untried, attempts exhausted) is added to its
// endpoint's delivery.dead window; the death of an operational event's
// delivery is not, so no operational event is raised about one.
// A transition whose event cannot be written is logged and its notice lost;
// the transition itself stands.
//
// # Rate limits
//
// An endpoint with a rate limit (domain.Endpoint.RateLimit, requests per
// second) gets at most that many requests begun in any second of the
// deliver function's clock, across all invocations: a prepared attempt
// takes a request slot from the Limiter (store.TakeSlots), which the
// batch takes for all its messages to the endpoint at once (one write per
// endpoint, batch and window; a window of a limit of 20 or more is
// sharded, and a write grants from one shard's part, at least 10 slots,
// trying up to 3 shards when they are full), and is sent when its slot is
// due (slots are paced across the second, a shard's every few slots). With no slot left it waits for the next
// second while its wait stays within RateWait and leaves RequestTimeout
// and Reserve before the deadline; beyond, the message is sent again as
// a new one, delayed (at most MaxDeferDelay, 900 s), carrying the attempts
// made (message.Message.Attempts), and this one deleted (Defer): waiting
// costs no attempt and no receive. The attempt number is the carried
// attempts plus the receive count; a message carrying attempts is
// dead-lettered explicitly when they run out (SQS's redrive counts
// receives only). Endpoints without a limit take no slot.
//
// # Isolation: the circuit breaker and the endpoint gate
//
// A receiver's trouble is its own. Each endpoint has a circuit breaker
// (domain.Endpoint.Breaker): it opens when the endpoint is marked failing
// (FailingAfter consecutive failed attempts, the last a retryable one:
// a timeout, a network error, 408, 429, 5xx); while it is open the
// endpoint's deliveries wait (below) until its probe time; once that has
// passed (half open) one attempt at a time goes out as the probe, holding
// the gate's probe slot; the probe's failure opens the breaker again for
// twice as long (domain.Breaker: 10 s doubling to 10 min by default), its
// success closes it, and endpoint.failing and endpoint.recovered follow the
// breaker. Each endpoint also has a gate (store.TakeGate): at most
// EndpointConcurrency invocations (3) send to it at once while it has not
// shown itself fast, at most FastConcurrency (the mapping's maximum
// concurrency) while its batches' requests all answer within SlowAfter
// (1 s), each such batch keeping it fast for FastFor (5 s). A batch takes
// one slot per endpoint for all its messages to it, and gives it back when
// they are done (one write each); a holder that crashes frees its slot at
// its invocation's deadline. A slow or hanging endpoint so holds at most
// EndpointConcurrency of the pool's invocations, and a fast one may use all
// of it. An endpoint is disabled for failures only when its run has
// reached DisableAfter (50) and lasted DisableAfterFor (5 days): the
// breaker, not the disable, protects the pool meanwhile.
//
// Endpoint gates do not bound a tenant spread over many endpoints, so
// each tenant also has a gate (store.TenantGate): an attempt to an
// endpoint not shown fast needs one of TenantConcurrency (6) slots of its
// tenant's gate, which a batch takes once for all its attempts to the
// tenant (after the breaker, before the endpoint's gate) and gives back at
// its end: at once after a fast batch, resting as long as it was held
// after a slow one (TenantRest), so a slow tenant holds at most
// TenantConcurrency invocations for at most half of the time. Its attempts
// over the share wait (WaitTenantBusy); the batch's other tenants'
// attempts go out. Attempts to endpoints shown fast take no tenant slot,
// so a batch to fast endpoints costs nothing more. A wait for an open
// breaker or for the tenant's share is floored at half a span that
// doubles per deferral, so a message that keeps waiting comes back at
// most BreakerReceivesPerHour (8) times an hour.
//
// # Waits
//
// Waiting never spends an attempt or a receive: a message that cannot be
// attempted now for a reason of its endpoint's (its rate limit, an open
// breaker, a full gate) or of hookline's own (a DynamoDB or KMS read
// failed: a hitch), or whose retry delay is over HopAfter, is sent again
// as a new message, delayed (at most MaxDeferDelay, SQS's 900 s), carrying
// the attempts made, in its tenant's wait group (message.WaitGroupID), and
// deleted (Defer, with a Wait naming why; the metric Deferred counts them
// by it; a retry's first hop counts as RetryScheduled). A retry delay
// carries its due time (message.Message.NotBefore); one over 900 s is
// waited out in hops, each return before it sent again without an
// attempt, so no backoff counts in the queue's in-flight messages (about
// 120,000 at most per queue, past which nothing is received). A hitch's wait
// doubles from 5 s to 15 min (message.Message.Hitches), bounding how often
// it is tried; the age cap ends every wait. Only a message that cannot be
// sent again is left to come back after the visibility timeout.
//
// # Decide, then apply
//
// A message's fate is decided by one pure function, Decide: from what was
// read (an Input: the attempt number, the message, the delivery and
// endpoint records, the Hitch that stopped the preparation if one did, the
// request's sender.Result if one was sent), the retry policy and the clock,
// it returns a typed Decision (Send, Delivered, Retry with a delay, Dead
// with a reason, Exhausted, Duplicate, Defer, ReturnUntried, ...) with what
// goes with it (record the death before the last attempt, disable the
// endpoint, count or reset its failures). The handler reads top-down:
// prepare the attempt, step by step, until Decide rules it out; on the last
// receive record the death first; send; decide; apply, the one function
// that performs the I/O the decision names.
package deliver
