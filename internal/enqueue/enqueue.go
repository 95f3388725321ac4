package enqueue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/payloadschema"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
)

// Store is what enqueue needs of the state table: one interface composed
// of the small ports below, each declared here; a *store.Store in
// production (the wiring passes it once), on a fake table in the tests
// (storefake).
type Store interface {
	Subscribers
	Existing
	Rejections
}

var _ Store = (*store.Store)(nil)

// Subscribers are a tenant and its endpoints, to fan an event out to;
// TenantEndpoints also says whether the tenant is being erased.
type Subscribers interface {
	Tenant(ctx context.Context, id string) (domain.Tenant, error)
	TenantEndpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, bool, error)
}

// Existing reads which of the deliveries exist; enqueue reads them
// eventually consistent.
type Existing interface {
	LoadWith(ctx context.Context, opts store.LoadOptions, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
}

// Rejections records the outbox items that cannot be delivered.
type Rejections interface {
	PutRejection(ctx context.Context, r domain.Rejection) error
}

// MessageLog lists events in the message log's pages (a
// *messagelog.Pages).
type MessageLog interface {
	Write(ctx context.Context, entries []messagelog.Entry) error
}

var _ MessageLog = (*messagelog.Pages)(nil)

// Schemas validates a payload against its type's schema in the stack's
// event-type catalog (a *payloadschema.Validator): the type's mode, and
// the mismatch when the mode is warn or reject and the payload does not
// validate.
type Schemas interface {
	Validate(eventType string, payload []byte) (eventtypes.Validation, *payloadschema.Mismatch, error)
}

var _ Schemas = (*payloadschema.Validator)(nil)

// Sender sends messages to the delivery queue.
type Sender interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ Sender = (*sqs.Client)(nil)

// Visibility changes the visibility of received messages.
type Visibility interface {
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

var _ Visibility = (*sqs.Client)(nil)

// Handler processes outbox stream batches: its ports, its Config and its
// observability.
type Handler struct {
	Store Store
	// Queue is the delivery queue's client (and the park queue's).
	Queue Sender
	// Visibility hides a deferred fan-out that failed for a short backoff
	// (HandleFanOut), so that it is tried again in seconds, not after the
	// fan-out queue's visibility timeout (a minute). Nil: it comes back
	// after the visibility timeout.
	Visibility Visibility
	// Bus receives the batch's operational events (domain.IsOperational),
	// put on the bus named Config.BusName, for the operator. Nil: none are
	// put anywhere (the production wiring always sets it).
	Bus Bus
	// MessageLog lists each stream batch's events (those the outbox's
	// message log index does not: logEntry) in the message log's pages,
	// one write per batch, beside the batch's sends. Nil: none (the
	// message log is off).
	MessageLog MessageLog
	// Schemas is the event-type catalog: a payload of a type whose
	// validation is reject and that does not validate is rejected
	// (schema_mismatch), of one whose validation is warn delivered and
	// counted (SchemaMismatches). Nil: no payload is validated.
	Schemas Schemas
	// Config is applied once (WithDefaults), at the first Handle.
	Config Config
	Log    *slog.Logger
	// Metrics receives RejectedOutboxItems and OperatorEventsParked (EMF),
	// one document per invocation. Nil: none.
	Metrics *metrics.Writer
	// Tracer emits each event's fan-out span ("enqueue.fanout"), whose
	// context its delivery messages carry. Nil: the messages still carry
	// a trace context, no span is emitted.
	Tracer *trace.Tracer

	once sync.Once
	cfg  Config // Config.WithDefaults(), set by setup
}

// setup applies the Config, once.
func (h *Handler) setup() {
	h.once.Do(func() { h.cfg = h.Config.WithDefaults() })
}

// invocation is the state of one Handle call: the endpoints of each tenant
// seen in the batch (read once per batch, not once per record), the
// deliveries planned so far, and its metrics, printed once at its end.
type invocation struct {
	endpoints map[string][]domain.Endpoint
	erased    map[string]bool // the batch's tenants being erased
	planned   map[string]bool
	metrics   *metrics.Batch
	// forwards are the operational events for the operator's bus, once
	// each (forwarded holds their ids).
	forwards  []forward
	forwarded map[string]bool
	// spans are the fan-out spans started, ended with the invocation.
	spans []*fanOut
	// deferring: a tenant's fan-out past its share goes to the fan-out
	// queue (the stream's invocations with Config.FanOutQueueURL set);
	// shares are the tenants' inline messages and filter work so far.
	deferring bool
	shares    map[string]*[2]int
	// toLane: every message goes to the tenant lane (the deferred
	// fan-out's invocations).
	toLane bool
	// logged are the stream batch's events for the message log's pages.
	logged []messagelog.Entry
}

// byID orders endpoints by id, the deferred fan-out's cursor.
func byID(a, b domain.Endpoint) int { return strings.Compare(a.EndpointID, b.EndpointID) }

// newInvocation is an invocation's empty state: a stream batch's (Handle)
// or a fan-out queue batch's (HandleFanOut).
func (h *Handler) newInvocation() *invocation {
	return &invocation{
		endpoints: map[string][]domain.Endpoint{},
		erased:    map[string]bool{},
		planned:   map[string]bool{},
		forwarded: map[string]bool{},
		metrics:   h.Metrics.Batch(),
	}
}

// share is ev's tenant's share of the invocation, to plan ev's fan-out
// within; nil (all of it inline) unless deferring.
func (inv *invocation) share(cfg Config, ev outbox.Event, deferring bool) *share {
	if !deferring || domain.IsOperational(ev.Type) {
		return nil
	}
	if inv.shares == nil {
		inv.shares = map[string]*[2]int{}
	}
	c := inv.shares[ev.TenantID]
	if c == nil {
		c = &[2]int{}
		inv.shares[ev.TenantID] = c
	}
	return &share{messages: &c[0], work: &c[1], maxMessages: cfg.LaneAfter, maxWork: cfg.InlineWork}
}

// fanOut is one event's deliveries: a stream record and the endpoints it
// goes to, not yet checked against the deliveries that exist.
type fanOut struct {
	seq     string
	ev      outbox.Event
	targets []target
	// deferRest says the rest of its fan-out is deferred: the endpoints (in
	// the tenant's order, by id) after deferAfter ("": all of them) go out
	// through the fan-out queue (deferFanOuts).
	deferRest  bool
	deferAfter string
	// span is the event's fan-out span, the parent of its attempts.
	span *trace.Span
}

// target is an endpoint a fan-out sends to, and the id of that delivery
// (domain.DeliveryID), named once when it is planned.
type target struct {
	ep domain.Endpoint
	id string
}

// startSpan starts f's fan-out span in the producer's trace, or in the
// one derived from the event when it gave none (trace.Derive).
func (h *Handler) startSpan(inv *invocation, f *fanOut) {
	parent := trace.Or(f.ev.TraceParent, trace.Derive(trace.EventKey(f.ev.TenantID, f.ev.ID), f.ev.OccurredAt))
	f.span = h.Tracer.Start(parent, "enqueue.fanout")
	inv.spans = append(inv.spans, f)
}

// endSpans ends the invocation's fan-out spans, saying whether their
// messages were sent (ok) or the stream retries the batch: one line for
// them all (trace.Rows; its columns tenant_id, event_id, deliveries,
// sent), not one each.
func (h *Handler) endSpans(inv *invocation, ok bool) {
	rows := h.Tracer.Rows("enqueue.fanout")
	for _, f := range inv.spans {
		attrs := []slog.Attr{slog.String("tenant_id", f.ev.TenantID), slog.String("event_id", f.ev.ID),
			slog.Int("deliveries", len(f.targets)), slog.Bool("sent", ok)}
		rows.Add(f.span, f.span.Elapsed(), attrs...)
		f.span.EndSegment(attrs...)
	}
	rows.Flush()
}

// Handle processes a stream batch in three passes. First, in order, it
// decodes each record, records the malformed ones as rejected and finds
// each event's endpoints. Then it reads which of the batch's deliveries
// exist (one eventually consistent batch read per hundred): a delivery
// exists once its first attempt is recorded. Last, it sends the messages of
// those that do not, across records, in as few SendMessageBatch requests as
// SQS's limits allow (ten messages, 256 KiB), the requests formed in stream
// order (records, then each record's endpoints) and Config.SendConcurrency
// of them in flight at once.
// It writes no delivery record: deliver's first attempt creates it.
//
// Any failure for an infrastructure reason (DynamoDB or SQS unavailable)
// fails the invocation, so the event source mapping retries the batch,
// bisecting it on AWS; nothing after the failure is skipped. The retry sends
// nothing whose delivery it reads as existing, and again every message
// whose delivery it does not: those the failed run sent that deliver has
// not attempted yet (or whose first attempt is too recent for the
// eventually consistent read to see, usually under a second). They go out
// with the same delivery id, the webhook-id that receivers deduplicate on,
// and deliver drops a message whose delivery is already delivered; a
// receiver can still get the same delivery twice. Duplicates are possible,
// loss is not: at least once. This is deliberately an error and not a batch
// item failure: a local cloud that ignores batchItemFailures would move
// past the failed record, while every event source mapping retries a
// failed invocation. A malformed record never gets here: it is recorded as
// rejected. The slice is never nil.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	h.setup()
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	inv := h.newInvocation()
	inv.deferring = h.cfg.FanOutQueueURL != ""
	f := h.enqueue(ctx, ev, inv)
	h.endSpans(inv, f == nil)
	if f != nil {
		h.Log.ErrorContext(ctx, "enqueue failed; the stream will retry the batch",
			"sequence_number", f.first, "last_sequence_number", f.last, "error", f.err.Error())
		return resp, f.error()
	}
	// Metrics only of an invocation that succeeds: a failed one is retried
	// whole, and would count its rejections again.
	inv.metrics.Flush()
	return resp, nil
}

// failure is why an invocation failed, and the records (by sequence number)
// it failed at.
type failure struct {
	first, last string
	err         error
}

func (f *failure) error() error {
	if f.first == f.last {
		return fmt.Errorf("record %s: %w", f.first, f.err)
	}
	return fmt.Errorf("records %s to %s: %w", f.first, f.last, f.err)
}

// enqueue runs Handle's three passes: plan each record, read which of the
// deliveries exist, send the others. Between the first and the second, the
// batch's operational events go to the operator's bus (forwardAll).
func (h *Handler) enqueue(ctx context.Context, ev events.DynamoDBEvent, inv *invocation) (f *failure) {
	var fanOuts []fanOut
	var ids []string
	for _, rec := range ev.Records {
		f, err := h.plan(ctx, rec, inv)
		if err != nil {
			return &failure{rec.Change.SequenceNumber, rec.Change.SequenceNumber, err}
		}
		if len(f.targets) > 0 || f.deferRest {
			h.startSpan(inv, &f)
			fanOuts = append(fanOuts, f)
			for _, t := range f.targets {
				ids = append(ids, t.id)
			}
		}
	}
	if len(inv.logged) > 0 {
		// The pages go beside the rest: one more call, no more round trip.
		written := make(chan error, 1)
		go func() { written <- h.MessageLog.Write(ctx, inv.logged) }()
		defer func() {
			if err := <-written; err != nil && f == nil {
				f = &failure{ev.Records[0].Change.SequenceNumber, ev.Records[len(ev.Records)-1].Change.SequenceNumber, err}
			}
		}()
	}
	if f := h.forwardAll(ctx, inv); f != nil {
		return f
	}
	if len(ids) > 0 {
		existing, err := h.Store.LoadWith(ctx, store.LoadOptions{Eventual: true, Packed: true}, ids, nil)
		if err != nil {
			return &failure{fanOuts[0].seq, fanOuts[len(fanOuts)-1].seq, fmt.Errorf("read the batch's %d deliveries: %w", len(ids), err)}
		}
		if f := h.sendUnsent(ctx, fanOuts, existing, inv); f != nil {
			return f
		}
	}
	return h.deferFanOuts(ctx, fanOuts, inv)
}

// sendUnsent sends the messages of the deliveries that existing does not
// show sent, in as few requests as SQS's limits allow, formed in stream
// order, SendConcurrency of them in flight at once (sends). A request is
// started as soon as it is full, so an invocation holds at most
// SendConcurrency requests' messages besides the two being formed. A
// tenant's first LaneAfter messages of the invocation go to the delivery
// queue, the rest to the tenant lane (route).
func (h *Handler) sendUnsent(ctx context.Context, fanOuts []fanOut, existing store.Snapshot, inv *invocation) *failure {
	s := &sends{h: h, ctx: ctx, slots: make(chan struct{}, h.cfg.SendConcurrency)}
	queues := [2]batch{{queueURL: h.cfg.QueueURL}, {queueURL: h.cfg.LaneQueueURL}}
	perTenant := map[string]int{}
	for i := range fanOuts {
		f := &fanOuts[i]
		for _, t := range f.targets {
			if d, ok := existing.Deliveries[t.id]; ok && sent(d) {
				continue // attempted: sent by an earlier run of this record
			}
			o := outgoing{f: f, endpointID: t.ep.EndpointID, id: t.id, revision: t.ep.Revision}
			e, err := o.entry()
			if err != nil {
				return cmp.Or(s.wait(), &failure{f.seq, f.seq, err})
			}
			b := &queues[h.route(perTenant, f.ev.TenantID, inv.toLane)]
			if len(b.out) > 0 && !message.Fits(b.entries, e) {
				if !s.start(*b) {
					return s.wait()
				}
				*b = batch{queueURL: b.queueURL}
			}
			b.entries, b.out = append(b.entries, e), append(b.out, o)
		}
	}
	for _, b := range queues {
		if len(b.out) > 0 && !s.start(b) {
			break
		}
	}
	if f := s.wait(); f != nil {
		return f
	}
	for tenantID, n := range perTenant {
		laned := n - h.cfg.LaneAfter
		if inv.toLane {
			laned = n
		}
		if laned > 0 {
			inv.metrics.Put(metrics.Laned, float64(laned), nil)
			h.Log.InfoContext(ctx, "tenant's messages past its share of the invocation sent to the tenant lane", "tenant_id", tenantID, "laned", laned, "lane_after", h.cfg.LaneAfter)
		}
	}
	return nil
}

// route says which of sendUnsent's queues a message of tenantID goes to,
// counting it: 0, the delivery queue, for the tenant's first LaneAfter
// messages of the invocation; 1, the tenant lane, for the rest, so that a
// tenant whose events fan out wide (or a backlog to every endpoint it has)
// puts a stream batch's worth at the head of the delivery queue, not all
// of it ahead of every other tenant's deliveries. Without a lane, 0.
func (h *Handler) route(perTenant map[string]int, tenantID string, toLane bool) int {
	if h.cfg.LaneQueueURL == "" {
		return 0
	}
	perTenant[tenantID]++
	if !toLane && perTenant[tenantID] <= h.cfg.LaneAfter {
		return 0
	}
	return 1
}

// sends runs one invocation's SendMessageBatch requests, at most
// cap(slots) in flight at once, started in stream order. After a request
// fails no other is started (those in flight finish), and wait answers
// the failure of the failed request earliest in stream order: the records
// its error names; the invocation fails whole, so the stream retries every
// record of it. With one slot this is sending one request after the other,
// stopping at the first failure.
type sends struct {
	h      *Handler
	ctx    context.Context
	slots  chan struct{}
	wg     sync.WaitGroup
	failed atomic.Bool
	mu     sync.Mutex
	n      int      // requests started
	first  *failure // the earliest failed request's, at firstAt
	at     int
}

// start sends b once a slot is free, unless a request has failed: then it
// starts nothing and answers false.
func (s *sends) start(b batch) bool {
	s.slots <- struct{}{}
	if s.failed.Load() {
		<-s.slots
		return false
	}
	at := s.n
	s.n++
	s.wg.Add(1)
	go func() {
		defer func() { <-s.slots; s.wg.Done() }()
		if err := s.h.sendBatch(s.ctx, &b); err != nil {
			s.mu.Lock()
			if s.first == nil || at < s.at {
				s.first, s.at = &failure{b.out[0].f.seq, b.out[len(b.out)-1].f.seq, err}, at
			}
			s.mu.Unlock()
			s.failed.Store(true)
		}
	}()
	return true
}

// wait waits for the requests in flight and answers the earliest failure,
// or nil.
func (s *sends) wait() *failure {
	s.wg.Wait()
	return s.first
}

// plan decodes a record and finds the endpoints its event goes to, or
// records it as rejected. Endpoints already planned in this invocation (the
// same event twice in a batch) are left out.
func (h *Handler) plan(ctx context.Context, rec events.DynamoDBEventRecord, inv *invocation) (fanOut, error) {
	f := fanOut{seq: rec.Change.SequenceNumber}
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return f, nil // updates and TTL removals of outbox items are not events
	}
	ev, err := decodeImage(rec.Change.NewImage)
	var verr *outbox.ValidationError
	if errors.As(err, &verr) {
		return f, h.reject(ctx, inv, rec, ev, domain.RejectReason(verr.Reason), verr.Field, verr.Detail)
	}
	if err != nil {
		return f, err
	}
	if rejected, err := h.checkSchema(ctx, inv, rec, ev); rejected || err != nil {
		return f, err
	}
	f.ev = ev
	endpoints, erased, err := h.subscribers(ctx, inv, ev.TenantID)
	if err != nil {
		return f, err
	}
	if erased {
		// The tenant is being erased: its item is dropped, unrecorded and
		// unforwarded (the erasure deletes it from the outbox).
		h.Log.InfoContext(ctx, "outbox item of a tenant being erased dropped", "sequence_number", f.seq, "tenant_id", ev.TenantID)
		return fanOut{seq: f.seq}, nil
	}
	if h.MessageLog != nil {
		if e, ok := logEntry(ev, rec.Change.NewImage); ok {
			inv.logged = append(inv.logged, e)
		}
	}
	if h.Bus != nil && forwards(ev) {
		// Whatever its fan-out below (even none), the operator hears of it.
		if err := inv.forward(h.cfg.BusName, f.seq, ev); err != nil {
			return f, err
		}
	}
	targets := targetsOf(ev, endpoints)
	if ev.EndpointID == "" && len(targets) > 0 {
		// An event addressed to one endpoint goes there whatever its
		// subscriptions, its filter included.
		var filteredOut int
		if targets, filteredOut = h.inlineTargets(ctx, inv, &f, targets); filteredOut > 0 && len(targets) == 0 && !f.deferRest {
			return f, nil // subscribed, filtered out: not the producer's fault
		}
	}
	if domain.IsOperational(ev.Type) {
		// hookline's own: to whichever endpoints ask for it, and none is
		// nothing to do, not a producer's fault to record.
		inv.keep(&f, targets)
		return f, nil
	}
	if len(targets) == 0 && !f.deferRest {
		return f, h.rejectUnrouted(ctx, inv, rec, ev, len(endpoints) == 0)
	}
	inv.keep(&f, targets)
	return f, nil
}

