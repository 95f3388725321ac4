package deliver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

// Store is what deliver needs of the state table: one interface composed
// of the small ports below, each declared here; a *store.Store in
// production (the wiring passes it once), on a fake table in the tests
// (storefake).
type Store interface {
	Snapshots
	Attempts
	EndpointHealth
	// Counters keeps the endpoints' hourly attempt counters.
	Counters
	DeadWindows
	// Limiter takes rate-limited endpoints' request slots; asked only for
	// an endpoint with a rate limit.
	Limiter
	// Gates holds the endpoints' gates and their breakers' probes.
	Gates
}

var _ Store = (*store.Store)(nil)

// Snapshots reads what a batch's attempts need: LoadWith reads a whole
// batch's deliveries, endpoints' gates, endpoints and tenants' tombstones,
// in two parts (the records and gates strongly consistent, the endpoints
// and tombstones eventually, when not cached); Delivery, Endpoint and
// Erased read one, strongly consistent, when LoadWith failed.
type Snapshots interface {
	LoadWith(ctx context.Context, opts store.LoadOptions, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
	Erased(ctx context.Context, tenantID string) (bool, error)
}

// Attempts records what an attempt did to its delivery, and a death before
// a last attempt is made.
type Attempts interface {
	RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
	RecordResendAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt) error
	MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error
}

// EndpointHealth counts an endpoint's consecutive failures, marks it
// failing, disables it, and clears the count and the mark on a success;
// each reports the transition it made, once per episode.
type EndpointHealth interface {
	DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error)
	RecordEndpointFailure(ctx context.Context, tenantID, endpointID string, th store.HealthThresholds) (store.FailureEffect, error)
	ResetEndpointFailures(ctx context.Context, tenantID, endpointID string) (recovered *time.Time, err error)
}

// DeadWindows adds a dead delivery to its endpoint's delivery.dead
// coalescing window.
type DeadWindows interface {
	AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error)
}

// Notices writes operational events into the outbox (an *opevent.Writer).
type Notices interface {
	Emit(ctx context.Context, ev opevent.Event) error
}

var _ Notices = (*opevent.Writer)(nil)

// Queue is what deliver needs of SQS.
type Queue interface {
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	message.BatchSender
}

var _ Queue = (*sqs.Client)(nil)

// SecretOpener opens an endpoint's sealed signing secrets: a
// sealing.Opener, which keeps what it opened across a warm function's
// invocations, so KMS is asked once per secret, not once per delivery.
type SecretOpener interface {
	Open(ctx context.Context, ref sealing.Ref, sealed string) (string, error)
}

// Sender makes one attempt.
type Sender interface {
	Send(ctx context.Context, r sender.Request) sender.Result
}

