package hookline

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/hookline/hookline/outbox"
	"math"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/deliver"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/retry"
)

// RetryPolicy is the type of Props.Retry (package retry's Policy, named
// here so that an app outside this module can spell it): Schedule, the
// delays before each attempt (default 0s,5s,30s,5m,30m,2h,8h,12h), Jitter
// (default ±20%), Mode (default JitterProportional) and MaxAge (default
// 24 h). Leave VisibilityTimeout zero: New sets it.
type RetryPolicy = retry.Policy

// The jitter modes of RetryPolicy.Mode.
const (
	// JitterProportional (the default) scales each delay by a factor drawn
	// uniformly from [1-Jitter, 1+Jitter].
	JitterProportional = retry.JitterProportional
	// JitterFull draws each delay uniformly from [0, d].
	JitterFull = retry.JitterFull
	// JitterNone uses the scheduled delays as they are.
	JitterNone = retry.JitterNone
)

// Props configures one hookline instance. Every field states its default;
// the zero value (or nil) deploys the documented defaults to AWS on arm64,
// building the functions from source at synth time.
type Props struct {
	// Architecture of the function binaries: "arm64" (default, for AWS) or
	// "x86_64" (for a local cloud on an amd64 host).
	Architecture string
	// Code supplies the functions' deployment packages. Default
	// BuildFromSource(""): `go build` of each function at synth time, in
	// the directory the CDK app runs in (needs the go command, no Docker).
	// CodeFromDir uses binaries built beforehand (the project's `make build`).
	Code Code

	// Retry is the delivery retry policy. Its schedule sets both the deliver
	// function's backoff and the delivery queue's maxReceiveCount, so the two
	// cannot disagree. Zero value: retry.DefaultSchedule, ±20% jitter, 24 h age cap.
	// Its VisibilityTimeout is set by the stack to the delivery queue's (six
	// times DeliverTimeout), which bounds the longest retry delay: leave it
	// zero; any other value is refused.
	Retry RetryPolicy
	// RequestTimeout bounds one POST to an endpoint. Default 15 s.
	RequestTimeout time.Duration
	// MaxRequestTimeout is the longest request timeout an endpoint may set
	// for itself (its timeout_seconds; the API refuses a longer one). The
	// deliver function's timeout is sized for it. Default RequestTimeout:
	// an endpoint may shorten the stack's timeout, not lengthen it. At
	// least RequestTimeout.
	MaxRequestTimeout time.Duration
	// DeliverTimeout is the deliver function's timeout. Default
	// DeliverTimeoutFor(MaxRequestTimeout): 20 s with the default 15 s request
	// timeout. The delivery queue's visibility timeout is six times this
	// value, as AWS recommends for SQS event sources (AWS requires at least
	// the function's timeout), and it is how long the messages of a batch
	// whose process crashed wait before they are tried again: 2 min by
	// default. A larger value must be at least DeliverTimeoutFor(MaxRequestTimeout).
	DeliverTimeout time.Duration
	// DeliverMaxConcurrency caps concurrent deliver invocations on the SQS
	// event source mapping (AWS minimum 2). Default 20 (about 1,000
	// deliveries a second to receivers answering in 200 ms:
	// docs/capacity.md); 2 in the small-account profile (SmallAccount).
	DeliverMaxConcurrency int
	// LaneMaxConcurrency caps concurrent deliver invocations on the tenant
	// lane's SQS event source mapping (docs/architecture.md, "The tenant
	// lane"), 2 to 1000. The lane holds the deliveries of tenants over
	// their share, each of which the tenant gate keeps to
	// TenantConcurrency slots for slow endpoints; a lane as wide as one
	// tenant's share bounds what the tenants over their share take from
	// the pool together, however many they are. Default
	// min(domain.DefaultTenantConcurrency (6), DeliverMaxConcurrency), at
	// least sqsMinConcurrency (2, the least an SQS mapping takes): 6; 2 in
	// the small-account profile (SmallAccount).
	LaneMaxConcurrency int
	// LaneAfter is how many of one tenant's messages one enqueue invocation
	// sends to the delivery queue before the rest go to the tenant lane
	// (enqueue.Config.LaneAfter). Default enqueue.DefaultLaneAfter (60, what
	// a tenant's share of deliver's invocations holds at once: 6 batches of
	// 10); at least 1.
	LaneAfter int
	// DeliverReservedConcurrency reserves concurrency for the deliver
	// function, out of the account's pool. It must exceed
	// DeliverMaxConcurrency + LaneMaxConcurrency, its two mappings' caps
	// together: SQS counts every receive towards the queue's
	// maxReceiveCount, also one whose invocation Lambda throttles, so a
	// throttled deliver would burn a delivery's attempts; with the mappings
	// capped below the reservation, and the reservation out of reach of any
	// other function (an API flood, a replay), deliver is never throttled.
	// Default DeliverMaxConcurrency+LaneMaxConcurrency+1 (25 + 6 + 1 = 32):
	// the mappings never run more than their caps, and the one spare leaves
	// room for an operator's manual invoke.
	// Negative: reserve nothing, for an account whose concurrency limit
	// cannot spare it (see the note on the account's pool below); throttles
	// may then burn attempts, and the DeliverThrottles alarm pages on the
	// first.
	//
	// The account's pool: every reservation below is taken from the
	// account's concurrency limit, and AWS refuses one that leaves fewer than
	// 100 executions unreserved. The defaults reserve 32 + 60 + 8 = 100, so an
	// account needs a limit of at least 200 (established accounts have 1,000;
	// new accounts may start at 10). Below that, ask AWS for a higher limit
	// (Service Quotas, "Concurrent executions"), or deploy with all three
	// reservations negative (`-c deliverReservedConcurrency=none
	// -c apiReservedConcurrency=none -c replayReservedConcurrency=none`),
	// or with the small-account profile (SmallAccount), which also lowers
	// the SQS mappings' caps. `make deploy` checks the account first
	// (scripts/preflight, against Reservations).
	DeliverReservedConcurrency int
	// APIReservedConcurrency reserves, and so caps, the api function's
	// concurrency: however many requests get past the stage's throttling,
	// and however slow they are, the API cannot run more than this many at
	// once, so it cannot take the account's pool from the delivery path.
	// A request over the cap is a Lambda throttle, which API Gateway
	// answers 500 (an HTTP API cannot map it to 429), and the ApiThrottles
	// alarm fires. So the route throttles must not admit more than it can
	// run: their buckets together (APIBurstLimit, the publish route's, and
	// each operator route's), all spent at once, plus the rates they refill
	// at over one request (APIRequestDuration) must fit in it, or New
	// refuses the props (APIAdmittedConcurrency); the stage's throttles
	// then answer 429 before the function is full, in a burst too.
	// Default 60 (the default throttles admit bursts of 10 + 20 + 12 × 1
	// and 174 requests a second: 42 + 17.4 executions at 100 ms). Negative:
	// no cap (and no check).
	APIReservedConcurrency int
	// APIRequestDuration is how long an API request runs in the api
	// function at the 99th percentile, as the check of the route throttles
	// against APIReservedConcurrency assumes it. Default 100 ms
	// (DefaultAPIRequestDuration: one or two DynamoDB round trips of a few
	// milliseconds each and Lambda's own overhead; cold starts take more,
	// docs/capacity.md). Measure yours with the access log's
	// integrationLatency and set it: at most 29 s (API Gateway's
	// integration timeout).
	APIRequestDuration time.Duration
	// ReplayReservedConcurrency reserves, and caps, the replay worker's
	// concurrency. It must exceed its two mappings' maximum concurrency
	// together (7: 5 job steps and 2 operations): a throttled job step
	// would burn one of its five tries before the job is parked. Default 8.
	// Negative: none.
	ReplayReservedConcurrency int
	// EnqueueParallelization is the outbox stream mapping's
	// ParallelizationFactor: how many enqueue invocations process one
	// stream shard at once, 1 to 10. Lambda keeps the records of one
	// partition key (one outbox item) in order at any factor, which is all
	// enqueue needs. Each takes a Lambda execution per active shard. Default
	// DefaultEnqueueParallelization (2: docs/capacity.md); 1 in the
	// small-account profile.
	EnqueueParallelization int
	// EnqueueSendConcurrency is how many SendMessageBatch requests one
	// enqueue invocation has in flight at once, 1 to 10
	// (fnenv.MaxSendConcurrency). Default 4
	// (domain.DefaultEnqueueSendConcurrency).
	EnqueueSendConcurrency int
	// BatchingWindow is how long the outbox stream's mapping waits to fill
	// a batch (100 records) before it invokes enqueue (its
	// MaximumBatchingWindowInSeconds): whole seconds, 0 to 300 (Lambda's
	// limit). 0, the default: enqueue is invoked as soon as the stream has
	// records. Sparse traffic (a few events a second, each its own batch
	// without a window) pays per invocation what full batches share; with
	// 1 s, enqueue's batch holds the second's events, sends them in one
	// SendMessageBatch, and deliver receives them together: about a third
	// of the cost a delivery, for up to the window's wait
	// (docs/configuration.md; docs/performance.md, issue 37's ninth stop). The
	// delivery queue's mapping has no window: it would wait again for
	// what enqueue has already gathered.
	BatchingWindow time.Duration
	// SmallAccount is the small-account profile, for an account whose
	// Lambda concurrency limit cannot spare a reservation (AWS keeps 100
	// executions unreserved; new accounts may have a limit of 10): no
	// function reserves concurrency (a positive *ReservedConcurrency is
	// refused), and every SQS event source mapping runs at most
	// sqsMinConcurrency (2, the least SQS mappings take) unless
	// DeliverMaxConcurrency or LaneMaxConcurrency says otherwise: deliver's
	// delivery queue 2, its tenant lane 2, the replay function's jobs 2
	// and operations 2. In a 10-execution account the SQS mappings then run at
	// most 8 executions together, which leaves 2: one for enqueue (one per
	// active stream shard, and a new outbox table has one: the profile's
	// EnqueueParallelization is 1) and one for the API, so each mapping's
	// cap stays below what its function can get and a throttle does not
	// burn a receive while the API serves one request at a time. The
	// deferred fan-out queue's mapping (2 more executions of enqueue,
	// docs/architecture.md "Deferred fan-out") does not fit beside them:
	// the profile leaves it out, and enqueue fans every record out inline
	// (an over-share tenant's fan-out then holds up the stream, as before
	// the queue). That margin is thin: the lane's mapping runs only while a tenant is over
	// its share, but an API burst beside a busy lane, or a second stream
	// shard, can throttle deliver (the Throttles alarms page if one does:
	// nothing caps the API but its stage's throttling); an account that
	// can, should ask AWS for a higher limit. Throughput: about deliver's cap ×
	// batch 10 / (the receiver's latency + ~20 ms), some 160 deliveries a
	// second to receivers answering in 100 ms. Default false.
	SmallAccount bool
	// APIRateLimit is the HTTP API's steady-state request rate, per second,
	// over all routes of its stage; API Gateway answers 429 above it.
	// Default 50; at most 10,000 (the account's regional default).
	APIRateLimit float64
	// APIBurstLimit is the most requests the HTTP API's stage takes at once
	// above APIRateLimit. Default 10 (DefaultAPIBurstLimit); at most 5,000
	// (the account's regional default). Every burst counts whole against
	// APIReservedConcurrency.
	APIBurstLimit int
	// APIPublishRateLimit and APIPublishBurstLimit throttle the producers'
	// route, POST /v1/events, on its own: a flood of other (or anonymous)
	// requests, which share APIRateLimit, does not stop publishing. Defaults
	// 100 and 20; the same bounds as APIRateLimit and APIBurstLimit.
	APIPublishRateLimit  float64
	APIPublishBurstLimit int
	// APIAdminRateLimit and APIAdminBurstLimit throttle each operator route
	// (/v1/admin/...) on its own, so that the operator can still act while
	// the other routes are throttled. Defaults 2 and 1 (per route: 24
	// requests a second over the 12 operator routes, for people and their
	// scripts, within the api function's reservation); the same bounds as
	// APIRateLimit and APIBurstLimit.
	APIAdminRateLimit  float64
	APIAdminBurstLimit int
	// APITenantExpensiveRate is the most expensive API requests a second
	// one tenant may make (the listings, metrics, an event's lookup, JWKS,
	// replays, resends, cancels; docs/api.md "Rate limits"), counted
	// across every execution of the api function in a window item of the
	// state table (1 write unit per expensive request); over it, 429 with
	// Retry-After. Default 5 (domain.DefaultAPITenantExpensiveRate),
	// lowered for an APIReservedConcurrency below 20 to hold one tenant to
	// half of it (at least 1); negative: no per-tenant limit. With
	// APIExpensiveBudget it bounds the executions one tenant holds: a rate
	// set here times the budget must stay below APIReservedConcurrency
	// (10 of 20 by default; refused otherwise).
	APITenantExpensiveRate int
	// APIExpensiveBudget is the longest an expensive API request may run
	// before it is stopped and answered 503 with Retry-After. Default 2 s
	// (domain.DefaultAPIExpensiveBudget); from 100 ms to 14 s (the api
	// function's timeout is 15 s); negative: none.
	APIExpensiveBudget time.Duration
	// AdminIAMAuth puts AWS_IAM authorization on the operator routes
	// (/v1/admin/...): API Gateway answers 403 to a request that is not
	// signed (SigV4) by a principal of this account allowed
	// execute-api:Invoke on the route, and the api function takes a signed
	// request as the operator's; the operator key no longer reaches them
	// (nor the console's operator view, which sends it). Default false: the
	// operator key, from anywhere (docs/operations.md, "Who reaches the
	// operator routes").
	AdminIAMAuth bool
	// KeyAdmins are the IAM principals (ARNs of roles, users or the
	// account, "arn:aws:iam::111122223333:role/KeyAdmin") that administer
	// the signing secrets' key: every administrative action, no
	// cryptographic one. Default: the account (its root principal), which
	// lets the account's IAM policies grant them. Named admins replace the
	// account: include the role CloudFormation deploys with (the CDK
	// bootstrap's cfn-exec role), as KMS refuses a key policy that would
	// not let its creator change it again, and every later deploy that
	// changes the policy needs it. Only the deliver function may decrypt,
	// whoever the admins are (docs/operations.md, "Signing secrets and
	// their key").
	KeyAdmins []string
	// AllowCIDRs lets the deliver function reach addresses the SSRF guard
	// refuses otherwise (loopback, private ranges, ...). Default none. The
	// local cloud sets 127.0.0.0/8 so tests can reach receivers on loopback.
	AllowCIDRs []string
	// AllowHTTP lets tenants register plain http endpoint URLs. Default
	// false: https only. The local cloud sets it for loopback receivers.
	AllowHTTP bool
	// ReplayRate is the sends per second of one replay job, so that a
	// receiver that has just come back is not flooded. Default 10.
	ReplayRate float64
	// DisableAfter disables an endpoint after this many consecutive failed
	// attempts. Default 50; negative: never.
	DisableAfter int
	// FailingAfter raises endpoint.failing, the operational event that
	// warns a tenant early, when an endpoint's run of consecutive failed
	// attempts reaches it. Default 10; negative: never. It must be below a
	// positive DisableAfter.
	FailingAfter int
	// DisableAfterFor is how long an endpoint's run of consecutive failed
	// attempts must have lasted, besides reaching DisableAfter, before the
	// endpoint is disabled (410 Gone disables at once, as before). Default
	// 5 days (domain.DefaultDisableAfterFor). At least the retry
	// schedule's whole span (RetryPolicy.Span, the sum of its delays:
	// 22h35m35s by default), so that no outage the schedule rides out can
	// disable an endpoint: the circuit breaker protects the pool meanwhile.
	DisableAfterFor time.Duration
	// BreakerCooldown is how long an endpoint's circuit breaker stays open
	// once the endpoint is found failing (FailingAfter consecutive failed
	// attempts): its deliveries wait, spending no attempt, until one is
	// sent as a probe. Each failed probe doubles it, up to
	// BreakerMaxCooldown. Default 10 s (domain.DefaultBreakerCooldown); at
	// most 15 min.
	BreakerCooldown time.Duration
	// BreakerMaxCooldown bounds the breaker's open period. Default 10 min
	// (domain.DefaultBreakerMaxCooldown), or BreakerCooldown when that is
	// longer; at least BreakerCooldown and at most 15 min: a delivery
	// waiting for the breaker is sent again delayed, and SQS delays a
	// message at most 900 s.
	BreakerMaxCooldown time.Duration
	// EndpointConcurrency is the most deliver invocations sending to one
	// endpoint at once while it has not shown itself fast; one that
	// answers fast may have DeliverMaxConcurrency (at most 100) of them.
	// Default 3 (domain.DefaultEndpointConcurrency), or
	// DeliverMaxConcurrency-1 when that is smaller. At least 1 and below
	// DeliverMaxConcurrency, so that one slow endpoint can never hold the
	// whole pool; at most 100.
	EndpointConcurrency int
	// TenantConcurrency is a tenant's share of the deliver pool: the most
	// deliver invocations sending to one tenant's endpoints at once,
	// however many endpoints it spreads its load over, but for endpoints
	// shown fast (every request of their last batch answered within a
	// second, as for EndpointConcurrency); a slot that a slow batch held
	// then rests as long as it was held (deliver.TenantRest), so a slow
	// tenant holds at most TenantConcurrency invocations and half of their
	// time. Over its share, a tenant's deliveries wait, sent again
	// delayed, no attempt spent. Default 6
	// (domain.DefaultTenantConcurrency), or DeliverMaxConcurrency-1 when
	// that is smaller. At least 1 and below DeliverMaxConcurrency, so that
	// one slow tenant can never hold the whole pool; at most 100.
	TenantConcurrency int
	// DeadNoticeWindow coalesces delivery.dead: the deaths of one
	// endpoint's deliveries within one window (aligned on the Unix epoch)
	// raise one summary, sent when the window ends. Default 5 min; at
	// least 1 s and at most 15 min (the window's notice waits in SQS, whose
	// delays stop at 900 s). 10,000 deaths in an hour at the default are at
	// most 12 notifications.
	DeadNoticeWindow time.Duration
	// StatsFlushEvery is how often a deliver instance writes the endpoints'
	// attempt counters it gathered: a batch's are written at its end when
	// the instance's last write was at least this long ago, else kept and
	// merged with the next batches', and what an instance keeps is written
	// when Lambda shuts it down (SIGTERM). An instance that stops without
	// it (a crash, a timeout) loses at most this long of its counts.
	// Default 10 s; at most 5 min; negative: every batch's counters at its
	// end (one write per endpoint and batch, as before issue 37).
	StatsFlushEvery time.Duration
	// PayloadRetention is how long after its occurred_at the API serves an
	// event's payload (GET /v1/events/{event_id}); an older event is
	// answered without it. Default 15 days; at least 1 h and at most
	// outbox.DefaultRetention (16 days), the outbox items' expiry that
	// outbox.Event.Item and hookline's own writers set: past it the item
	// itself is gone.
	PayloadRetention time.Duration
	// DeliveryRetention is how long delivery records (with their attempt
	// logs), rejected outbox items and jobs are kept: DynamoDB's TTL
	// deletes them after it (a dead delivery's counts from its death, so it
	// outlives its DLQ message). Default 15 days; at least DLQRetention + 1
	// day (refused otherwise: a dead delivery's record must outlive its
	// message in the DLQ, which a replay or the sweep looks it up by).
	DeliveryRetention time.Duration
	// DLQRetention is how long the dead-letter queue keeps a message (its
	// MessageRetentionPeriod). Default 14 days, the SQS maximum (more is
	// refused); at least 1 minute, the SQS minimum.
	DLQRetention time.Duration
	// DisableMessageLog turns the message log off: the outbox table gets no
	// by_tenant index (saving its write, one unit per event: about $0.63 per
	// million deliveries to one endpoint, docs/performance.md), the api
	// function no outbox grant, and GET /v1/events and
	// GET /v1/events/{event_id} answer 503. Default false: the log is on.
	DisableMessageLog bool
	// KeepLegacyMessageLogIndex keeps the message log's unsharded index
	// by_tenant on the outbox table beside the sharded by_tenant_shard
	// (outbox.IndexByTenantShard), and reads the log from by_tenant: the
	// first step of upgrading a stack deployed before by_tenant_shard
	// existed, whose items lack log_pk (docs/deploying.md, "Upgrading the
	// message log index"). CloudFormation adds or removes one index per
	// update, so such a stack refuses to deploy without it. by_tenant
	// throttles the producers' writes above about 1,000 events a second of
	// one tenant (a throttled index throttles its table's writes), where
	// by_tenant_shard takes 16,000. Default false: by_tenant_shard only,
	// which is what a new stack wants. Refused with DisableMessageLog: a
	// stack with both indexes turns the legacy one off first, in a deploy
	// of its own, then the log.
	KeepLegacyMessageLogIndex bool
	// DeferDeliveryLogIndex leaves the state table's delivery log index
	// (by_log, store.IndexLog) out: the first deploy of an upgrade from a
	// stack whose state table has gsi1 only (52e80f2 and its peers), which
	// gains by_dead in that deploy and by_log in the next, as
	// CloudFormation creates one index of a table per update
	// (docs/deploying.md, "Upgrading"). Deliveries are written as ever
	// (their log_pk/log_sk wait for the index); GET /v1/deliveries answers
	// 503 with a Retry-After until the index exists and is ACTIVE. Default
	// false: by_log is on the table, as a new stack wants it.
	DeferDeliveryLogIndex bool
	// DLQAlarmThreshold: the DLQ depth alarm fires when more messages than
	// this are visible in the dead-letter queue. Default 100.
	DLQAlarmThreshold int
	// TenantDLQAlarmThreshold: the per-tenant alarm fires when any tenant's
	// DLQ depth exceeds this. Default 100.
	TenantDLQAlarmThreshold int
	// OldestMessageAgeThreshold: the delivery queue's oldest message older
	// than this for 5 minutes alarms. Default 15 min.
	OldestMessageAgeThreshold time.Duration
	// IteratorAgeThreshold: the enqueue mapping this far behind the outbox
	// stream for 5 minutes alarms. Default 5 min.
	IteratorAgeThreshold time.Duration
	// RejectedItemsThreshold: more rejected outbox items than this in 5
	// minutes alarms. Default 0 (any).
	RejectedItemsThreshold int
	// EnqueueFailuresThreshold: more stream batches than this parked in the
	// enqueue failure queue alarms. Default 0 (any).
	EnqueueFailuresThreshold int
	// StuckReplayThreshold: more job messages than this parked in the jobs'
	// dead-letter queue alarms (ReplayJobsStuck). Default 0 (any).
	StuckReplayThreshold int
	// FunctionErrorsThreshold and ThrottlesThreshold: more invocation errors
	// or throttles of any function in 5 minutes alarm. Default 0 (any).
	FunctionErrorsThreshold, ThrottlesThreshold int
	// SweepInterval is how often the DLQ is reconciled with the index (stale
	// copies deleted, missed deaths recorded), besides after each replay,
	// and the tenant DLQ depth counters with the index. Default 5 min;
	// whole minutes.
	SweepInterval time.Duration
	// AlarmEmail, when set, subscribes this address to the alarm topic.
	// Default: none (subscribe your pager to Hookline.AlarmTopic).
	AlarmEmail string
	// OperatorEventsToAlarms adds a rule on the operator's event bus
	// (Hookline.OperatorBus) sending every operational event
	// (endpoint.disabled, endpoint.failing, endpoint.recovered,
	// delivery.dead) to the alarm topic, whose policy then lets EventBridge
	// publish to it. Default false: the bus has no rule, and the operator
	// adds their own (docs/operations.md).
	OperatorEventsToAlarms bool
	// Faults injects failures into deliver and enqueue, for the soak test
	// only: "deliver_crash:0.01,enqueue_fail:0.05" (package fault). Default
	// none; never set it on a production deployment.
	Faults string
	// LogLevel of the functions' JSON logs: DEBUG, INFO (default), WARN, ERROR.
	LogLevel string
	// Tracing turns on X-Ray active tracing for the four functions
	// (Lambda's TracingConfig Active, and the xray:PutTraceSegments and
	// xray:PutTelemetryRecords grant it needs): each function then also
	// sends its spans, in each event's trace, to the X-Ray daemon
	// (package trace). Default false: the spans are JSON log lines only
	// (always written), and no X-Ray charge.
	Tracing bool
	// TracingSampleRate is the share of events' traces whose spans go to
	// X-Ray with Tracing on, above 0 and at most 1 (every trace): decided
	// from the trace id, so X-Ray holds all of a trace's spans or none
	// (trace.InSample), and only of traces the producer (or hookline)
	// marked sampled. Default 0.05, X-Ray's default rule's rate: X-Ray
	// charges $5 a million traces recorded, about twice what hookline
	// costs a million deliveries. The span log lines cover every trace.
	TracingSampleRate float64
	// ConsoleFrameAncestors are the pages that may show the console in a
	// frame (a SaaS embedding it for its customers): the console's CSP
	// frame-ancestors, each 'self' or an origin such as
	// "https://app.example.com" (fnenv.ParseFrameAncestors; anything else
	// is refused). Default none: 'none', no page may frame it.
	ConsoleFrameAncestors []string
	// PortalMinTTL is the shortest life a portal link may be minted with.
	// Default 60 s; at least 1 s (the local cloud's deployment sets 1 s so
	// that the end-to-end tests see a link expire).
	PortalMinTTL time.Duration

	// MaxEndpoints is how many endpoints one tenant may have: creating one
	// more answers 409 (cap endpoints_per_tenant). It also bounds what
	// enqueue, the event routing, JWKS and a replay step read of a tenant,
	// and an event's fan-out. Default 100 (domain.DefaultMaxEndpoints;
	// Stripe allows 16 an account, GitHub 20 webhooks an event); at least 1.
	MaxEndpoints int
	// MaxEndpointBytes bounds the bytes a tenant writes into one endpoint
	// (URL, description, event types, headers, filter, target, role):
	// beyond, a create or update answers 400 (cap endpoint_bytes). Default
	// 16 KiB (domain.DefaultMaxEndpointBytes); at least 8 KiB
	// (fnenv.MinMaxEndpointBytes).
	MaxEndpointBytes int
	// MaxMetricsEventTypes is how many event types
	// GET /v1/metrics/attempts?group_by=event_type answers, the rest summed
	// into one group. Default 50 (domain.DefaultMaxMetricsEventTypes); at
	// least 1.
	MaxMetricsEventTypes int

	// StaticEgressAZs turns static egress on, in that many availability
	// zones, 1 to 3: the deliver function (which POSTs to endpoints and
	// calls AWS destinations) runs in a VPC of hookline's own whose
	// internet traffic leaves through one NAT gateway per zone, each with
	// an Elastic IP of the stack's, so a receiver can allowlist a few fixed
	// addresses (the EgressIPs output, GET /v1/egress-ips, the console).
	// With 1, a zone's outage stops deliveries until it ends (deliver's
	// invocations fail, each a receive: a long one sends them to the DLQ);
	// 2 or 3 ride it out. The addresses live as long as the
	// zone's gateway: lowering the count releases the last zones',
	// turning it off all of them. Fixed cost $36.50 a month a zone (the
	// gateway's hour and its address): $73.00 at 2, $109.50 at 3, and
	// $0.045 a GB through the gateways, about $0.12 a million deliveries
	// (docs/configuration.md, "Static egress"). DynamoDB is reached
	// through a gateway endpoint, SQS, KMS and STS through the NAT. The
	// SSRF guard refuses the VPC's range (10.231.0.0/16) whatever
	// AllowCIDRs says. Default 0: off, no VPC; deliveries leave from AWS's
	// shared ranges.
	StaticEgressAZs int

	// NotifyFrom, when set, turns on notices by e-mail: the address (of a
	// verified SES identity in the stack's region) hookline's e-mails come
	// from. Tenants name addresses (POST /v1/notification-emails); the api
	// function sends each a verification link, and the replay function
	// e-mails the verified ones every operational event of their tenant
	// (endpoint.failing, endpoint.disabled, endpoint.recovered,
	// endpoint.degraded, delivery.dead), brought from the operator's bus by
	// a rule to its operations queue, at most 20 e-mails a tenant an hour,
	// each with an unsubscribe link. Both functions may send as this
	// address only (ses:FromAddress). Outside SES's sandbox only: in it, SES
	// sends to verified recipients alone. Default none: no e-mail, no rule,
	// no grant; naming an address answers 409.
	NotifyFrom string
	// NotifyIdentity is the SES identity NotifyFrom sends through: the
	// address itself or its domain. Default the domain.
	NotifyIdentity string
	// NotifyConfigurationSet, when set, is the SES configuration set of
	// every send (where the operator handles bounces and complaints).
	NotifyConfigurationSet string

	// EventTypes is the event-type catalog (docs/producing.md, "The
	// event-type catalog"; LoadEventTypes reads a directory of them):
	// tenants read it (GET /v1/event-types, the console), an endpoint's
	// event_types must name its types (or hookline's own), and enqueue
	// validates each payload of a type whose Validation is "warn" or
	// "reject" against its schema. New refuses a catalog with a bad name,
	// a schema that does not compile, an example its schema refuses or an
	// unknown validation, naming the type; it bundles the catalog as
	// event-types.json beside the enqueue and api functions' bootstrap
	// (which needs a Code that is a CodeDir, as CodeFromDir and
	// BuildFromSource are) and sets HOOKLINE_EVENT_TYPES on both. Default
	// none: no catalog, no file, no variable, any event type.
	EventTypes []EventType

	// DestinationRegions are the regions an AWS destination (an endpoint
	// of type sqs, sns or eventbridge: the customer's queue, topic or bus)
	// may be in; registration refuses a target elsewhere. Default: the
	// stack's own region only.
	DestinationRegions []string
	// DestinationRoles are the ARN patterns of the roles the deliver
	// function may assume (sts:AssumeRole) to reach AWS destinations, each
	// arn:<partition>:iam::<account or *>:role/<name or pattern>; the api
	// function refuses at registration a role_arn that none matches (400
	// naming the patterns). Default
	// arn:<the stack's partition>:iam::*:role/hookline-* (a customer's role
	// named with DefaultDestinationRolePrefix, in any account: what lets
	// it in is besides the customer's trust policy, which names the
	// deliver role, Hookline.DeliverRole, and must require the endpoint's
	// external ID). Narrow it to the customers' accounts; widen it
	// ("arn:aws:iam::*:role/*") only knowing that any role trusting
	// hookline's account is then in reach. Unless DestinationOwnAccount,
	// the stack's own account's roles are denied besides, and hookline's
	// own roles always are.
	DestinationRoles []string
	// DestinationOwnAccount accepts destinations, and lets the deliver
	// function assume roles, in the stack's own account (hookline's own
	// resources, those whose names begin with the stack's, and the CDK
	// bootstrap's roles are refused still). Default false: a role of the
	// stack's account that trusts the account would lend the deliver
	// function its permissions; the local cloud, one account for all,
	// sets it.
	DestinationOwnAccount bool
	// DisableDestinationRoleProbe turns off the deliver function's probe
	// of each AWS destination's role: before the role's first attempt in a
	// warm instance, and before every test event's, an AssumeRole with a
	// random wrong external ID; a role that grants it has no
	// sts:ExternalId condition, so any of hookline's tenants naming it
	// could reach the customer's resources, and its endpoint is disabled
	// (destination_role_unguarded), nothing sent. Default false: probe
	// (one STS call per role per warm instance, and one per test event).
	// The local cloud, which evaluates no trust policy, sets it.
	DisableDestinationRoleProbe bool
}

