package deliver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/store"
)

// apply performs what dec names for the attempt: the store's writes, the
// message's visibility or its DLQ send, the metrics and the log line. It
// reports whether the message is done with (true: delete it) or must come
// back (false).
func (h *Handler) apply(ctx context.Context, at *attempt, dec Decision) bool {
	if at.in.Result != nil {
		h.observe(at)
	}
	// The endpoint's failure count: kept with the batch's other attempts
	// to the endpoint, in one write once the last of them is counted
	// (batchHealth).
	switch {
	case dec.CountFailure:
		at.health.failed(at, at.probe, at.in.Result != nil && at.in.Result.Outcome != sender.Dead)
	case at.in.Result != nil && at.in.Result.Outcome == sender.Delivered:
		at.health.succeeded(at, dec.ResetFailures)
	}
	at.counted()
	h.disableEndpoint(ctx, at, dec)
	if dec.Kind == Defer {
		return h.deferMessage(ctx, at, dec.Wait)
	}
	if isResend(at.in) && dec.Kind != Send {
		return h.applyResend(ctx, at, dec)
	}
	switch dec.Kind {
	case Delivered:
		return h.recordDelivered(ctx, at)
	case Retry:
		return h.retryLater(ctx, at, dec.Delay)
	case Dead:
		return h.deadLetter(ctx, at, dec.Reason)
	case DeadUnrecorded:
		return h.toDLQ(ctx, at, "", dec.Reason)
	case Dropped:
		at.log.InfoContext(ctx, "tenant being erased; message dropped")
		return true
	case Duplicate:
		at.log.InfoContext(ctx, "already delivered; duplicate message dropped")
		return true
	case Cancelled:
		at.log.InfoContext(ctx, "delivery cancelled; message dropped unsent")
		return true
	case ReturnUntried:
		// Too close to the invocation's deadline to attempt and record it:
		// back to the queue at once, untried (it costs one receive).
		at.log.WarnContext(ctx, "no time left in this invocation; message returned untried")
		h.setVisibility(ctx, at.log, at.m, 0)
		return false
	default:
		return false
	}
}

// applyResend performs dec for an attempt of a resend of a delivered
// delivery: the attempt is logged as the resend's, the delivery stays
// delivered. A retry hides the message as for any delivery; a resend that
// is given up on (dead, exhausted) is dropped, logged, and not
// dead-lettered: the delivery it repeats was delivered.
func (h *Handler) applyResend(ctx context.Context, at *attempt, dec Decision) bool {
	if dec.Kind == ReturnUntried {
		h.setVisibility(ctx, at.log, at.m, 0)
		return false
	}
	if err := h.Store.RecordResendAttempt(ctx, at.in.Delivery, at.record()); err != nil {
		at.log.ErrorContext(ctx, "cannot log the resend's attempt", "record_error", err.Error())
	}
	switch dec.Kind {
	case Delivered:
		at.log.InfoContext(ctx, "resend delivered")
		return true
	case Retry:
		at.mb.Put(metrics.RetryScheduled, 1, nil)
		at.log.InfoContext(ctx, "resend retry scheduled", "delay_s", int(dec.Delay.Seconds()))
		return h.waitOut(ctx, at, dec.Delay)
	default:
		at.log.WarnContext(ctx, "resend given up; the delivery stays delivered", "reason", string(dec.Reason))
		return true
	}
}

// observe puts a sent attempt's metrics, counts it for its endpoint and
// adds its result to the attempt's log lines.
func (h *Handler) observe(at *attempt) {
	res := at.in.Result
	at.stats.add(at.in.Message.TenantID, at.in.Message.EndpointID, at.in.Message.EventType, at.in.Started, *res)
	if at.in.Endpoint.FailureRateAlert != nil {
		at.stats.watch(attemptRef(at), at.in.Endpoint)
	}
	at.mb.Put(metrics.AttemptLatency, float64(res.Latency.Microseconds())/1000, nil)
	if res.Outcome == sender.Delivered {
		at.mb.Put(metrics.Delivered, 1, nil)
	} else {
		at.mb.Put(metrics.AttemptFailed, 1, nil)
	}
	if res.Error != "" {
		at.log = at.log.With("error", res.Error) // none on a 2xx: not printed empty on every delivery
	}
	// One With for the result and the span's ids: the line that follows
	// stands for the attempt's span (trace.Span.LineFields).
	fields := append(at.span.LineFields(), "outcome", res.Outcome.String(), "class", string(Classify(*res)), "status", res.Status, "latency_ms", res.Latency.Milliseconds())
	at.log = at.log.With(fields...)
}