// checkSchema validates ev's payload against its catalog type's schema
// (Schemas). A mismatch of a reject type is recorded as rejected, as a
// malformed item is, and answers true; of a warn type it is counted
// (SchemaMismatches, by type) and logged without the payload, and the
// event goes on. A schema that does not compile (only a hand-made catalog
// file has one) is logged, and the payload goes on unvalidated.
func (h *Handler) checkSchema(ctx context.Context, inv *invocation, rec events.DynamoDBEventRecord, ev outbox.Event) (bool, error) {
	if h.Schemas == nil {
		return false, nil
	}
	mode, m, err := h.Schemas.Validate(ev.Type, ev.Payload)
	if err != nil {
		h.Log.ErrorContext(ctx, "payload not validated", "tenant_id", ev.TenantID, "event_id", ev.ID, "error", err)
		return false, nil
	}
	if m == nil {
		return false, nil
	}
	if mode == eventtypes.ValidationReject {
		return true, h.reject(ctx, inv, rec, ev, domain.RejectSchemaMismatch, outbox.AttrPayload, m.Detail)
	}
	inv.metrics.Put(metrics.SchemaMismatches, 1, map[string]string{metrics.DimensionEventType: ev.Type})
	h.Log.WarnContext(ctx, "payload does not match its event type's schema, delivered (validation warn)", "tenant_id", ev.TenantID,
		"event_id", ev.ID, "event_type", ev.Type, "path", m.Path, "keyword", m.Keyword)
	return false, nil
}

