package enqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// deferredKind marks a deferred fan-out message's body.
const deferredKind = "hookline.deferred-fanout"

// deferred is a deferred fan-out message: one record's fan-out past its
// tenant's share of a stream invocation (Config.LaneAfter messages,
// Config.InlineWork of filter matching), sent to the fan-out queue
// (Config.FanOutQueueURL) and fanned out by HandleFanOut to the tenant
// lane: the event, and the endpoints it goes to after After in the
// tenant's order (by id; "": all of them).
type deferred struct {
	Kind  string       `json:"kind"`
	Event outbox.Event `json:"event"`
	After string       `json:"after"`
}

// deferFanOuts sends the deferred part of each of fanOuts that has one to
// the fan-out queue, one message a record, ten (and 256 KiB) a request. A
// failed request fails the invocation: the stream retries the batch, whose
// inline deliveries are not sent again once attempted (sent), and whose
// deferred fan-outs go again (HandleFanOut sends nothing twice that was
// attempted).
func (h *Handler) deferFanOuts(ctx context.Context, fanOuts []fanOut, inv *invocation) *failure {
	var entries []sqstypes.SendMessageBatchRequestEntry
	var from *fanOut
	flush := func(last *fanOut) *failure {
		if len(entries) == 0 {
			return nil
		}
		if err := message.SendBatch(ctx, h.Queue, h.cfg.FanOutQueueURL, entries); err != nil {
			return &failure{from.seq, last.seq, fmt.Errorf("send %d deferred fan-outs: %w", len(entries), err)}
		}
		inv.metrics.Put(metrics.FanOutsDeferred, float64(len(entries)), nil)
		entries, from = nil, nil
		return nil
	}
	var prev *fanOut
	for i := range fanOuts {
		f := &fanOuts[i]
		if f.deferAfter == nil {
			continue
		}
		ev := f.ev
		if f.span != nil {
			ev.TraceParent = f.span.TraceParent()
		}
		body, err := json.Marshal(deferred{Kind: deferredKind, Event: ev, After: *f.deferAfter})
		if err != nil {
			return &failure{f.seq, f.seq, fmt.Errorf("encode the deferred fan-out of %s: %w", ev.ID, err)}
		}
		e := sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body)), MessageGroupId: message.GroupID(ev.TenantID)}
		if !message.Fits(entries, e) {
			if fl := flush(prev); fl != nil {
				return fl
			}
		}
		if from == nil {
			from = f
		}
		entries, prev = append(entries, e), f
		h.Log.InfoContext(ctx, "fan-out past the tenant's share of the batch deferred", "tenant_id", ev.TenantID, "event_id", ev.ID, "after_endpoint_id", *f.deferAfter, "inline", len(f.targets))
	}
	return flush(prev)
}

// decodeDeferred reads a deferred fan-out message's body.
func decodeDeferred(body string) (deferred, error) {
	var d deferred
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		return d, fmt.Errorf("not a deferred fan-out: %w", err)
	}
	if d.Kind != deferredKind {
		return d, fmt.Errorf("not a deferred fan-out: kind %q", d.Kind)
	}
	if err := d.Event.Validate(); err != nil {
		return d, err
	}
	return d, nil
}

// HandleFanOut is the handler of the fan-out queue (Config.FanOutQueueURL):
// each message is one record's deferred fan-out, planned as the stream's
// records are (the tenant's endpoints read once an invocation, filters
// matched within the record's full budget, the deliveries already attempted
// left out) but without a share, and sent to the tenant lane. A message
// that cannot be read, or an invocation whose reads or sends fail, is
// reported failed: SQS gives it back, and after ten receives parks it on
// the fan-out queue's dead-letter queue (alarmed), never dropped.
func (h *Handler) HandleFanOut(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	h.setup()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	inv := &invocation{
		endpoints: map[string][]domain.Endpoint{},
		erased:    map[string]bool{},
		planned:   map[string]bool{},
		forwarded: map[string]bool{},
		metrics:   h.Metrics.Batch(),
		toLane:    true,
	}
	var fanOuts []fanOut
	var ids []string
	var taken []string // the message ids of fanOuts' records, in order
	fail := func(id string) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	for _, m := range ev.Records {
		f, err := h.planDeferred(ctx, inv, m)
		if err != nil {
			h.Log.ErrorContext(ctx, "deferred fan-out not planned; it comes back", "message_id", m.MessageId, "error", err.Error())
			fail(m.MessageId)
			continue
		}
		if len(f.targets) == 0 {
			continue
		}
		h.startSpan(inv, &f)
		fanOuts, taken = append(fanOuts, f), append(taken, m.MessageId)
		for _, ep := range f.targets {
			ids = append(ids, domain.DeliveryID(f.ev.ID, ep.EndpointID))
		}
	}
	var fl *failure
	if len(ids) > 0 {
		existing, err := h.Store.LoadWith(ctx, store.LoadOptions{Eventual: true}, ids, nil)
		if err != nil {
			fl = &failure{err: fmt.Errorf("read the deferred fan-outs' %d deliveries: %w", len(ids), err)}
		} else {
			fl = h.sendUnsent(ctx, fanOuts, existing, inv)
		}
	}
	inv.endSpans(ctx, fl == nil)
	if fl != nil {
		// Every planned one comes back; what was sent is not sent again
		// once attempted, and a delivery sent twice before its attempt is
		// attempted once more at most (the receiver's idempotency key).
		h.Log.ErrorContext(ctx, "deferred fan-outs not sent; they come back", "error", fl.err.Error())
		for _, id := range taken {
			fail(id)
		}
		return resp, nil
	}
	inv.metrics.Flush()
	return resp, nil
}

// planDeferred plans one deferred fan-out: the endpoints of the event's
// tenant after its cursor that the event goes to.
func (h *Handler) planDeferred(ctx context.Context, inv *invocation, m events.SQSMessage) (fanOut, error) {
	d, err := decodeDeferred(m.Body)
	if err != nil {
		return fanOut{}, err
	}
	f := fanOut{seq: m.MessageId, ev: d.Event}
	endpoints, erased, err := h.subscribers(ctx, inv, d.Event.TenantID)
	if err != nil {
		return f, err
	}
	if erased {
		h.Log.InfoContext(ctx, "deferred fan-out of a tenant being erased dropped", "tenant_id", d.Event.TenantID, "event_id", d.Event.ID)
		return f, nil
	}
	var rest []domain.Endpoint
	for _, ep := range targetsOf(d.Event, endpoints) {
		if ep.EndpointID > d.After {
			rest = append(rest, ep)
		}
	}
	if len(rest) == 0 {
		return f, nil
	}
	kept, _, _ := h.filtered(ctx, inv, d.Event, rest, nil)
	inv.keep(&f, kept)
	return f, nil
}