// endpointGone is the line of an attempt whose endpoint was deleted while
// it was out: there is no health left to keep, which is no error.
const endpointGone = "endpoint deleted meanwhile; its health not kept"

// disableEndpoint disables the endpoint when the decision says so (its
// answer asked for it: 410 Gone), raising endpoint.disabled once.
func (h *Handler) disableEndpoint(ctx context.Context, at *attempt, dec Decision) {
	if dec.DisableEndpoint == "" {
		return
	}
	msg := at.in.Message
	// Written to: the instance's next batch reads it again.
	defer h.cache.forget(store.EndpointRef{TenantID: msg.TenantID, EndpointID: msg.EndpointID})
	disabled, err := h.Store.DisableEndpoint(ctx, msg.TenantID, msg.EndpointID, dec.DisableEndpoint)
	if errors.Is(err, store.ErrNotFound) {
		at.log.InfoContext(ctx, endpointGone)
	} else if err != nil {
		at.log.ErrorContext(ctx, "cannot disable endpoint", "disable_error", err.Error())
	} else if disabled {
		h.raiseEndpoint(ctx, at, domain.OpEndpointDisabled, opevent.Episode(at.in.Started), dec.DisableEndpoint, at.in.Endpoint.ConsecutiveFailures+1)
	}
}

// batchHealth keeps a batch's failure-count writes to one per endpoint
// (issue 37): the batch's successes and failures to an endpoint are
// written together, in one write (store.RecordEndpointHealth), as soon as
// the last of its attempts in the batch is counted, so that neither a
// slow request to another endpoint nor the batch's end holds its
// recovery. A success resets the count when the endpoint's copy shows
// failures; the failures after the batch's last success are counted, from
// zero when it reset (a clean endpoint's failures followed by a success
// write nothing). Safe for the batch's concurrent attempts.
type batchHealth struct {
	mu sync.Mutex
	// pending counts each endpoint's attempts not counted yet.
	pending   map[store.EndpointRef]int
	endpoints map[store.EndpointRef]*endpointHealth
	write     func(*endpointHealth)
	writes    sync.WaitGroup
}

// endpointHealth is what a batch's attempts to one endpoint did to its
// failure count: reset by a success (resetBy, the last), then n failures,
// one of them the breaker's probe or retryable, the last of them at.
type endpointHealth struct {
	ref              store.EndpointRef
	reset            bool
	resetBy          *attempt
	n                int
	probe, retryable bool
	at               *attempt
}

// newBatchHealth keeps the health of the endpoints refs names, one entry
// per attempt, and writes each with write once its attempts are counted.
func newBatchHealth(refs []store.EndpointRef, write func(*endpointHealth)) *batchHealth {
	b := &batchHealth{pending: map[store.EndpointRef]int{}, endpoints: map[store.EndpointRef]*endpointHealth{}, write: write}
	for _, ref := range refs {
		b.pending[ref]++
	}
	return b
}

// entry is ref's health in the batch, made on first use; b.mu is held.
func (b *batchHealth) entry(ref store.EndpointRef) *endpointHealth {
	e := b.endpoints[ref]
	if e == nil {
		e = &endpointHealth{ref: ref}
		b.endpoints[ref] = e
	}
	return e
}

// succeeded notes a successful attempt at: the batch's failures before it
// are no longer consecutive, and it resets the count when the endpoint's
// copy showed failures (resetWanted: the batch's attempts share the copy).
func (b *batchHealth) succeeded(at *attempt, resetWanted bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(attemptRef(at))
	e.n, e.probe, e.retryable, e.at = 0, false, false, nil
	if resetWanted {
		e.reset, e.resetBy = true, at
	}
}