// inlineTargets filters f's targets, planning inline only its tenant's
// share of the invocation when deferring: the rest, the endpoints after
// the last inline one by id, is f's deferAfter.
func (h *Handler) inlineTargets(ctx context.Context, inv *invocation, f *fanOut, targets []domain.Endpoint) ([]domain.Endpoint, int) {
	if inv.deferring && !slices.IsSortedFunc(targets, byID) {
		// The deferred part is the endpoints after a cursor, by id.
		targets = slices.SortedFunc(slices.Values(targets), byID)
	}
	// filtered keeps targets in place: what it keeps before index i lands
	// below i, so all[deferred-1] is still the endpoint it stopped after.
	all := targets
	kept, filteredOut, deferred := h.filtered(ctx, inv, f.ev, targets, inv.share(h.cfg, f.ev, inv.deferring))
	if deferred >= 0 {
		f.deferRest = true
		if deferred > 0 {
			f.deferAfter = all[deferred-1].EndpointID
		}
	}
	return kept, filteredOut
}

// rejectUnrouted records a producer's event that goes to no endpoint as
// rejected, saying why: its tenant does not exist (looked up only when the
// tenant has no endpoint at all, noEndpoints), it names an endpoint the
// tenant does not have, or no endpoint of the tenant subscribes to its type.
func (h *Handler) rejectUnrouted(ctx context.Context, inv *invocation, rec events.DynamoDBEventRecord, ev outbox.Event, noEndpoints bool) error {
	if noEndpoints {
		// Only on this rare path is the tenant itself looked up.
		if _, err := h.Store.Tenant(ctx, ev.TenantID); errors.Is(err, store.ErrNotFound) {
			return h.reject(ctx, inv, rec, ev, domain.RejectUnknownTenant, outbox.AttrTenantID, "no tenant "+strconv.Quote(ev.TenantID))
		} else if err != nil {
			return err
		}
	}
	if ev.EndpointID != "" {
		return h.reject(ctx, inv, rec, ev, domain.RejectUnknownEndpoint, outbox.AttrEndpointID, "the tenant has no endpoint "+strconv.Quote(ev.EndpointID))
	}
	return h.reject(ctx, inv, rec, ev, domain.RejectNoEndpoint, outbox.AttrTenantID, "no endpoint of the tenant subscribes to "+strconv.Quote(ev.Type))
}