// deliverBatchSize is the deliver function's SQS batch size: the most
// messages one invocation holds, and so the most that wait out the
// visibility timeout when its process crashes.
const deliverBatchSize = 10

// deliverBookkeeping is the deliver function's time besides the attempts
// themselves: reading the batch's records before them (about 2 s at worst)
// and recording the outcomes after them (deliver.DefaultReserve, 3 s).
const deliverBookkeeping = 5 * time.Second

// DeliverTimeoutFor is the deliver function's timeout for a request timeout:
// the arithmetic that keeps a crashed batch's wait short.
//
//	rounds      = ceil(deliverBatchSize / deliver.DefaultConcurrency) = ceil(10/10) = 1
//	timeout     = rounds × requestTimeout + 5 s bookkeeping          = 1 × 15 s + 5 s = 20 s
//	visibility  = 6 × timeout                                         = 120 s
//
// A message whose process died mid-batch is received again when its
// visibility runs out: within 2 minutes of the receive with the defaults,
// where a 60 s timeout made it 6 minutes.
func DeliverTimeoutFor(requestTimeout time.Duration) time.Duration {
	rounds := (deliverBatchSize + deliver.DefaultConcurrency - 1) / deliver.DefaultConcurrency
	return time.Duration(rounds)*requestTimeout + deliverBookkeeping
}