// failed adds failed attempt at (the breaker's probe, retryable) to its
// endpoint's failures.
func (b *batchHealth) failed(at *attempt, probe, retryable bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(attemptRef(at))
	e.n++
	e.probe, e.retryable, e.at = e.probe || probe, e.retryable || retryable, at
}

// done counts one of ref's attempts; after its last, the endpoint's health
// is written, if the batch moved it.
func (b *batchHealth) done(ref store.EndpointRef) {
	b.mu.Lock()
	b.pending[ref]--
	var e *endpointHealth
	if b.pending[ref] == 0 {
		if e = b.endpoints[ref]; e != nil && !e.reset && e.n == 0 {
			e = nil
		}
	}
	if e != nil {
		b.writes.Add(1)
	}
	b.mu.Unlock()
	if e != nil {
		go func() {
			defer b.writes.Done()
			b.write(e)
		}()
	}
}

// wait waits for the health writes the batch began.
func (b *batchHealth) wait() { b.writes.Wait() }

// attemptRef is the endpoint of an attempt's message.
func attemptRef(at *attempt) store.EndpointRef {
	return store.EndpointRef{TenantID: at.in.Message.TenantID, EndpointID: at.in.Message.EndpointID}
}

// resetFailures is what a reset leaves of an endpoint.
func resetFailures(e *domain.Endpoint) {
	e.ConsecutiveFailures, e.FailingSince, e.FailuresSince, e.BreakerUntil, e.BreakerTrips = 0, nil, nil, nil, 0
}

// keepWritten keeps the instance's copy of an endpoint the handler has
// just written to: patched with what the write left (patch), when known
// is true and a copy is kept, so that the next batch needs no read (issue
// 37: a read per batch after a failure or a recovery); else forgotten, so
// that the next batch reads it strongly consistent. A patched copy keeps
// its read's time: it is never kept longer than the copy it was.
func (h *Handler) keepWritten(ref store.EndpointRef, known bool, patch func(*domain.Endpoint)) {
	if known && h.cache.patch(ref, patch) {
		return
	}
	h.cache.forget(ref)
}

// writeHealth writes a batch's health of one endpoint e: the store marks
// it failing at FailingAfter (default 10), opening its circuit breaker for
// a retryable failure (again, for longer, for a failed probe), and
// disables it at DisableAfter (default 50; negative never) once the run
// has lasted DisableAfterFor (default 5 days); a reset that cleared the
// failing mark is a recovery. Each transition the store reports raises
// its operational event.
func (h *Handler) writeHealth(ctx context.Context, e *endpointHealth) {
	at := e.at
	if at == nil {
		at = e.resetBy
	}
	th := store.HealthThresholds{
		// Negative (never) is 0 to the store.
		FailingAfter: max(h.cfg.FailingAfter, 0), DisableAfter: max(h.cfg.DisableAfter, 0),
		DisableAfterFor: h.cfg.DisableAfterFor, Breaker: h.cfg.Breaker,
		Probe: e.probe, Retryable: e.retryable,
	}
	fx, err := h.Store.RecordEndpointHealth(ctx, e.ref.TenantID, e.ref.EndpointID, e.reset, e.n, th)
	// The instance's copy is the write's result when it moved nothing but
	// the count (a reset's result is known whatever it cleared); else it
	// is read again.
	h.keepWritten(e.ref, err == nil && !fx.Moved(), func(ep *domain.Endpoint) {
		if e.reset {
			resetFailures(ep)
		}
		ep.ConsecutiveFailures = fx.Failures
		if e.n > 0 && ep.FailuresSince == nil {
			t := h.cfg.Now().UTC()
			ep.FailuresSince = &t
		}
	})
	if errors.Is(err, store.ErrNotFound) {
		at.log.InfoContext(ctx, endpointGone)
		return
	}
	if err != nil {
		at.log.ErrorContext(ctx, "cannot keep endpoint health", "health_error", err.Error())
		return
	}
	if fx.Recovered != nil {
		h.raiseEndpoint(ctx, e.resetBy, domain.OpEndpointRecovered, opevent.Episode(*fx.Recovered), "", 0)
	}
	switch {
	case fx.Failing && fx.BreakerUntil != nil:
		at.log.WarnContext(ctx, "endpoint failing; circuit breaker open", "failures", fx.Failures, "probe_at", fx.BreakerUntil.Format(time.RFC3339))
	case fx.Failing:
		at.log.WarnContext(ctx, "endpoint failing", "failures", fx.Failures)
	case fx.BreakerUntil != nil:
		at.log.WarnContext(ctx, "circuit breaker open", "failures", fx.Failures, "probe_at", fx.BreakerUntil.Format(time.RFC3339))
	}
	if fx.Failing {
		h.raiseEndpoint(ctx, at, domain.OpEndpointFailing, opevent.Episode(fx.FailingSince), "", fx.Failures)
	}
	if fx.Disabled {
		at.log.WarnContext(ctx, "endpoint disabled after consecutive failures", "threshold", th.DisableAfter)
		h.raiseEndpoint(ctx, at, domain.OpEndpointDisabled, opevent.Episode(fx.DisabledAt), domain.DisabledConsecutiveFailures, fx.Failures)
	}
}

