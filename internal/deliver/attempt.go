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
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

// attempt is one message on its way through process: what Decide reads,
// and what the request and the apply need besides.
type attempt struct {
	m  events.SQSMessage
	in Input
	batch
	log *slog.Logger
	// signer and body make the request, once prepared.
	signer *signing.Signer
	body   []byte
	// dest is an AWS endpoint's destination (openDestination); nil for http.
	dest *sender.Destination
	// auth is an HTTP endpoint's authentication, its secret opened
	// (openAuth); nil when it has none.
	auth *sender.Auth
	// deferDelay is how long a deferred message waits before it comes
	// back (set where the wait is found; a dependency's hitch and a hop
	// compute theirs when deferred).
	deferDelay time.Duration
	// gate is the endpoint's gate that admitted the attempt (nil: none,
	// or not admitted); probe says the attempt is the breaker's probe.
	gate  *endpointGate
	probe bool
	// tgate is the tenant's gate the attempt asked (nil: none yet).
	tgate *tenantGate
	// admitted says the gate let the attempt through: it is to leave it.
	admitted bool
	// trace is the context of the hop that sent the message (traceOf):
	// the attempt's span is its child, span, once sent.
	trace trace.Context
	span  *trace.Span
	// decoded says the message was decoded: its endpoint's health counts
	// it (batchHealth).
	decoded bool
	// countOnce makes counted count the attempt down once.
	countOnce sync.Once
}

// traceOf is the trace context a delivery message carries: its
// message attribute, else its body's, else the event's derived trace
// (a message of an earlier version, or one whose context is malformed).
func traceOf(m events.SQSMessage, msg message.Message) trace.Context {
	if a, ok := m.MessageAttributes[message.TraceAttribute]; ok && a.StringValue != nil {
		if c, ok := trace.Parse(*a.StringValue); ok {
			return c
		}
	}
	return trace.Or(msg.TraceParent, trace.Derive(trace.EventKey(msg.TenantID, msg.EventID), msg.OccurredAt))
}

// batch is what the attempts of a batch share.
type batch struct {
	snap   *store.Snapshot // the batch's records; nil when they could not be read at once
	mb     *metrics.Batch  // the batch's metrics
	stats  *batchStats     // the batch's attempt counters, per endpoint
	gates  *rateGates      // the batch's rate-limited endpoints' slots
	egates *endpointGates  // the batch's endpoint gates
	tgates *tenantGates    // the batch's tenant gates
	later  *laterSends     // the batch's messages to send again, at its end
	health *batchHealth    // the batch's endpoint failure counts, one write each
	// spans holds the batch's delivered attempts' spans, written as one
	// line at its end (trace.Rows), not a line each.
	spans *trace.Rows
	// firsts are the batch's deliveries delivered at their first attempt,
	// their records written in one call at its end.
	firsts *firstAttempts
	// observed counts down the batch's attempts whose result is not in
	// stats yet: once it is zero, the counters are flushed, beside the
	// attempts' record writes rather than after them.
	observed *sync.WaitGroup
}

// process makes one attempt for m (msg is its decoded body, or decodeErr
// says why it has none) and reports whether the message is done with (true:
// delete it) or must come back (false). b is what the batch's attempts
// share.
//
// It reads top-down: prepare (stopping as soon as Decide rules the attempt
// out), record the death first on the last receive, send, decide, apply.
func (h *Handler) process(ctx context.Context, m events.SQSMessage, msg message.Message, decodeErr error, b batch) bool {
	at := h.begin(ctx, m, msg, decodeErr, b)
	defer at.counted() // whatever the path, once
	dec := h.prepare(ctx, at)
	defer h.done(ctx, at)
	if dec.Kind == Send && at.in.Endpoint.RateLimit > 0 {
		dec = h.waitForSlot(ctx, at, dec)
	}
	if dec.Kind != Send {
		return h.apply(ctx, at, dec)
	}
	if dec.MarkDeadFirst {
		h.markDeadFirst(ctx, at)
	}
	res, ok := h.send(ctx, at)
	if !ok {
		at.in.Hitch = HitchNoTimeLeft
	}
	at.in.Result = res
	return h.apply(ctx, at, h.decide(at.in))
}

// counted says the attempt's result is in the batch's stats (or that it
// has none): the batch's counters wait for every attempt's, once.
func (at *attempt) counted() {
	at.countOnce.Do(func() {
		// The endpoint's health first: its write begins before the batch
		// sees every attempt counted.
		if at.decoded && at.health != nil {
			at.health.done(attemptRef(at))
		}
		if at.observed != nil {
			at.observed.Done()
		}
	})
}

// done gives the attempt's gate back, if it was admitted, saying whether
// its request was slow (took SlowAfter or longer, or timed out).
func (h *Handler) done(ctx context.Context, at *attempt) {
	if !at.admitted {
		return
	}
	res := at.in.Result
	slow := res != nil && (res.Latency >= h.cfg.SlowAfter || res.Error == "timeout")
	if slow {
		at.tenantSlow()
	}
	h.leave(ctx, at, slow)
}