// MaxEventAge is the longest age cap a deployment may set: the queues keep
// messages 14 days, less the longest backoff (12 h) and a margin.
const MaxEventAge = 13 * 24 * time.Hour

// withDefaults returns a copy of p with every zero field set to its default,
// or an error naming the field that cannot be deployed.
func (p Props) withDefaults() (Props, error) {
	for _, set := range []func(*Props) error{
		(*Props).setPlatformDefaults, (*Props).setDeliveryDefaults,
		(*Props).setConcurrencyDefaults, (*Props).setIsolationDefaults, (*Props).setOperationDefaults,
		(*Props).setDestinationDefaults, (*Props).setTenantCapDefaults,
		func(p *Props) error { return checkKeyAdmins(p.KeyAdmins) },
		(*Props).checkMessageLogIndexes, (*Props).checkStaticEgress, (*Props).checkNotify, (*Props).checkEventTypes,
	} {
		if err := set(&p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// setTenantCapDefaults sets the tenant caps and refuses one below its
// least.
func (p *Props) setTenantCapDefaults() error {
	p.MaxEndpoints = cmp.Or(p.MaxEndpoints, domain.DefaultMaxEndpoints)
	p.MaxEndpointBytes = cmp.Or(p.MaxEndpointBytes, domain.DefaultMaxEndpointBytes)
	p.MaxMetricsEventTypes = cmp.Or(p.MaxMetricsEventTypes, domain.DefaultMaxMetricsEventTypes)
	switch {
	case p.MaxEndpoints < 1:
		return fmt.Errorf("max endpoints %d: want at least 1", p.MaxEndpoints)
	case p.MaxEndpointBytes < fnenv.MinMaxEndpointBytes:
		return fmt.Errorf("max endpoint bytes %d: want at least %d (a 2 KiB URL and a 4 KiB filter fit)", p.MaxEndpointBytes, fnenv.MinMaxEndpointBytes)
	case p.MaxMetricsEventTypes < 1:
		return fmt.Errorf("max metrics event types %d: want at least 1", p.MaxMetricsEventTypes)
	}
	return nil
}

// setPlatformDefaults sets the architecture and the functions' code.
func (p *Props) setPlatformDefaults() error {
	if p.Architecture == "" {
		p.Architecture = "arm64"
	}
	if p.Architecture != "arm64" && p.Architecture != "x86_64" {
		return fmt.Errorf("architecture %q: want arm64 or x86_64", p.Architecture)
	}
	if p.Code == nil {
		p.Code = BuildFromSource("")
	}
	return nil
}

// setDeliveryDefaults checks the retry policy and sets the request, deliver and
// visibility timeouts.
func (p *Props) setDeliveryDefaults() error {
	if err := p.Retry.Validate(); err != nil {
		return fmt.Errorf("retry policy: %w", err)
	}
	if p.Retry.MaxAge > MaxEventAge {
		return fmt.Errorf("retry max age %s exceeds %s: the delivery queue keeps messages 14 days, and an older one would expire silently instead of reaching the DLQ", p.Retry.MaxAge, MaxEventAge)
	}
	if err := p.setRequestTimeouts(); err != nil {
		return err
	}
	if p.DeliverTimeout == 0 {
		p.DeliverTimeout = DeliverTimeoutFor(p.MaxRequestTimeout)
	}
	if need := DeliverTimeoutFor(p.MaxRequestTimeout); p.DeliverTimeout < need {
		return fmt.Errorf("deliver timeout %s must be at least %s: one round of attempts (the longest request timeout an endpoint may set, %s) and 5s to read and record them", p.DeliverTimeout, need, p.MaxRequestTimeout)
	}
	if p.DeliverTimeout > 15*time.Minute {
		return errors.New("deliver timeout exceeds the Lambda maximum of 15m")
	}
	// The delivery queue's visibility timeout travels in the retry policy to
	// the deliver function: SQS hides a message at most 12 h from its
	// receive, so the longest delay it accepts depends on how long the
	// message may have been in flight. One value for both, like the schedule
	// and maxReceiveCount.
	if vt := 6 * p.DeliverTimeout; p.Retry.VisibilityTimeout == 0 {
		p.Retry.VisibilityTimeout = vt
	} else if p.Retry.VisibilityTimeout != vt {
		return fmt.Errorf("retry visibility timeout %s: the stack sets it to the delivery queue's, six times the deliver timeout (%s); leave it zero", p.Retry.VisibilityTimeout, vt)
	}
	return nil
}

// setRequestTimeouts sets the stack's request timeout and the longest an
// endpoint may set (MaxRequestTimeout, RequestTimeout by default).
func (p *Props) setRequestTimeouts() error {
	if p.RequestTimeout == 0 {
		p.RequestTimeout = domain.DefaultRequestTimeout
	}
	if p.MaxRequestTimeout == 0 {
		p.MaxRequestTimeout = p.RequestTimeout
	}
	if p.MaxRequestTimeout < p.RequestTimeout {
		return fmt.Errorf("max request timeout %s is below the request timeout %s: an endpoint without a timeout of its own has the stack's", p.MaxRequestTimeout, p.RequestTimeout)
	}
	return nil
}

// setConcurrencyDefaults sets the functions' concurrency and the API's throttling.
func (p *Props) setConcurrencyDefaults() error {
	if p.SmallAccount {
		if err := p.setSmallAccountDefaults(); err != nil {
			return err
		}
	}
	if p.DeliverMaxConcurrency == 0 {
		p.DeliverMaxConcurrency = domain.DefaultDeliverMaxConcurrency
	}
	if p.DeliverMaxConcurrency < 2 || p.DeliverMaxConcurrency > 1000 {
		return fmt.Errorf("deliver max concurrency %d: SQS event sources take 2 to 1000", p.DeliverMaxConcurrency)
	}
	if err := p.setLaneDefaults(); err != nil {
		return err
	}
	mappings := p.DeliverMaxConcurrency + p.LaneMaxConcurrency
	if p.DeliverReservedConcurrency == 0 {
		p.DeliverReservedConcurrency = mappings + 1
	}
	if p.DeliverReservedConcurrency > 0 && p.DeliverReservedConcurrency <= mappings {
		return fmt.Errorf("deliver reserved concurrency %d must exceed its two mappings' max concurrency together, %d (delivery queue %d + tenant lane %d), or throttles burn attempts",
			p.DeliverReservedConcurrency, mappings, p.DeliverMaxConcurrency, p.LaneMaxConcurrency)
	}
	if p.ReplayReservedConcurrency == 0 {
		p.ReplayReservedConcurrency = replayMaxConcurrency + 1
	}
	if p.ReplayReservedConcurrency > 0 && p.ReplayReservedConcurrency <= replayMaxConcurrency {
		return fmt.Errorf("replay reserved concurrency %d must exceed its mappings' max concurrency %d, or throttles burn a job's tries", p.ReplayReservedConcurrency, replayMaxConcurrency)
	}
	if p.APIReservedConcurrency == 0 {
		p.APIReservedConcurrency = DefaultAPIReservedConcurrency
	}
	if p.APIRateLimit == 0 {
		p.APIRateLimit = 50
	}
	if p.APIRateLimit < 0 || p.APIRateLimit > 10000 {
		return fmt.Errorf("API rate limit %g: want more than 0 and at most 10000 requests per second", p.APIRateLimit)
	}
	if p.APIBurstLimit == 0 {
		p.APIBurstLimit = DefaultAPIBurstLimit
	}
	if p.APIBurstLimit < 0 || p.APIBurstLimit > 5000 {
		return fmt.Errorf("API burst limit %d: want 1 to 5000 requests", p.APIBurstLimit)
	}
	if err := p.setEnqueueDefaults(); err != nil {
		return err
	}
	if err := p.setRouteThrottleDefaults(); err != nil {
		return err
	}
	if err := p.setTenantLimitDefaults(); err != nil {
		return err
	}
	return p.checkAPICapacity()
}

// setLaneDefaults sets and checks the tenant lane's mapping cap and
// enqueue's lane threshold; the deliver mapping's cap is set.
func (p *Props) setLaneDefaults() error {
	if p.LaneMaxConcurrency == 0 {
		p.LaneMaxConcurrency = max(min(domain.DefaultTenantConcurrency, p.DeliverMaxConcurrency), sqsMinConcurrency)
		if p.SmallAccount {
			p.LaneMaxConcurrency = sqsMinConcurrency
		}
	}
	if p.LaneMaxConcurrency < sqsMinConcurrency || p.LaneMaxConcurrency > 1000 {
		return fmt.Errorf("lane max concurrency %d: SQS event sources take 2 to 1000", p.LaneMaxConcurrency)
	}
	p.LaneAfter = cmp.Or(p.LaneAfter, enqueue.DefaultLaneAfter)
	if p.LaneAfter < 1 {
		return fmt.Errorf("lane after %d: want at least 1 message of a tenant in the delivery queue per enqueue invocation before the rest go to the tenant lane", p.LaneAfter)
	}
	return nil
}

// DefaultEnqueueParallelization is Props.EnqueueParallelization's default.
const DefaultEnqueueParallelization = 2

// maxParallelization is the most Lambda takes for a stream mapping's
// ParallelizationFactor: 10.
const maxParallelization = 10

// setEnqueueDefaults sets and checks the enqueue mapping's
// parallelization and the function's send concurrency.
func (p *Props) setEnqueueDefaults() error {
	if p.EnqueueParallelization == 0 {
		p.EnqueueParallelization = DefaultEnqueueParallelization
		if p.SmallAccount {
			p.EnqueueParallelization = 1
		}
	}
	if p.EnqueueParallelization < 1 || p.EnqueueParallelization > maxParallelization {
		return fmt.Errorf("enqueue parallelization %d: a stream mapping's parallelization factor is 1 to %d", p.EnqueueParallelization, maxParallelization)
	}
	if p.EnqueueSendConcurrency == 0 {
		p.EnqueueSendConcurrency = domain.DefaultEnqueueSendConcurrency
	}
	if p.EnqueueSendConcurrency < 1 || p.EnqueueSendConcurrency > fnenv.MaxSendConcurrency {
		return fmt.Errorf("enqueue send concurrency %d: want 1 to %d SendMessageBatch requests in flight at once", p.EnqueueSendConcurrency, fnenv.MaxSendConcurrency)
	}
	return p.checkBatchingWindow()
}

// maxBatchingWindow is the most Lambda takes for an event source
// mapping's MaximumBatchingWindowInSeconds: 300 s.
const maxBatchingWindow = 300 * time.Second

// checkBatchingWindow checks Props.BatchingWindow against Lambda's limits.
func (p *Props) checkBatchingWindow() error {
	w := p.BatchingWindow
	if w < 0 || w > maxBatchingWindow || w%time.Second != 0 {
		return fmt.Errorf("batching window %s: a mapping's batching window is whole seconds, 0 to %s", w, maxBatchingWindow)
	}
	return nil
}

// The route throttles' defaults (Props.APIPublishRateLimit, ...).
const (
	DefaultAPIPublishRateLimit  = 100
	DefaultAPIPublishBurstLimit = 20
	DefaultAPIAdminRateLimit    = 2
	DefaultAPIAdminBurstLimit   = 1
	// DefaultAPIBurstLimit is Props.APIBurstLimit's default.
	DefaultAPIBurstLimit = 10
)

// DefaultAPIRequestDuration is Props.APIRequestDuration's default: 100 ms.
const DefaultAPIRequestDuration = 100 * time.Millisecond

// DefaultAPIReservedConcurrency is Props.APIReservedConcurrency's default:
// what the default throttles admit at once (APIAdmittedConcurrency, 59.4).
const DefaultAPIReservedConcurrency = 60

// maxAPIRequestDuration is API Gateway's integration timeout for an HTTP
// API: 29 s (a request cannot run longer).
const maxAPIRequestDuration = 29 * time.Second

// APIAdmittedConcurrency is the executions of the api function that the
// stage's throttles of p (defaults applied) may admit at once, and the
// rate they admit. API Gateway keeps a token bucket per throttle: the
// stage's (APIRateLimit and APIBurstLimit, which every other route and
// anonymous traffic share), the publish route's, and one for each operator
// route. A full bucket admits its burst at once, and refills at its rate,
// so over one request's duration (APIRequestDuration) the buckets admit
// at most their bursts together plus their rates times the duration; a
// request done within the duration holds its execution no longer. That
// is the most executions the throttles let run at once.
func APIAdmittedConcurrency(p Props) (executions, rate float64) {
	_, operator := routeKeys()
	n := 0
	for _, op := range operator {
		if op {
			n++
		}
	}
	rate = p.APIRateLimit + p.APIPublishRateLimit + float64(n)*p.APIAdminRateLimit
	burst := p.APIBurstLimit + p.APIPublishBurstLimit + n*p.APIAdminBurstLimit
	return float64(burst) + rate*p.APIRequestDuration.Seconds(), rate
}

// checkAPICapacity refuses route throttles that admit more requests than
// the api function's reservation can run (APIAdmittedConcurrency): the
// excess would be Lambda throttles, which API Gateway answers 500.
func (p *Props) checkAPICapacity() error {
	if p.APIRequestDuration == 0 {
		p.APIRequestDuration = DefaultAPIRequestDuration
	}
	if p.APIRequestDuration < time.Millisecond || p.APIRequestDuration > maxAPIRequestDuration {
		return fmt.Errorf("API request duration %s: want 1ms to %s (API Gateway's integration timeout)", p.APIRequestDuration, maxAPIRequestDuration)
	}
	if p.APIReservedConcurrency < 0 {
		return nil
	}
	need, rate := APIAdmittedConcurrency(*p)
	if need > float64(p.APIReservedConcurrency) {
		return fmt.Errorf("the API's throttles admit bursts of %.0f (apiBurstLimit %d + apiPublishBurstLimit %d + apiAdminBurstLimit %d on each operator route) "+
			"and %g requests a second (apiRateLimit %g + apiPublishRateLimit %g + apiAdminRateLimit %g on each), "+
			"%.1f executions at once at a request duration of %s (apiRequestDuration), more than the api function's reserved concurrency %d: "+
			"the excess would be Lambda throttles, which API Gateway answers 500; raise apiReservedConcurrency to %d or lower the bursts or rates",
			need-rate*p.APIRequestDuration.Seconds(), p.APIBurstLimit, p.APIPublishBurstLimit, p.APIAdminBurstLimit,
			rate, p.APIRateLimit, p.APIPublishRateLimit, p.APIAdminRateLimit, need, p.APIRequestDuration, p.APIReservedConcurrency, int(math.Ceil(need)))
	}
	return nil
}

// setRouteThrottleDefaults sets the publish and operator routes' throttles.
func (p *Props) setRouteThrottleDefaults() error {
	for _, t := range []struct {
		name  string
		rate  *float64
		burst *int
		r     float64
		b     int
	}{
		{"API publish", &p.APIPublishRateLimit, &p.APIPublishBurstLimit, DefaultAPIPublishRateLimit, DefaultAPIPublishBurstLimit},
		{"API admin", &p.APIAdminRateLimit, &p.APIAdminBurstLimit, DefaultAPIAdminRateLimit, DefaultAPIAdminBurstLimit},
	} {
		if *t.rate == 0 {
			*t.rate = t.r
		}
		if *t.rate < 0 || *t.rate > 10000 {
			return fmt.Errorf("%s rate limit %g: want more than 0 and at most 10000 requests per second", t.name, *t.rate)
		}
		if *t.burst == 0 {
			*t.burst = t.b
		}
		if *t.burst < 0 || *t.burst > 5000 {
			return fmt.Errorf("%s burst limit %d: want 1 to 5000 requests", t.name, *t.burst)
		}
	}
	return nil
}

// setTenantLimitDefaults sets the per-tenant bounds of the API's expensive
// routes and refuses a pair with which one tenant could hold every
// reserved execution of the api function.
func (p *Props) setTenantLimitDefaults() error {
	if p.APIExpensiveBudget == 0 {
		p.APIExpensiveBudget = fnenv.DefaultExpensiveBudget
	}
	if p.APIExpensiveBudget > 0 && (p.APIExpensiveBudget < 100*time.Millisecond || p.APIExpensiveBudget > apiMaxExpensiveBudget) {
		return fmt.Errorf("API expensive budget %s: want 100ms to %s, below the api function's timeout (negative: none)", p.APIExpensiveBudget, apiMaxExpensiveBudget)
	}
	if p.APITenantExpensiveRate == 0 {
		// The default, lowered for a small reservation so that one tenant
		// holds at most half of it (at least 1 a second).
		p.APITenantExpensiveRate = fnenv.DefaultTenantExpensiveRate
		if p.APIReservedConcurrency > 0 && p.APIExpensiveBudget > 0 {
			half := float64(p.APIReservedConcurrency) / 2 / p.APIExpensiveBudget.Seconds()
			p.APITenantExpensiveRate = max(1, min(p.APITenantExpensiveRate, int(half)))
		}
		return nil
	}
	if p.APITenantExpensiveRate > 1000 {
		return fmt.Errorf("API tenant expensive rate %d: want 1 to 1000 requests a second (negative: no limit)", p.APITenantExpensiveRate)
	}
	if p.APITenantExpensiveRate > 0 && p.APIExpensiveBudget > 0 && p.APIReservedConcurrency > 0 {
		if held := float64(p.APITenantExpensiveRate) * p.APIExpensiveBudget.Seconds(); held >= float64(p.APIReservedConcurrency) {
			return fmt.Errorf("API tenant expensive rate %d x budget %s lets one tenant hold %.0f executions, not below the api function's %d reserved: lower either, or raise APIReservedConcurrency",
				p.APITenantExpensiveRate, p.APIExpensiveBudget, held, p.APIReservedConcurrency)
		}
	}
	return nil
}

// apiMaxExpensiveBudget is the longest APIExpensiveBudget: below the api
// function's timeout (apiTimeout), so a request stopped at its budget is
// answered, not killed.
const apiMaxExpensiveBudget = apiTimeout - time.Second

// setSmallAccountDefaults applies the small-account profile
// (Props.SmallAccount): no reservation, the deliver mapping at
// sqsMinConcurrency unless set (the replay mappings' caps follow the
// profile in replayConcurrency).
func (p *Props) setSmallAccountDefaults() error {
	for _, r := range []struct {
		name string
		n    int
	}{{"deliver", p.DeliverReservedConcurrency}, {"api", p.APIReservedConcurrency}, {"replay", p.ReplayReservedConcurrency}} {
		if r.n > 0 {
			return fmt.Errorf("%s reserved concurrency %d: the small-account profile reserves none (AWS keeps 100 executions unreserved, more than a small account has)", r.name, r.n)
		}
	}
	p.DeliverReservedConcurrency, p.APIReservedConcurrency, p.ReplayReservedConcurrency = -1, -1, -1
	if p.DeliverMaxConcurrency == 0 {
		p.DeliverMaxConcurrency = sqsMinConcurrency
	}
	return nil
}

// sqsMinConcurrency is the least MaximumConcurrency an SQS event source
// mapping takes: 2.
const sqsMinConcurrency = 2

// replayConcurrency is the caps of the replay function's two mappings,
// tenants' jobs and the operations: 5 and 2, or 2 and 2 in the
// small-account profile.
func (p Props) replayConcurrency() (jobs, ops int) {
	if p.SmallAccount {
		return sqsMinConcurrency, sqsMinConcurrency
	}
	return replayJobsConcurrency, replayOpsConcurrency
}

// EffectiveProps is props p (nil: the zero props) as New deploys it: every
// zero field set to its default. The error is New's for props it refuses.
// The standalone app's tests check the defaults its documentation states
// against it.
func EffectiveProps(p *Props) (Props, error) { return checkedProps(p) }

// Reservations is the concurrency an instance with props p (nil: the
// defaults) reserves out of the account's Lambda pool, by function
// ("deliver", "api", "replay"; a function that reserves none is absent),
// as New deploys it; the error is New's for props it refuses. AWS refuses
// reservations that leave the account fewer than 100 unreserved
// executions: the project's `make deploy` checks the account against
// them first (scripts/preflight, fed by the app's `reservations` command).
func Reservations(p *Props) (map[string]int, error) {
	q, err := checkedProps(p)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for name, n := range map[string]int{
		"deliver": q.DeliverReservedConcurrency, "api": q.APIReservedConcurrency, "replay": q.ReplayReservedConcurrency,
	} {
		if n > 0 {
			out[name] = n
		}
	}
	return out, nil
}

// setIsolationDefaults sets what keeps a failing or slow endpoint, or a
// tenant spread over many, from hurting the others: the patient disable,
// the circuit breaker, the endpoint concurrency gate and the tenant's
// share. It runs after the retry policy and the
// deliver mapping's concurrency are set, which bound them.
func (p *Props) setIsolationDefaults() error {
	if p.DisableAfterFor == 0 {
		p.DisableAfterFor = domain.DefaultDisableAfterFor
	}
	if span := p.Retry.Span(); p.DisableAfterFor < span {
		return fmt.Errorf("DisableAfterFor %s must be at least the retry schedule's whole span %s (the sum of its delays): an outage the schedule rides out must never disable an endpoint", p.DisableAfterFor, span)
	}
	if p.BreakerCooldown < 0 || p.BreakerMaxCooldown < 0 {
		return fmt.Errorf("breaker cooldown %s and max cooldown %s: want positive durations (zero: the defaults)", p.BreakerCooldown, p.BreakerMaxCooldown)
	}
	b := domain.Breaker{Cooldown: p.BreakerCooldown, MaxCooldown: p.BreakerMaxCooldown}.WithDefaults()
	if p.BreakerMaxCooldown != 0 && p.BreakerMaxCooldown < b.Cooldown {
		return fmt.Errorf("breaker max cooldown %s must be at least the breaker cooldown %s", p.BreakerMaxCooldown, b.Cooldown)
	}
	if b.MaxCooldown > fnenv.MaxBreakerCooldown {
		return fmt.Errorf("breaker cooldown %s, max cooldown %s: want at most %s (a delivery waiting for the breaker is sent again delayed, and SQS delays a message at most 900 s)", b.Cooldown, b.MaxCooldown, fnenv.MaxBreakerCooldown)
	}
	p.BreakerCooldown, p.BreakerMaxCooldown = b.Cooldown, b.MaxCooldown
	if p.EndpointConcurrency == 0 {
		p.EndpointConcurrency = min(domain.DefaultEndpointConcurrency, p.DeliverMaxConcurrency-1)
	}
	if p.EndpointConcurrency < 1 || p.EndpointConcurrency >= p.DeliverMaxConcurrency || p.EndpointConcurrency > fnenv.MaxFastConcurrency {
		return fmt.Errorf("endpoint concurrency %d: want at least 1, at most %d, and below the deliver max concurrency %d, so that one slow endpoint can never hold the whole pool", p.EndpointConcurrency, fnenv.MaxFastConcurrency, p.DeliverMaxConcurrency)
	}
	if p.TenantConcurrency == 0 {
		p.TenantConcurrency = min(domain.DefaultTenantConcurrency, p.DeliverMaxConcurrency-1)
	}
	if p.TenantConcurrency < 1 || p.TenantConcurrency >= p.DeliverMaxConcurrency || p.TenantConcurrency > fnenv.MaxFastConcurrency {
		return fmt.Errorf("tenant concurrency %d: want at least 1, at most %d, and below the deliver max concurrency %d, so that one slow tenant can never hold the whole pool", p.TenantConcurrency, fnenv.MaxFastConcurrency, p.DeliverMaxConcurrency)
	}
	return nil
}

// fastConcurrency is the most deliver invocations that may send to an
// endpoint that answers fast: the deliver mapping's maximum concurrency,
// at most fnenv.MaxFastConcurrency.
func (p Props) fastConcurrency() int {
	return min(p.DeliverMaxConcurrency, fnenv.MaxFastConcurrency)
}

// checkMessageLogIndexes refuses the message log off with its legacy
// index kept: a stack that has both of the log's indexes (by_tenant and
// by_tenant_shard) would lose both in one update, which CloudFormation
// refuses (one index created or deleted per table per update). The legacy
// index goes first, in a deploy of its own.
func (p *Props) checkMessageLogIndexes() error {
	if p.DisableMessageLog && p.KeepLegacyMessageLogIndex {
		return fmt.Errorf("the message log off (DisableMessageLog, messageLog=false) with its legacy index kept (KeepLegacyMessageLogIndex, messageLogLegacyIndex=true): " +
			"deploy without the legacy index first, then turn the log off; CloudFormation removes one index of a table per update")
	}
	return nil
}

// setOperationDefaults sets the replay rate, the disable threshold, the sweep,
// the alarms' thresholds, the faults, the log level and the tracing sample rate.
func (p *Props) setOperationDefaults() error {
	if p.ReplayRate == 0 {
		p.ReplayRate = domain.DefaultReplayRate
	}
	if p.ReplayRate < 0 || p.ReplayRate > 1000 {
		return fmt.Errorf("replay rate %g: want 0 to 1000 sends per second", p.ReplayRate)
	}
	if err := p.setHealthDefaults(); err != nil {
		return err
	}
	if p.DLQAlarmThreshold == 0 {
		p.DLQAlarmThreshold = 100
	}
	if p.SweepInterval == 0 {
		p.SweepInterval = 5 * time.Minute
	}
	if p.SweepInterval < time.Minute || p.SweepInterval%time.Minute != 0 {
		return fmt.Errorf("sweep interval %s: want whole minutes, at least 1m", p.SweepInterval)
	}
	if p.TenantDLQAlarmThreshold == 0 {
		p.TenantDLQAlarmThreshold = 100
	}
	if p.OldestMessageAgeThreshold == 0 {
		p.OldestMessageAgeThreshold = 15 * time.Minute
	}
	if p.IteratorAgeThreshold == 0 {
		p.IteratorAgeThreshold = 5 * time.Minute
	}
	if _, err := fault.Parse(p.Faults); err != nil {
		return err
	}
	if p.LogLevel == "" {
		p.LogLevel = "INFO"
	}
	if p.TracingSampleRate == 0 {
		p.TracingSampleRate = domain.DefaultTracingSampleRate
	}
	if !(p.TracingSampleRate > 0 && p.TracingSampleRate <= 1) {
		return fmt.Errorf("tracing sample rate %g: want a share above 0 and at most 1 (every trace)", p.TracingSampleRate)
	}
	return nil
}

// setHealthDefaults sets the disable and failing thresholds and the
// delivery.dead window, and refuses what cannot work.
func (p *Props) setHealthDefaults() error {
	if p.DisableAfter == 0 {
		p.DisableAfter = domain.DefaultDisableAfter
	}
	if p.FailingAfter == 0 {
		p.FailingAfter = domain.DefaultFailingAfter
	}
	if p.FailingAfter > 0 && p.DisableAfter > 0 && p.FailingAfter >= p.DisableAfter {
		return fmt.Errorf("failing threshold %d must be below the disable threshold %d: endpoint.failing warns before the endpoint is disabled", p.FailingAfter, p.DisableAfter)
	}
	if p.DeadNoticeWindow == 0 {
		p.DeadNoticeWindow = fnenv.DefaultDeadNoticeWindow
	}
	if p.DeadNoticeWindow < time.Second || p.DeadNoticeWindow > fnenv.MaxDeadNoticeWindow {
		return fmt.Errorf("dead notice window %s: want 1s to %s (SQS delays a message at most 900 s)", p.DeadNoticeWindow, fnenv.MaxDeadNoticeWindow)
	}
	if p.StatsFlushEvery == 0 {
		p.StatsFlushEvery = fnenv.DefaultStatsFlushEvery
	}
	if p.StatsFlushEvery > fnenv.MaxStatsFlushEvery {
		return fmt.Errorf("stats flush interval %s: at most %s (what an instance keeps is lost if it stops without SIGTERM)", p.StatsFlushEvery, fnenv.MaxStatsFlushEvery)
	}
	return p.setRetentionDefaults()
}

// setRetentionDefaults sets the payload retention and refuses one the
// outbox cannot keep.
func (p *Props) setRetentionDefaults() error {
	if _, err := fnenv.ParseFrameAncestors(strings.Join(p.ConsoleFrameAncestors, " ")); err != nil {
		return fmt.Errorf("console frame ancestors: %w", err)
	}
	if p.PortalMinTTL == 0 {
		p.PortalMinTTL = fnenv.DefaultPortalMinTTL
	}
	if p.PortalMinTTL < time.Second || p.PortalMinTTL > fnenv.DefaultPortalMinTTL {
		return fmt.Errorf("portal min TTL %s: want 1s to %s", p.PortalMinTTL, fnenv.DefaultPortalMinTTL)
	}
	if p.PayloadRetention == 0 {
		p.PayloadRetention = fnenv.DefaultPayloadRetention
	}
	if p.PayloadRetention < time.Hour || p.PayloadRetention > outbox.DefaultRetention {
		return fmt.Errorf("payload retention %s: want 1h to %s (the outbox items expire %s after they occurred)", p.PayloadRetention, outbox.DefaultRetention, outbox.DefaultRetention)
	}
	if p.DLQRetention == 0 {
		p.DLQRetention = MaxDLQRetention
	}
	if p.DLQRetention < time.Minute || p.DLQRetention > MaxDLQRetention {
		return fmt.Errorf("DLQ retention %s: want 1m to %s (SQS keeps a message at most 14 days)", p.DLQRetention, MaxDLQRetention)
	}
	if p.DeliveryRetention == 0 {
		p.DeliveryRetention = fnenv.DefaultDeliveryRetention
	}
	if p.DeliveryRetention < p.DLQRetention+24*time.Hour {
		return fmt.Errorf("delivery retention %s: want at least the DLQ retention %s + 1 day: a dead delivery's record must outlive its DLQ message", p.DeliveryRetention, p.DLQRetention)
	}
	return nil
}

// MaxDLQRetention is the longest an SQS queue keeps a message: 14 days,
// the dead-letter queue's default retention.
const MaxDLQRetention = 14 * 24 * time.Hour

// functionNames are hookline's functions, the names a Code is asked for.
var functionNames = []string{"enqueue", "deliver", "api", "replay"}