// recordDelivered records the delivery delivered. The receiver has it;
// sending again would only duplicate it, so the message goes either way.
// A delivery that had no record (its first attempt, the common case) is
// recorded with the batch's others, in one call (firstAttempts,
// FirstAttemptsWait); another now, tried a few times: before a last
// attempt it already says dead, and left so it would keep a delivered
// webhook listed (and replayable) as dead.
func (h *Handler) recordDelivered(ctx context.Context, at *attempt) bool {
	a := at.record()
	if at.in.Delivery.State == "" {
		at.firsts.add(at, a)
	} else {
		h.recordDeliveredNow(ctx, at.log, at.in.Delivery, a)
	}
	// Its span is a row of the batch's line (at INFO whatever the level);
	// the attempt's own line is at DEBUG.
	msg := at.in.Message
	at.spans.Add(at.span, at.in.Result.Latency, slog.String("delivery_id", msg.DeliveryID), slog.String("tenant_id", msg.TenantID),
		slog.String("endpoint_id", msg.EndpointID), slog.Int("attempt", at.in.Attempt), slog.Int("status", at.in.Result.Status))
	at.log.DebugContext(ctx, "delivered")
	return true
}

// recordDeliveredNow records d delivered by attempt a, trying a few times.
func (h *Handler) recordDeliveredNow(ctx context.Context, log *slog.Logger, d domain.Delivery, a domain.Attempt) {
	err := h.record(ctx, d, a, domain.Outcome{State: domain.StateDelivered})
	for try := 1; err != nil && try < 3 && ctx.Err() == nil; try++ {
		time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		err = h.record(ctx, d, a, domain.Outcome{State: domain.StateDelivered})
	}
	if err != nil {
		log.ErrorContext(ctx, "delivered, but the record could not be updated", "record_error", err.Error())
	}
}

// FirstAttemptsWait is how long a delivery delivered at its first attempt
// waits for the batch's others before their records are written together:
// the batch's end, or FirstAttemptsWait after the first of them, whichever
// is sooner (then again for those after). A clean batch's attempts end
// within it, one write for the batch; a batch beside a slow or hanging
// request does not hold the others' records (the delivery log, GET
// /v1/deliveries) for that request's timeout.
const FirstAttemptsWait = 250 * time.Millisecond

// firstAttempts are a batch's deliveries delivered at their first attempt
// whose records are not written yet, and the loggers of their attempts.
type firstAttempts struct {
	write func([]store.FirstAttempt, []*slog.Logger)
	wait  time.Duration

	mu      sync.Mutex
	pending []store.FirstAttempt
	logs    []*slog.Logger
	timer   *time.Timer
	closed  bool // the batch's end: no timer writes after it
	writing sync.WaitGroup
}

// add holds at's record (attempt a) for the next write, which it
// schedules FirstAttemptsWait from now when none is.
func (f *firstAttempts) add(at *attempt, a domain.Attempt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, store.FirstAttempt{Delivery: at.in.Delivery, Attempt: a})
	f.logs = append(f.logs, at.log)
	if f.timer == nil && f.wait > 0 && !f.closed {
		f.timer = time.AfterFunc(f.wait, func() { f.flush(false) })
	}
}