// decide is Decide with the endpoint's policy, the handler's clock and
// jitter.
func (h *Handler) decide(in Input) Decision {
	return Decide(in, h.policy(in.Endpoint), h.cfg.Now(), h.cfg.Rand)
}

// policy is the retry policy of ep's deliveries: the stack's, with ep's
// own schedule when it has one (retry.ForEndpoint). An endpoint not read
// yet (zero) has the stack's.
func (h *Handler) policy(ep domain.Endpoint) retry.Policy {
	return retry.ForEndpoint(h.cfg.Policy, ep)
}

// begin sets out an attempt for m: its number (the receive count), its
// start, and a logger with the message's ids.
func (h *Handler) begin(ctx context.Context, m events.SQSMessage, msg message.Message, decodeErr error, b batch) *attempt {
	n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	// A message sent again to wait for a rate limit carries the attempts
	// made before it (none otherwise, nor when it is undecodable).
	at := &attempt{m: m, batch: b, in: Input{Attempt: max(n, 1) + max(msg.Attempts, 0), Message: msg, Started: h.cfg.Now()}}
	at.log = h.Log.With("message_id", m.MessageId, "attempt", at.in.Attempt)
	if decodeErr != nil {
		at.log.ErrorContext(ctx, "malformed delivery message sent to the DLQ", "error", decodeErr.Error())
		at.in.Hitch = HitchUndecodable
		return at
	}
	at.decoded = true
	at.trace = traceOf(m, msg)
	at.log = at.log.With("delivery_id", msg.DeliveryID, "tenant_id", msg.TenantID, "endpoint_id", msg.EndpointID, "event_id", msg.EventID,
		"trace_id", at.trace.TraceIDHex())
	return at
}

// prepare reads the attempt's records and builds its request, one step at
// a time, and stops at the first step after which Decide rules the attempt
// out, so that nothing is read or opened in vain. It returns Decide's
// answer: Send when the request is ready.
func (h *Handler) prepare(ctx context.Context, at *attempt) Decision {
	steps := []func(context.Context, *attempt){h.readDelivery, h.readEndpoint, h.openSigner, h.openAuth, h.openDestination, buildBody, h.admit}
	dec := Decision{Kind: Send}
	for _, step := range steps {
		if at.in.Hitch == HitchNone {
			step(ctx, at)
		}
		if dec = decideBefore(at.in, h.policy(at.in.Endpoint)); dec.Kind != Send {
			return dec
		}
	}
	return dec
}

// readDelivery reads the delivery's record; a delivery with none yet is
// attempted from the message's own content. A message of a tenant being
// erased (its tombstone read with the batch's records, or on its own
// without them) is ruled out first.
func (h *Handler) readDelivery(ctx context.Context, at *attempt) {
	msg := at.in.Message
	erased, err := h.erased(ctx, at.snap, msg.TenantID)
	if err != nil {
		at.log.ErrorContext(ctx, "cannot read the tenant's tombstone; will retry", "error", err.Error())
		at.in.Hitch = HitchDeliveryUnreadable
		return
	}
	if erased {
		at.in.Hitch = HitchTenantErased
		return
	}
	d, err := h.delivery(ctx, at.snap, msg.DeliveryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d = domain.Delivery{DeliveryID: msg.DeliveryID, TenantID: msg.TenantID, EndpointID: msg.EndpointID, EventID: msg.EventID, EventType: msg.EventType}
	case err != nil:
		at.log.ErrorContext(ctx, "cannot read delivery; will retry", "error", err.Error())
		at.in.Hitch = HitchDeliveryUnreadable
	}
	at.in.Delivery = d
}

// readEndpoint reads the endpoint's record.
func (h *Handler) readEndpoint(ctx context.Context, at *attempt) {
	ep, err := h.endpoint(ctx, at.snap, at.in.Message.TenantID, at.in.Message.EndpointID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		at.in.Hitch = HitchEndpointMissing
	case err != nil:
		at.log.ErrorContext(ctx, "cannot read endpoint; will retry", "error", err.Error())
		at.in.Hitch = HitchEndpointUnreadable
	}
	at.in.Endpoint = ep
}

// openSigner opens the endpoint's signing secrets and Ed25519 keys, those
// of the schemes it signs with, and makes the signer.
func (h *Handler) openSigner(ctx context.Context, at *attempt) {
	keys, err := h.signerKeys(ctx, at.in.Endpoint, at.in.Started)
	if secretHitch(ctx, at, "signing secret", err) {
		return
	}
	signer, err := signing.NewSignerWith(keys)
	if err != nil {
		at.log.ErrorContext(ctx, "endpoint secret unusable", "error", err.Error())
		at.in.Hitch = HitchSecretInvalid
		return
	}
	at.signer = signer
}

// secretHitch sets the attempt's hitch for err, an endpoint secret's
// opening (what names it), and reports whether there was one: a secret
// that can never be opened is dead, one KMS could not open now (throttled
// or unreachable, say) comes back after the queue's visibility timeout.
// err names the endpoint, never a secret.
func secretHitch(ctx context.Context, at *attempt, what string, err error) bool {
	switch {
	case errors.Is(err, sealing.ErrInvalid):
		at.log.ErrorContext(ctx, "endpoint "+what+" cannot be opened", "error", err.Error())
		at.in.Hitch = HitchSecretInvalid
	case err != nil:
		at.log.ErrorContext(ctx, "cannot open the endpoint's "+what+"; will retry", "error", err.Error())
		at.in.Hitch = HitchSecretUnavailable
	}
	return err != nil
}

