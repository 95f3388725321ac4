package enqueue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
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
		if !f.deferRest {
			continue
		}
		ev := f.ev
		if f.span != nil {
			ev.TraceParent = f.span.TraceParent()
		}
		body, err := json.Marshal(deferred{Kind: deferredKind, Event: ev, After: f.deferAfter})
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
		h.Log.InfoContext(ctx, "fan-out past the tenant's share of the batch deferred", "tenant_id", ev.TenantID, "event_id", ev.ID, "after_endpoint_id", f.deferAfter, "inline", len(f.targets))
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
	inv := h.newInvocation()
	inv.toLane = true
	var failed []events.SQSMessage
	defer func() { h.retrySoon(ctx, failed) }()
	var fanOuts []fanOut
	var ids []string
	var taken []events.SQSMessage // fanOuts' messages, in order
	for _, m := range ev.Records {
		f, err := h.planDeferred(ctx, inv, m)
		if err != nil {
			h.Log.ErrorContext(ctx, "deferred fan-out not planned; it comes back", "message_id", m.MessageId, "error", err.Error())
			failed = append(failed, m)
			continue
		}
		if len(f.targets) == 0 {
			continue
		}
		h.startSpan(inv, &f)
		fanOuts, taken = append(fanOuts, f), append(taken, m)
		for _, t := range f.targets {
			ids = append(ids, t.id)
		}
	}
	fl := h.sendDeferred(ctx, inv, fanOuts, ids)
	h.endSpans(inv, fl == nil)
	if fl != nil {
		// Every planned one comes back; what was sent is not sent again
		// once attempted, and a delivery sent twice before its attempt is
		// attempted once more at most (the receiver's idempotency key).
		h.Log.ErrorContext(ctx, "deferred fan-outs not sent; they come back", "error", fl.err.Error())
		failed = append(failed, taken...)
	} else {
		inv.metrics.Flush()
	}
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
	}
	return resp, nil
}

// sendDeferred reads which of the deliveries ids exist and sends the
// others' messages (to the lane: inv.toLane).
func (h *Handler) sendDeferred(ctx context.Context, inv *invocation, fanOuts []fanOut, ids []string) *failure {
	if len(ids) == 0 {
		return nil
	}
	existing, err := h.Store.LoadWith(ctx, store.LoadOptions{Eventual: true, Packed: true}, ids, nil)
	if err != nil {
		return &failure{err: fmt.Errorf("read the deferred fan-outs' %d deliveries: %w", len(ids), err)}
	}
	return h.sendUnsent(ctx, fanOuts, existing, inv)
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

// retrySoon hides the failed deferred fan-outs for a backoff of 2^(n-1)
// seconds, n their receive count, at most retryBackoffMax, instead of the
// fan-out queue's visibility timeout (a minute): a failed stream batch is
// retried within seconds by its mapping, and its deferred part should not
// wait longer than its inline part. A change that fails leaves the
// visibility timeout, logged.
func (h *Handler) retrySoon(ctx context.Context, msgs []events.SQSMessage) {
	if h.Visibility == nil || len(msgs) == 0 {
		return
	}
	for start := 0; start < len(msgs); start += 10 {
		var entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry
		for i, m := range msgs[start:min(len(msgs), start+10)] {
			n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
			backoff := min(time.Second<<min(max(n-1, 0), 6), retryBackoffMax)
			entries = append(entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: int32(backoff / time.Second),
			})
		}
		out, err := h.Visibility.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(h.cfg.FanOutQueueURL), Entries: entries})
		if err == nil && len(out.Failed) > 0 {
			err = fmt.Errorf("%d refused, first %s: %s", len(out.Failed), aws.ToString(out.Failed[0].Code), aws.ToString(out.Failed[0].Message))
		}
		if err != nil {
			h.Log.WarnContext(ctx, "cannot shorten the failed deferred fan-outs' wait; they come back after the queue's visibility timeout", "error", err.Error())
		}
	}
}

// retryBackoffMax bounds retrySoon's backoff: 60 s, enqueue's timeout.
const retryBackoffMax = 60 * time.Second