// flush writes what is held; a timer's flush after close does nothing
// (close wrote it).
func (f *firstAttempts) flush(closing bool) {
	f.mu.Lock()
	if f.closed && !closing {
		f.mu.Unlock()
		return
	}
	firsts, logs := f.pending, f.logs
	f.pending, f.logs, f.timer = nil, nil, nil
	f.writing.Add(1)
	f.mu.Unlock()
	defer f.writing.Done()
	if len(firsts) > 0 {
		f.write(firsts, logs)
	}
}

// close writes what is held, and waits for every write under way: the
// batch's end, before its messages are deleted.
func (f *firstAttempts) close() {
	f.mu.Lock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
	f.flush(true)
	f.writing.Wait()
}

// recordFirstAttempts writes the records of deliveries delivered at their
// first attempt in one call (store.RecordFirstAttempts, 25 a request), and
// records one at a time, as any other, those it could not write.
func (h *Handler) recordFirstAttempts(ctx context.Context, firsts []store.FirstAttempt, logs []*slog.Logger) {
	left, err := h.Store.RecordFirstAttempts(ctx, firsts)
	if err != nil {
		h.Log.WarnContext(ctx, "cannot record the batch's first attempts at once; recording each", "records", len(left), "error", err.Error())
	}
	for _, i := range left {
		h.recordDeliveredNow(ctx, logs[i], firsts[i].Delivery, firsts[i].Attempt)
	}
}

// retryLater records the attempt, the delivery still pending, and hides the
// message for delay.
func (h *Handler) retryLater(ctx context.Context, at *attempt, delay time.Duration) bool {
	if err := h.record(ctx, at.in.Delivery, at.record(), domain.Outcome{State: domain.StatePending}); err != nil {
		at.log.ErrorContext(ctx, "cannot record attempt", "record_error", err.Error())
	}
	at.mb.Put(metrics.RetryScheduled, 1, nil)
	at.log.InfoContext(ctx, "retry scheduled", "delay_s", int(delay.Seconds()))
	return h.waitOut(ctx, at, delay)
}

// waitOut makes the message come back after delay, the attempt made: up to
// HopAfter (2 s) it hides in its own visibility (and reports false: keep
// it); beyond, it is sent again as a new message carrying the attempts
// made and its due time (message.Message.NotBefore), delayed by delay (at
// most MaxDeferDelay: a longer one hops again, Defer, WaitBackoff, each
// return before the due time spending no attempt), in its tenant's wait
// group (message.WaitGroupID), and reports true (delete this one). So a
// wait never counts in the queue's in-flight messages (SQS's ~120,000 per
// standard queue, past which nothing is received, for every tenant): only
// the messages being worked do. The new message is sent at the batch's end
// before this one is deleted (the event source mapping deletes it after
// the handler returns): a crash between the two leaves both, a duplicate
// that the delivery id (the idempotency key) absorbs. A message that
// cannot be sent again hides in its visibility, as before.
func (h *Handler) waitOut(ctx context.Context, at *attempt, delay time.Duration) bool {
	if delay <= h.cfg.HopAfter {
		h.setVisibility(ctx, at.log, at.m, delay)
		return false
	}
	msg := at.in.Message
	msg.Attempts = at.in.Attempt
	due := h.cfg.Now().Add(delay).UTC().Truncate(time.Second)
	msg.NotBefore = &due
	if h.sendAgainOr(ctx, at, msg, min(delay, MaxDeferDelay), WaitBackoff, delay) {
		return true
	}
	h.setVisibility(ctx, at.log, at.m, delay)
	return false
}

// deadLetter marks the delivery dead and parks its message in the DLQ. It
// reports false (keep the message) if either fails, so nothing is lost.
func (h *Handler) deadLetter(ctx context.Context, at *attempt, reason domain.DeadReason) bool {
	d := at.in.Delivery
	if err := h.record(ctx, d, at.record(), domain.Outcome{State: domain.StateDead, DeadReason: reason, Message: at.m.Body}); err != nil {
		at.log.ErrorContext(ctx, "cannot mark delivery dead; will retry", "record_error", err.Error())
		return false
	}
	if !h.toDLQ(ctx, at, d.TenantID, reason) {
		return false
	}
	h.noteDeath(ctx, at, reason)
	return true
}