// Handler processes delivery queue batches.
type Handler struct {
	Store  Store
	Queue  Queue
	Sender Sender
	// Secrets opens the endpoints' sealed signing secrets. Nil: only
	// plaintext secrets (of endpoints written before secrets were sealed)
	// sign, and a delivery to an endpoint with sealed ones is retried.
	Secrets SecretOpener
	// QueueURL is the delivery queue (for ChangeMessageVisibility).
	QueueURL string
	// DLQURL is the dead-letter queue permanent failures are sent to.
	DLQURL string
	// Policy is the retry policy. Its VisibilityTimeout must be the
	// delivery queue's: the longest retry delay is counted back from it, so
	// that SQS, which hides a message at most 12 h from its receive, accepts
	// every delay asked for. Zero value: the defaults of package retry.
	Policy retry.Policy
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Rand draws jitter in [0, 1). Default: no jitter.
	Rand func() float64
	// Concurrency bounds the attempts of a batch in flight at once. Default
	// DefaultConcurrency (10).
	Concurrency int
	// DisableAfter disables an endpoint after this many consecutive failed
	// attempts, once the run has also lasted DisableAfterFor. Default
	// DefaultDisableAfter (50); negative: never.
	DisableAfter int
	// DisableAfterFor is how long a run of consecutive failures must have
	// lasted, besides reaching DisableAfter, to disable the endpoint.
	// Default domain.DefaultDisableAfterFor (5 days). A 410 disables at
	// once whatever it says.
	DisableAfterFor time.Duration
	// Breaker is the endpoints' circuit breaker policy: it opens when an
	// endpoint is marked failing (FailingAfter consecutive failures, the
	// last a retryable one), and while it is open the endpoint's deliveries
	// wait, sent again delayed with no attempt spent, but for one probe at
	// a time. Zero value: the domain's defaults.
	Breaker domain.Breaker
	// EndpointConcurrency is the most invocations that may send to one
	// endpoint at once while it has not shown itself fast (its requests
	// within SlowAfter); the attempts of the others wait, sent again
	// delayed, no attempt spent. Default domain.DefaultEndpointConcurrency
	// (3).
	EndpointConcurrency int
	// TenantConcurrency is the most invocations that may send to one
	// tenant's endpoints not shown fast at once, however many endpoints it
	// spreads over (a batch takes one slot of the tenant's gate for all its
	// attempts to the tenant); a slow batch's slot then rests as long as
	// it was held (TenantRest). The attempts of the others wait, sent
	// again delayed, no attempt spent (WaitTenantBusy). Attempts to an
	// endpoint shown fast (see FastConcurrency) take no slot. Default
	// domain.DefaultTenantConcurrency (6).
	TenantConcurrency int
	// FastConcurrency is the most while the endpoint answers fast: the
	// deliver mapping's maximum concurrency, so that a fast endpoint may
	// use the whole pool. Default: EndpointConcurrency.
	FastConcurrency int
	// SlowAfter is the request time from which an endpoint counts as slow.
	// Default DefaultSlowAfter (1 s).
	SlowAfter time.Duration
	// FailingAfter marks an endpoint failing (endpoint.failing) after this
	// many consecutive failed attempts; below DisableAfter. Default
	// DefaultFailingAfter (10); negative: never.
	FailingAfter int
	// Notices writes the operational events (endpoint.failing,
	// endpoint.disabled, endpoint.recovered; delivery.dead through the
	// replay worker). Nil: none are raised (the endpoints' health is kept
	// all the same).
	Notices Notices
	// OpsQueueURL is the replay worker's operations queue: the death that
	// opens a delivery.dead window sends its opevent.DeadNotice there,
	// delayed until the window ends. Empty: deaths raise no delivery.dead.
	OpsQueueURL string
	// DeadWindow is delivery.dead's coalescing window: an endpoint's deaths
	// within one raise one summary. Default DefaultDeadWindow (5 min); at
	// most opevent.MaxNoticeDelay (15 min).
	DeadWindow time.Duration
	// Reserve is the time kept back from the Lambda deadline for recording
	// an attempt's outcome. An attempt gets at most the time left before
	// the deadline less Reserve; with less than a second of it, the message
	// is returned to the queue untried. Default 3 s.
	Reserve time.Duration
	// RateWait is the longest an attempt to a rate-limited endpoint waits
	// in the invocation for a request slot; one that would wait longer
	// is sent again as a new message, delayed. Default DefaultRateWait
	// (2 s).
	RateWait time.Duration
	// HopAfter is the longest retry delay a message waits out in its own
	// visibility (ChangeMessageVisibility, counted in flight); a longer
	// one is sent again as a new, delayed message and this one deleted
	// (waitOut), so that the queue's in-flight messages are only those
	// being worked. Default DefaultHopAfter (2 s).
	HopAfter time.Duration
	// RequestTimeout is the sender's request timeout: a wait for a rate
	// slot leaves at least this and Reserve before the invocation's
	// deadline. Default DefaultRequestTimeout (15 s).
	RequestTimeout time.Duration
	// SleepUntil waits until a time on the handler's clock, or until ctx
	// is done. Default: a timer on the wall clock.
	SleepUntil func(ctx context.Context, t time.Time)
	Log        *slog.Logger
	// Metrics receives the delivery metrics (EMF), gathered per batch and
	// printed at its end. Nil: none.
	Metrics *metrics.Writer
	// Tracer emits each attempt's span ("deliver.attempt"), whose context
	// the receiver gets as traceparent. Nil: the receiver still gets one,
	// no span is emitted.
	Tracer *trace.Tracer

	// cache keeps the endpoints and tombstones the batches read, across
	// the instance's invocations (endpointCache).
	cacheOnce sync.Once
	cache     *endpointCache
}

// DefaultConcurrency is Handler.Concurrency's default: as many attempts in
// flight as an SQS batch holds (10), so a whole batch is one round of
// attempts and the function's timeout need cover only one request timeout.
const DefaultConcurrency = 10

// DefaultHopAfter is Handler.HopAfter's default: 2 s, DefaultRateWait,
// the longest an invocation already holds a message for a rate slot. A
// wait that short is about as long as the message is worked anyway, and
// within a poll's latency; every step of the default schedule (5 s and
// up, with the 20% jitter 4 s and up) and every Retry-After (never
// shorter than the step) is longer, so every retry hops. A hop costs one
// SendMessageBatch entry (a tenth of a request) and the event source
// mapping's delete (a tenth) instead of one ChangeMessageVisibility.
const DefaultHopAfter = DefaultRateWait

// DefaultFailingAfter is Handler.FailingAfter's default.
const DefaultFailingAfter = domain.DefaultFailingAfter

// DefaultDisableAfter is Handler.DisableAfter's default.
const DefaultDisableAfter = domain.DefaultDisableAfter