// subscribers returns a tenant's endpoints, or erased when it is being
// erased, read once per tenant per batch: an endpoint created or changed
// while the batch runs applies from the next batch, a second later.
func (h *Handler) subscribers(ctx context.Context, inv *invocation, tenantID string) ([]domain.Endpoint, bool, error) {
	if endpoints, seen := inv.endpoints[tenantID]; seen {
		return endpoints, inv.erased[tenantID], nil
	}
	endpoints, erased, err := h.Store.TenantEndpoints(ctx, tenantID)
	if err != nil {
		return nil, false, err
	}
	inv.endpoints[tenantID], inv.erased[tenantID] = endpoints, erased
	return endpoints, erased, nil
}

// keep adds to f the targets not already planned in this invocation (the
// same event twice in a batch).
func (inv *invocation) keep(f *fanOut, targets []domain.Endpoint) {
	for _, ep := range targets {
		id := domain.DeliveryID(f.ev.TenantID, f.ev.ID, ep.EndpointID, f.ev.OccurredAt)
		if !inv.planned[id] {
			inv.planned[id] = true
			f.targets = append(f.targets, target{ep, id})
		}
	}
}

// targetsOf is the endpoints, of a tenant's, that event ev goes to: the one
// it names, or every one that subscribes to its type. An operational event
// goes only to the enabled endpoints that name its type
// (domain.Endpoint.SubscribesExplicitly): never to one with no filter, and
// never to a disabled one, which would park it dead (the endpoint it
// describes, say, which a delivery could not reach anyway).
func targetsOf(ev outbox.Event, endpoints []domain.Endpoint) []domain.Endpoint {
	var targets []domain.Endpoint
	if domain.IsOperational(ev.Type) {
		for _, ep := range endpoints {
			if !ep.Disabled && ep.SubscribesExplicitly(ev.Type) {
				targets = append(targets, ep)
			}
		}
		return targets
	}
	for _, ep := range endpoints {
		if ev.EndpointID != "" {
			if ep.EndpointID == ev.EndpointID {
				targets = append(targets, ep)
			}
			continue
		}
		// A disabled endpoint still gets its delivery: deliver parks it dead
		// (endpoint_disabled), listed in the tenant's DLQ and replayable once
		// the endpoint is enabled again, instead of the event missing it.
		if ep.Accepts(ev.Type) {
			targets = append(targets, ep)
		}
	}
	return targets
}

