package deliver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
)

// Store is what deliver needs of the state table: one small port per use,
// each declared here, each a *store.Store in production (the wiring passes
// the same store to every field) and a memstore.Store in the tests.
type Store struct {
	Snapshots
	Attempts
	EndpointHealth
}

// Snapshots reads what a batch's attempts need: Load reads a whole batch's
// deliveries and endpoints at once; Delivery and Endpoint read one, when
// Load failed.
type Snapshots interface {
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
}

// Attempts records what an attempt did to its delivery, and a death before
// a last attempt is made.
type Attempts interface {
	RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
	MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error
}

// EndpointHealth counts an endpoint's consecutive failures and disables it.
type EndpointHealth interface {
	DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) error
	RecordEndpointFailure(ctx context.Context, tenantID, endpointID string, threshold int) (disabled bool, err error)
	ResetEndpointFailures(ctx context.Context, tenantID, endpointID string) error
}

var _ = Store{Snapshots: (*store.Store)(nil), Attempts: (*store.Store)(nil), EndpointHealth: (*store.Store)(nil)}

// Queue is what deliver needs of SQS.
type Queue interface {
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
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
	// attempts. Default 50; negative: never.
	DisableAfter int
	// Reserve is the time kept back from the Lambda deadline for recording
	// an attempt's outcome. An attempt gets at most the time left before
	// the deadline less Reserve; with less than a second of it, the message
	// is returned to the queue untried. Default 3 s.
	Reserve time.Duration
	Log     *slog.Logger
	// Metrics receives the delivery metrics (EMF), gathered per batch and
	// printed at its end. Nil: none.
	Metrics *metrics.Writer
	// Fault, for the soak test only, may end the process after an
	// attempt's POST (package fault). Nil: never.
	Fault func(point string) error
}

