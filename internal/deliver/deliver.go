package deliver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
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
	// FailureRates weighs the failure-rate alerts; asked only for an
	// endpoint with one, at most once a RateCheckEvery per instance.
	FailureRates
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
	RecordFirstAttempts(ctx context.Context, firsts []store.FirstAttempt) (notWritten []int, err error)
	RecordResendAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt) error
	MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error
}

// EndpointHealth counts an endpoint's consecutive failures, marks it
// failing, disables it, and clears the count and the mark on a success;
// each reports the transition it made, once per episode.
type EndpointHealth interface {
	DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error)
	RecordEndpointHealth(ctx context.Context, tenantID, endpointID string, reset bool, failures int, th store.HealthThresholds) (store.HealthEffect, error)
}

// DeadWindows adds a dead delivery to its endpoint's delivery.dead
// coalescing window.
type DeadWindows interface {
	AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error)
}

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

// Handler processes delivery queue batches: its ports, its Config and its
// observability.
type Handler struct {
	Store  Store
	Queue  Queue
	Sender Sender
	// Secrets opens the endpoints' sealed signing secrets. Nil: only
	// plaintext secrets (of endpoints written before secrets were sealed)
	// sign, and a delivery to an endpoint with sealed ones is retried.
	Secrets SecretOpener
	// OpEvents writes the operational events (endpoint.failing,
	// endpoint.disabled, endpoint.recovered, endpoint.degraded;
	// delivery.dead through the replay worker). Nil: none are raised (the endpoints' health is kept
	// all the same).
	OpEvents opevent.Emitter
	// Config is applied once (WithDefaults), at the first Handle.
	Config Config
	Log    *slog.Logger
	// Metrics receives the delivery metrics (EMF), gathered per batch and
	// printed at its end. Nil: none.
	Metrics *metrics.Writer
	// Tracer emits each attempt's span ("deliver.attempt"), whose context
	// the receiver gets as traceparent. Nil: the receiver still gets one,
	// no span is emitted.
	Tracer *trace.Tracer

	once sync.Once
	cfg  Config // Config.WithDefaults(), set by setup
	// cache keeps the endpoints and tombstones the batches read, across
	// the instance's invocations (endpointCache).
	cache *endpointCache
	// stats keeps the endpoints' counters between writes, across the
	// instance's invocations (Config.StatsFlushEvery).
	stats statsBuffer
	// rates is when the instance last weighed each endpoint's failure-rate
	// alert (RateCheckEvery).
	rates rateChecks
}

// setup applies the Config and makes the endpoint cache, once: the cache
// lives as long as the Lambda instance.
func (h *Handler) setup() {
	h.once.Do(func() {
		h.cfg = h.Config.WithDefaults()
		h.cache = newEndpointCache(h.cfg.Now, domain.DefaultEndpointCacheTTL, domain.DefaultEndpointCacheSize)
	})
}

// ReasonNoTimeLeft is the attempt error of a message returned to the queue
// untried because the invocation was about to time out.
const ReasonNoTimeLeft = "no_time_left"