// DefaultDeadWindow is Handler.DeadWindow's default.
const DefaultDeadWindow = domain.DefaultDeadWindow

// ReasonNoTimeLeft is the attempt error of a message returned to the queue
// untried because the invocation was about to time out.
const ReasonNoTimeLeft = "no_time_left"

// Handle processes a batch. Messages that are to be tried again are listed in
// the response; its slice is never nil, even when empty.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	limit := h.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, limit)
	)
	msgs, errs, b := h.open(ctx, ev)
	// The batch's metrics go out as one EMF document at the end, not one
	// line per message and metric.
	defer b.mb.Flush()
	for i, m := range ev.Records {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if !h.process(ctx, m, msgs[i], errs[i], b) {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	h.releaseTenants(ctx, b.tgates)
	for _, id := range h.sendLater(ctx, b.later) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	h.flushStats(ctx, b.stats, b.mb)
	return resp, nil
}

// open decodes a batch's messages (errs says why one has no message) and
// sets out what its attempts share, their records read at once.
func (h *Handler) open(ctx context.Context, ev events.SQSEvent) ([]message.Message, []error, batch) {
	// One read for the whole batch's records (deliveries and their
	// endpoints) instead of two per message.
	msgs := make([]message.Message, len(ev.Records))
	errs := make([]error, len(ev.Records))
	var ids []string
	var refs []store.EndpointRef
	for i, m := range ev.Records {
		msgs[i], errs[i] = message.Decode(m.Body)
		if errs[i] == nil {
			ids = append(ids, msgs[i].DeliveryID)
			refs = append(refs, store.EndpointRef{TenantID: msgs[i].TenantID, EndpointID: msgs[i].EndpointID})
		}
	}
	b := batch{
		mb: h.Metrics.Batch(),
		// The endpoints' attempt counters, likewise: one write per
		// endpoint (and hour) at the end, not one per attempt.
		stats: &batchStats{},
		// Rate-limited endpoints' request slots, taken for the batch's
		// messages to each at once.
		gates: &rateGates{msgs: msgs},
		// The endpoints' gates, one slot taken per endpoint for the batch.
		egates: &endpointGates{},
		// The tenants' gates, one slot taken per tenant for the batch.
		tgates: &tenantGates{},
		// The messages sent again to wait, together at the end.
		later: &laterSends{},
	}
	if len(ids) > 0 {
		if s, err := h.load(ctx, ids, refs, needs(msgs, errs)); err != nil {
			h.Log.WarnContext(ctx, "cannot read the batch's records at once; reading each", "error", err.Error())
		} else {
			b.snap = &s
		}
	}
	return msgs, errs, b
}

// signingSecrets returns the secrets that sign a request to ep at now:
// sealed ones opened (h.Secrets keeps them), plaintext ones as they are.
// Its errors name the endpoint, never a secret.
func (h *Handler) signingSecrets(ctx context.Context, ep domain.Endpoint, now time.Time) ([]string, error) {
	stored := ep.SigningSecrets(now)
	out := make([]string, 0, len(stored))
	ref := sealing.Ref{TenantID: ep.TenantID, EndpointID: ep.EndpointID}
	for _, s := range stored {
		if s.Sealed == "" {
			out = append(out, s.Plain)
			continue
		}
		if h.Secrets == nil {
			return nil, fmt.Errorf("endpoint %s has a sealed secret and nothing opens it", ep.EndpointID)
		}
		plain, err := h.Secrets.Open(ctx, ref, s.Sealed)
		if err != nil {
			return nil, err
		}
		out = append(out, plain)
	}
	return out, nil
}

// signerKeys are what sign a request to ep at now, opened: its secrets
// when it signs v1, its active Ed25519 keys (domain.Endpoint.ActiveKeys)
// when it signs v1a. h.Secrets keeps both opened. Its errors name the
// endpoint, never a key.
func (h *Handler) signerKeys(ctx context.Context, ep domain.Endpoint, now time.Time) (signing.Keys, error) {
	var k signing.Keys
	if ep.SignsWith(domain.SchemeV1) {
		secrets, err := h.signingSecrets(ctx, ep, now)
		if err != nil {
			return k, err
		}
		k.Secrets = secrets
	}
	if !ep.SignsWith(domain.SchemeV1a) {
		return k, nil
	}
	n := ep.ActiveKeys(now)
	if n == 0 {
		return k, fmt.Errorf("endpoint %s signs v1a and has no Ed25519 key: %w", ep.EndpointID, sealing.ErrInvalid)
	}
	if h.Secrets == nil {
		return k, fmt.Errorf("endpoint %s has a sealed signing key and nothing opens it", ep.EndpointID)
	}
	ref := sealing.Ref{TenantID: ep.TenantID, EndpointID: ep.EndpointID}
	for _, sealed := range ep.SealedSigningKeys[:n] {
		key, err := h.Secrets.Open(ctx, ref, sealed)
		if err != nil {
			return k, err
		}
		k.SigningKeys = append(k.SigningKeys, key)
	}
	return k, nil
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// delivery reads a delivery from the batch's snapshot, or on its own when
// there is none.
func (h *Handler) delivery(ctx context.Context, snap *store.Snapshot, id string) (domain.Delivery, error) {
	if snap == nil {
		return h.Store.Delivery(ctx, id)
	}
	d, ok := snap.Deliveries[id]
	if !ok {
		return d, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return d, nil
}

// erased reads whether a tenant is being erased from the batch's snapshot,
// or on its own when there is none.
func (h *Handler) erased(ctx context.Context, snap *store.Snapshot, tenantID string) (bool, error) {
	if snap == nil {
		return h.Store.Erased(ctx, tenantID)
	}
	return snap.Erased[tenantID], nil
}

// endpoint reads an endpoint from the batch's snapshot, or on its own when
// there is none.
func (h *Handler) endpoint(ctx context.Context, snap *store.Snapshot, tenantID, endpointID string) (domain.Endpoint, error) {
	if snap == nil {
		return h.Store.Endpoint(ctx, tenantID, endpointID)
	}
	e, ok := snap.Endpoints[store.EndpointRef{TenantID: tenantID, EndpointID: endpointID}]
	if !ok {
		return e, fmt.Errorf("endpoint %s of tenant %s: %w", endpointID, tenantID, store.ErrNotFound)
	}
	return e, nil
}

// toDLQ sends the attempt's message, as received, to the DLQ with its
// dead reason, its tenant (when known) and its trace context (when it
// carries one): three message attributes of SQS's ten.
func (h *Handler) toDLQ(ctx context.Context, at *attempt, tenantID string, reason domain.DeadReason) bool {
	log, mb, body := at.log, at.mb, at.m.Body
	attrs := map[string]sqstypes.MessageAttributeValue{
		"dead_reason": {DataType: aws.String("String"), StringValue: aws.String(string(reason))},
	}
	if tp := at.in.Message.TraceParent; tp != "" {
		attrs[message.TraceAttribute] = message.TraceAttributes(tp)[message.TraceAttribute]
	}
	if tenantID != "" {
		attrs["tenant_id"] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(tenantID)}
	}
	in := &sqs.SendMessageInput{QueueUrl: &h.DLQURL, MessageBody: &body, MessageAttributes: attrs, MessageGroupId: message.GroupID(tenantID)}
	if _, err := h.Queue.SendMessage(ctx, in); err != nil {
		log.ErrorContext(ctx, "cannot send to the DLQ; will retry", "dead_reason", reason, "error", err.Error())
		return false
	}
	log.WarnContext(ctx, "dead-lettered", "dead_reason", reason)
	mb.Put(metrics.DeadLettered, 1, map[string]string{metrics.DimensionTenant: tenantID, metrics.DimensionReason: string(reason)})
	return true
}

// setVisibility hides m for d, which Decide keeps within
// Policy.LongestDelay; d is clamped to it here as well, so no caller can ask
// SQS for a visibility it refuses (more than 12 h from the receive: the
// message would come back after the queue's visibility timeout instead).
func (h *Handler) setVisibility(ctx context.Context, log *slog.Logger, m events.SQSMessage, d time.Duration) {
	secs := int32(min(max(d, 0), h.Policy.LongestDelay()) / time.Second)
	if _, err := h.Queue.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &h.QueueURL, ReceiptHandle: &m.ReceiptHandle, VisibilityTimeout: secs,
	}); err != nil {
		// The message still comes back, after the queue's visibility timeout.
		log.WarnContext(ctx, "cannot change message visibility", "error", err.Error())
	}
}

// attemptContext bounds an attempt by the invocation's deadline less the
// reserve. ok is false when less than a second would be left.
func (h *Handler) attemptContext(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	deadline, has := ctx.Deadline()
	if !has {
		return ctx, func() {}, true
	}
	left := time.Until(deadline) - h.reserve()
	if left < time.Second {
		return nil, nil, false
	}
	c, cancel := context.WithTimeout(ctx, left)
	return c, cancel, true
}

// reserve is Reserve or its default, 3 s.
func (h *Handler) reserve() time.Duration {
	if h.Reserve <= 0 {
		return 3 * time.Second
	}
	return h.Reserve
}

// record writes an attempt: with its tenant's DLQ depth, in one
// transaction, when the attempt moves the delivery into or out of dead.
func (h *Handler) record(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	return h.Store.RecordAttempt(ctx, d, a, o)
}