// DefaultConcurrency is Handler.Concurrency's default: as many attempts in
// flight as an SQS batch holds (10), so a whole batch is one round of
// attempts and the function's timeout need cover only one request timeout.
const DefaultConcurrency = 10

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
	// The batch's metrics go out as one EMF document at the end, not one
	// line per message and metric.
	mb := h.Metrics.Batch()
	defer mb.Flush()
	var snap *store.Snapshot
	if len(ids) > 0 {
		if s, err := h.Store.Load(ctx, ids, refs); err != nil {
			h.Log.WarnContext(ctx, "cannot read the batch's records at once; reading each", "error", err.Error())
		} else {
			snap = &s
		}
	}
	for i, m := range ev.Records {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if !h.process(ctx, m, msgs[i], errs[i], snap, mb) {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return resp, nil
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

// process makes one attempt for m (msg is its decoded body, or decodeErr
// says why it has none) and reports whether the message is done with (true:
// delete it) or must come back (false). snap holds the batch's records, or
// is nil when they could not be read at once; mb gathers the batch's
// metrics.
func (h *Handler) process(ctx context.Context, m events.SQSMessage, msg message.Message, decodeErr error, snap *store.Snapshot, mb *metrics.Batch) bool {
	attempt, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if attempt < 1 {
		attempt = 1
	}
	log := h.Log.With("message_id", m.MessageId, "attempt", attempt)
	if decodeErr != nil {
		log.ErrorContext(ctx, "malformed delivery message sent to the DLQ", "error", decodeErr.Error())
		return h.toDLQ(ctx, log, mb, m.Body, "", domain.ReasonMalformedMessage)
	}
	log = log.With("delivery_id", msg.DeliveryID, "tenant_id", msg.TenantID, "endpoint_id", msg.EndpointID, "event_id", msg.EventID)

	d, err := h.delivery(ctx, snap, msg.DeliveryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d = domain.Delivery{DeliveryID: msg.DeliveryID, TenantID: msg.TenantID, EndpointID: msg.EndpointID, EventID: msg.EventID, EventType: msg.EventType}
	case err != nil:
		log.ErrorContext(ctx, "cannot read delivery; will retry", "error", err.Error())
		return false
	case d.State == domain.StateDelivered:
		log.InfoContext(ctx, "already delivered; duplicate message dropped")
		return true
	}

	now := h.now()
	if h.Policy.Expired(msg.AgeFrom(), now) {
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonMaxAgeExceeded)
	}
	ep, err := h.endpoint(ctx, snap, msg.TenantID, msg.EndpointID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonEndpointNotFound)
	case err != nil:
		log.ErrorContext(ctx, "cannot read endpoint; will retry", "error", err.Error())
		return false
	case ep.Disabled:
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonEndpointDisabled)
	}
	secrets, err := h.signingSecrets(ctx, ep, now)
	switch {
	case errors.Is(err, sealing.ErrInvalid):
		log.ErrorContext(ctx, "endpoint secret cannot be opened", "error", err.Error())
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonInvalidSecret)
	case err != nil:
		// KMS throttled or unreachable, say: the message comes back after
		// the queue's visibility timeout.
		log.ErrorContext(ctx, "cannot open the endpoint's signing secret; will retry", "error", err.Error())
		return false
	}
	signer, err := signing.NewSigner(secrets...)
	if err != nil {
		log.ErrorContext(ctx, "endpoint secret unusable", "error", err.Error())
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonInvalidSecret)
	}
	body, err := msg.RequestBody()
	if err != nil {
		return h.dead(ctx, log, mb, m, d, domain.Attempt{Number: attempt, At: now, Error: "not_attempted"}, domain.ReasonMalformedMessage)
	}

	if attempt >= h.Policy.Attempts() {
		// The last receive: should this process stop before the outcome is
		// recorded (or return the message untried for want of time, below),
		// SQS moves the message to the DLQ without this function seeing it
		// again. Record the death first, so it is never missed; the outcome
		// replaces it.
		if err := h.Store.MarkDeadBeforeLastAttempt(ctx, d, domain.ReasonAttemptsExhausted, m.Body, now); err != nil {
			log.WarnContext(ctx, "cannot record the death before the last attempt; attempting anyway", "error", err.Error())
		} else if d.State == "" || d.State == domain.StatePending {
			// As it now is, so that the outcome's write (conditional on the
			// record as read) does not miss once first.
			d.State = domain.StateDead
		}
	}
	sendCtx, cancel, ok := h.attemptContext(ctx)
	if !ok {
		// Too close to the invocation's deadline to attempt and record it:
		// back to the queue at once, untried (it costs one receive).
		log.WarnContext(ctx, "no time left in this invocation; message returned untried")
		h.setVisibility(ctx, log, m, 0)
		return false
	}
	defer cancel()
	res := h.Sender.Send(sendCtx, sender.Request{
		URL: ep.URL, DeliveryID: msg.DeliveryID, EventID: msg.EventID, EventType: msg.EventType,
		Attempt: attempt, Body: body, Signer: signer, Headers: ep.Headers,
	})
	if h.Fault != nil {
		_ = h.Fault(fault.DeliverCrash)
	}
	a := domain.Attempt{Number: attempt, At: now, Status: res.Status, Error: res.Error, LatencyMS: res.Latency.Milliseconds(), Excerpt: res.Excerpt}
	mb.Put(metrics.AttemptLatency, float64(res.Latency.Microseconds())/1000, nil)
	if res.Outcome == sender.Delivered {
		mb.Put(metrics.Delivered, 1, nil)
	} else {
		mb.Put(metrics.AttemptFailed, 1, nil)
	}
	if res.Error != "" {
		log = log.With("error", res.Error) // none on a 2xx: not printed empty on every delivery
	}
	log = log.With("outcome", res.Outcome.String(), "status", res.Status, "latency_ms", a.LatencyMS)

	h.endpointHealth(ctx, log, ep, res.Outcome == sender.Delivered)
	switch res.Outcome {
	case sender.Delivered:
		// The receiver has it; sending again would only duplicate it, so the
		// message goes either way. The record is tried a few times: before a
		// last attempt it already says dead, and left so it would keep a
		// delivered webhook listed (and replayable) as dead.
		err := h.record(ctx, d, a, domain.Outcome{State: domain.StateDelivered})
		for try := 1; err != nil && try < 3 && ctx.Err() == nil; try++ {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
			err = h.record(ctx, d, a, domain.Outcome{State: domain.StateDelivered})
		}
		if err != nil {
			log.ErrorContext(ctx, "delivered, but the record could not be updated", "record_error", err.Error())
		}
		log.InfoContext(ctx, "delivered")
		return true
	case sender.Dead:
		if res.DisableEndpoint {
			if err := h.Store.DisableEndpoint(ctx, msg.TenantID, msg.EndpointID, domain.DisabledEndpointGone); err != nil {
				log.ErrorContext(ctx, "cannot disable endpoint", "disable_error", err.Error())
			}
		}
		return h.dead(ctx, log, mb, m, d, a, res.Reason)
	}

	dec := h.Policy.Decide(attempt, msg.AgeFrom(), h.now(), res.RetryAfter, h.Rand)
	switch {
	case dec.Retry:
		if err := h.record(ctx, d, a, domain.Outcome{State: domain.StatePending}); err != nil {
			log.ErrorContext(ctx, "cannot record attempt", "record_error", err.Error())
		}
		h.setVisibility(ctx, log, m, dec.Delay)
		mb.Put(metrics.RetryScheduled, 1, nil)
		log.InfoContext(ctx, "retry scheduled", "delay_s", int(dec.Delay.Seconds()))
		return false
	case dec.Reason == domain.ReasonAttemptsExhausted:
		// The last attempt: SQS's redrive policy moves the message to the
		// DLQ when it is next received, which visibility 0 makes at once.
		if err := h.record(ctx, d, a, domain.Outcome{State: domain.StateDead, DeadReason: dec.Reason, Message: m.Body}); err != nil {
			log.ErrorContext(ctx, "cannot record attempt", "record_error", err.Error())
		}
		h.setVisibility(ctx, log, m, 0)
		mb.Put(metrics.DeadLettered, 1, map[string]string{metrics.DimensionTenant: d.TenantID, metrics.DimensionReason: string(dec.Reason)})
		log.WarnContext(ctx, "attempts exhausted; SQS moves the message to the DLQ")
		return false
	default:
		return h.dead(ctx, log, mb, m, d, a, dec.Reason)
	}
}