// openAuth opens an HTTP endpoint's authentication secret (h.Secrets
// keeps it, as it keeps the signing secrets): the request carries it.
func (h *Handler) openAuth(ctx context.Context, at *attempt) {
	ep := at.in.Endpoint
	if ep.Auth == nil || ep.Kind() != domain.TypeHTTP {
		return
	}
	var secret string
	err := fmt.Errorf("endpoint %s has an auth secret and nothing opens it", ep.EndpointID)
	if h.Secrets != nil {
		secret, err = h.Secrets.Open(ctx, sealing.Ref{TenantID: ep.TenantID, EndpointID: ep.EndpointID}, ep.Auth.Sealed())
	}
	if secretHitch(ctx, at, "auth secret", err) {
		return
	}
	at.auth = senderAuth(*ep.Auth, secret)
}

// senderAuth is a's request side, secret its sealed secret opened.
func senderAuth(a domain.EndpointAuth, secret string) *sender.Auth {
	out := &sender.Auth{Kind: a.Kind}
	switch a.Kind {
	case domain.AuthBasic:
		out.Username, out.Password = a.Username, secret
	case domain.AuthOAuth2:
		out.TokenURL, out.ClientID, out.ClientSecret, out.Scope, out.Audience = a.TokenURL, a.ClientID, secret, a.Scope, a.Audience
	case domain.AuthMTLS:
		out.Certificate, out.PrivateKey = a.Certificate, secret
	}
	return out
}

// buildBody builds the request body from the message.
func buildBody(_ context.Context, at *attempt) {
	body, err := at.in.Message.RequestBody()
	if err != nil {
		at.in.Hitch = HitchBodyMalformed
		return
	}
	at.body = body
}

// markDeadFirst records the delivery dead before its last attempt: should
// this process stop before the outcome is recorded (or return the message
// untried for want of time), SQS moves the message to the DLQ without this
// function seeing it again. Recorded first, the death is never missed; the
// outcome replaces it.
func (h *Handler) markDeadFirst(ctx context.Context, at *attempt) {
	d := &at.in.Delivery
	if err := h.Store.MarkDeadBeforeLastAttempt(ctx, *d, domain.ReasonAttemptsExhausted, at.m.Body, at.in.Started); err != nil {
		at.log.WarnContext(ctx, "cannot record the death before the last attempt; attempting anyway", "error", err.Error())
	} else if d.State == "" || d.State == domain.StatePending {
		// As it now is, so that the outcome's write (conditional on the
		// record as read) does not miss once first.
		d.State = domain.StateDead
	}
}

// attemptSpan names an attempt's span.
const attemptSpan = "deliver.attempt"

// send makes the attempt's request within the invocation's deadline. ok is
// false, and nothing sent, when too little time is left to attempt and
// record it.
func (h *Handler) send(ctx context.Context, at *attempt) (res *sender.Result, ok bool) {
	sendCtx, cancel, ok := h.attemptContext(ctx)
	if !ok {
		return nil, false
	}
	defer cancel()
	msg, ep := at.in.Message, at.in.Endpoint
	// The attempt's outcome line is its span's line (observe adds
	// trace.Span.LineFields).
	span := h.Tracer.Start(at.trace, attemptSpan)
	at.span = span
	r := h.Sender.Send(sendCtx, sender.Request{
		URL: ep.URL, DeliveryID: msg.DeliveryID, EventID: msg.EventID, EventType: msg.EventType,
		Attempt: at.in.Attempt, Body: at.body, Signer: at.signer, Headers: ep.Headers,
		Destination: at.dest, Auth: at.auth,
		Timeout:     endpointTimeout(ep),
		TraceParent: span.TraceParent(),
	})
	endAttemptSpan(span, msg, at.in.Attempt, r)
	return &r, true
}

// endAttemptSpan ends an attempt's span, whose line is the attempt's own
// outcome line (observe: outcome, class, status, latency_ms, beside its
// ids): with X-Ray on, its segment carries its delivery, number, outcome,
// class and status.
func endAttemptSpan(span *trace.Span, msg message.Message, attempt int, r sender.Result) {
	span.EndSegment(slog.String("delivery_id", msg.DeliveryID), slog.Int("attempt", attempt),
		slog.String("outcome", r.Outcome.String()), slog.String("class", string(Classify(r))), slog.Int("status", r.Status))
}

// record is the attempt as the store logs it.
func (at *attempt) record() domain.Attempt {
	res := at.in.Result
	if res == nil {
		return domain.Attempt{Number: at.in.Attempt, At: at.in.Started, Error: "not_attempted"}
	}
	return domain.Attempt{Number: at.in.Attempt, At: at.in.Started, Status: res.Status, Error: res.Error, LatencyMS: res.Latency.Milliseconds(), Excerpt: res.Excerpt}
}