// sent reports whether a delivery that exists has had its message sent: a
// record is written by an attempt, so it has one (or is dead, or was
// replayed). Earlier versions wrote records in enqueue: one with
// enqueued_at was sent; one without it and never attempted was created
// before its message was sent, and its message may never have been.
func sent(d domain.Delivery) bool {
	return d.EnqueuedAt != nil || d.Attempts > 0 || d.State != domain.StatePending
}

// outgoing is a delivery whose message is to be sent.
type outgoing struct {
	f          *fanOut
	endpointID string
	id         string
	// revision is the endpoint's, as read (message.Message.EndpointRevision).
	revision int64
}

// entry encodes the delivery's message, in its tenant's message group
// (message.GroupID).
func (o outgoing) entry() (sqstypes.SendMessageBatchRequestEntry, error) {
	ev := &o.f.ev
	body, err := message.Encode(message.Message{
		DeliveryID: o.id, TenantID: ev.TenantID, EndpointID: o.endpointID, EventID: ev.ID,
		EventType: ev.Type, OccurredAt: ev.OccurredAt, Sequence: ev.Sequence, Payload: ev.Payload,
		EndpointRevision: o.revision, TraceParent: o.f.span.TraceParent(),
	})
	if err != nil {
		return sqstypes.SendMessageBatchRequestEntry{}, fmt.Errorf("encode delivery message %s: %w", o.id, err)
	}
	return sqstypes.SendMessageBatchRequestEntry{Id: aws.String(o.id), MessageBody: aws.String(string(body)), MessageGroupId: message.GroupID(ev.TenantID),
		MessageAttributes: message.TraceAttributes(o.f.span.TraceParent())}, nil
}