// dead marks the delivery dead and parks its message in the DLQ. It reports
// false (keep the message) if the DLQ send fails, so nothing is lost.
func (h *Handler) dead(ctx context.Context, log *slog.Logger, mb *metrics.Batch, m events.SQSMessage, d domain.Delivery, a domain.Attempt, reason domain.DeadReason) bool {
	if err := h.record(ctx, d, a, domain.Outcome{State: domain.StateDead, DeadReason: reason, Message: m.Body}); err != nil {
		log.ErrorContext(ctx, "cannot mark delivery dead; will retry", "record_error", err.Error())
		return false
	}
	return h.toDLQ(ctx, log, mb, m.Body, d.TenantID, reason)
}

func (h *Handler) toDLQ(ctx context.Context, log *slog.Logger, mb *metrics.Batch, body, tenantID string, reason domain.DeadReason) bool {
	attrs := map[string]sqstypes.MessageAttributeValue{
		"dead_reason": {DataType: aws.String("String"), StringValue: aws.String(string(reason))},
	}
	if tenantID != "" {
		attrs["tenant_id"] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(tenantID)}
	}
	if _, err := h.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &h.DLQURL, MessageBody: &body, MessageAttributes: attrs}); err != nil {
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
	reserve := h.Reserve
	if reserve <= 0 {
		reserve = 3 * time.Second
	}
	left := time.Until(deadline) - reserve
	if left < time.Second {
		return nil, nil, false
	}
	c, cancel := context.WithTimeout(ctx, left)
	return c, cancel, true
}

// endpointHealth keeps the endpoint's consecutive failure count: reset on
// success (only when it is not already zero), counted on failure, and the
// endpoint disabled when the count reaches DisableAfter.
func (h *Handler) endpointHealth(ctx context.Context, log *slog.Logger, ep domain.Endpoint, ok bool) {
	if ok {
		if ep.ConsecutiveFailures > 0 {
			if err := h.Store.ResetEndpointFailures(ctx, ep.TenantID, ep.EndpointID); err != nil {
				log.ErrorContext(ctx, "cannot reset endpoint failures", "health_error", err.Error())
			}
		}
		return
	}
	threshold := h.DisableAfter
	if threshold == 0 {
		threshold = 50
	}
	disabled, err := h.Store.RecordEndpointFailure(ctx, ep.TenantID, ep.EndpointID, max(threshold, 0))
	if err != nil {
		log.ErrorContext(ctx, "cannot count endpoint failure", "health_error", err.Error())
		return
	}
	if disabled {
		log.WarnContext(ctx, "endpoint disabled after consecutive failures", "threshold", threshold)
	}
}

// record writes an attempt: with its tenant's DLQ depth, in one
// transaction, when the attempt moves the delivery into or out of dead.
func (h *Handler) record(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	return h.Store.RecordAttempt(ctx, d, a, o)
}