// Handle processes a batch. Messages that are to be tried again are listed in
// the response; its slice is never nil, even when empty.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	h.setup()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, h.cfg.Concurrency)
	)
	msgs, errs, b := h.open(ctx, ev)
	// The batch's metrics go out as one EMF document at the end, not one
	// line per message and metric; its delivered attempts as one line.
	defer b.mb.Flush()
	defer b.spans.Flush()
	// The endpoints' counters and failure counts are written as soon as
	// every attempt is counted, beside the attempts' record writes: a
	// clean batch's DynamoDB calls are two round trips (the batch's read;
	// its records and counters), not three.
	b.observed.Add(len(ev.Records))
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		b.observed.Wait()
		// Each endpoint's health is written as soon as its own attempts
		// are counted (batchHealth): these are the last ones.
		h.keepStats(ctx, b.stats, b.mb)
		b.health.wait()
	}()
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
	// The first attempts' records not written yet go out beside the
	// waits' sends and the counters: one round trip after the batch's
	// read.
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		b.firsts.close()
	}()
	h.releaseTenants(ctx, b.tgates)
	for _, id := range h.sendLater(ctx, b.later) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	<-recorded
	<-flushed
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
		// One failure-count write per endpoint, however many of its
		// messages succeed or fail.
		health:   newBatchHealth(refs, func(e *endpointHealth) { h.writeHealth(ctx, e) }),
		observed: &sync.WaitGroup{},
		// The delivered attempts' spans, one line for the batch.
		spans: h.Tracer.Rows(attemptSpan),
		// The records of deliveries delivered at their first attempt,
		// written together.
		firsts: &firstAttempts{wait: FirstAttemptsWait, write: func(firsts []store.FirstAttempt, logs []*slog.Logger) {
			h.recordFirstAttempts(ctx, firsts, logs)
		}},
	}
	if len(ids) > 0 {
		if s, err := h.load(ctx, ids, refs, needs(msgs, errs)); err != nil {
			h.Log.WarnContext(ctx, "cannot read the batch's records at once; reading each", "error", err.Error())
		} else {
			h.readPacked(ctx, ev.Records, msgs, errs, s)
			b.snap = &s
		}
	}
	return msgs, errs, b
}

// readPacked reads, in one more read, the deliveries the batch's read did
// not find (it reads records only: a clean batch is two calls) of the
// messages that may be of a delivery delivered at its first attempt, whose
// row of an outcome page is its only trace: a resend's (which is to find
// it delivered, and RecordResendAttempt then writes its record), and a
// message received before (SQS delivers it again after a lost delete, or a
// batch that timed out after its page: found delivered, it is dropped as a
// duplicate, as its record dropped it before the pages). A first receive
// with no record is a delivery never attempted: nothing to read. A retry
// has its failed attempt's record. Read as Load reads (its records and
// their pages at once); a failure leaves the messages to be sent, at least
// once, as before.
func (h *Handler) readPacked(ctx context.Context, recs []events.SQSMessage, msgs []message.Message, errs []error, snap store.Snapshot) {
	var ids []string
	for i, m := range msgs {
		if _, ok := snap.Deliveries[m.DeliveryID]; ok || errs[i] != nil {
			continue
		}
		if _, packable := domain.ParseDeliveryID(m.DeliveryID); !packable {
			continue // a legacy id is never packed
		}
		if n, _ := strconv.Atoi(recs[i].Attributes["ApproximateReceiveCount"]); m.Resend || n > 1 || m.Attempts > 0 {
			ids = append(ids, m.DeliveryID)
		}
	}
	if len(ids) == 0 {
		return
	}
	found, err := h.Store.LoadWith(ctx, store.LoadOptions{Packed: true}, ids, nil)
	if err != nil {
		h.Log.WarnContext(ctx, "cannot read the outcome pages of messages received again", "deliveries", len(ids), "error", err.Error())
		return
	}
	for id, d := range found.Deliveries {
		snap.Deliveries[id] = d
	}
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
	attrs := message.DeadLetterAttributes(string(reason), tenantID, at.in.Message.TraceParent)
	in := &sqs.SendMessageInput{QueueUrl: &h.cfg.DLQURL, MessageBody: &body, MessageAttributes: attrs, MessageGroupId: message.GroupID(tenantID)}
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
	secs := int32(min(max(d, 0), h.cfg.Policy.LongestDelay()) / time.Second)
	if _, err := h.Queue.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(h.receivedFrom(m)), ReceiptHandle: &m.ReceiptHandle, VisibilityTimeout: secs,
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
	left := time.Until(deadline) - h.cfg.Reserve
	if left < time.Second {
		return nil, nil, false
	}
	c, cancel := context.WithTimeout(ctx, left)
	return c, cancel, true
}

// record writes an attempt: with its tenant's DLQ depth, in one
// transaction, when the attempt moves the delivery into or out of dead.
func (h *Handler) record(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	return h.Store.RecordAttempt(ctx, d, a, o)
}