// batch is the messages of the next SendMessageBatch request, with their
// deliveries.
type batch struct {
	queueURL string
	entries  []sqstypes.SendMessageBatchRequestEntry
	out      []outgoing
}

// sendBatch sends one SendMessageBatch request, b's messages.
func (h *Handler) sendBatch(ctx context.Context, b *batch) error {
	if err := message.SendBatch(ctx, h.Queue, b.queueURL, b.entries); err != nil {
		return err
	}
	for _, o := range b.out {
		// DEBUG: deliver logs each attempt at INFO, with these ids.
		h.Log.DebugContext(ctx, "delivery sent", "tenant_id", o.f.ev.TenantID, "event_id", o.f.ev.ID, "endpoint_id", o.endpointID, "delivery_id", o.id)
	}
	return nil
}

func (h *Handler) reject(ctx context.Context, inv *invocation, rec events.DynamoDBEventRecord, ev outbox.Event, reason domain.RejectReason, field, detail string) error {
	// An id or tenant that is itself the problem cannot key the record.
	key, tenant := safeText(ev.ID), safeText(ev.TenantID)
	if key == "" {
		key = "seq:" + rec.Change.SequenceNumber
	}
	ev.TenantID = tenant
	h.Log.WarnContext(ctx, "outbox item rejected", "key", key, "tenant_id", tenant, "reason", reason, "field", field)
	inv.metrics.Put(metrics.RejectedItems, 1, map[string]string{metrics.DimensionReason: string(reason)})
	// Every field is bounded, so the record stays far below DynamoDB's 400 KB
	// item limit whatever the item held: ids of at most MaxIDBytes, a field
	// name of the contract, a detail of at most MaxDetailBytes.
	return h.Store.PutRejection(ctx, domain.Rejection{
		Key: key, EventID: safeText(ev.ID), TenantID: tenant, Reason: reason,
		Field: outbox.Truncate(field, outbox.MaxIDBytes), Detail: outbox.Truncate(detail, outbox.MaxDetailBytes),
	})
}

// safeText returns s if it can key a DynamoDB record and be shown as it is
// (bounded, valid UTF-8, no control or refused characters), else "".
func safeText(s string) string {
	if !outbox.ValidText(s) {
		return ""
	}
	return s
}
