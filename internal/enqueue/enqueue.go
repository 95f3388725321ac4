package enqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/delivery"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// Reasons an event is rejected besides the outbox.Reason* validation codes.
const (
	ReasonNoEndpoint      = "no_endpoint"
	ReasonUnknownTenant   = "unknown_tenant"
	ReasonUnknownEndpoint = "unknown_endpoint"
)

// Store is what enqueue needs of the state table.
type Store interface {
	Endpoints(ctx context.Context, tenantID string) ([]store.Endpoint, error)
	CreateDelivery(ctx context.Context, d store.Delivery) (send bool, err error)
	MarkEnqueued(ctx context.Context, id string) error
	PutRejection(ctx context.Context, r store.Rejection) error
	Tenant(ctx context.Context, id string) (store.Tenant, error)
}

// Sender sends messages to the delivery queue.
type Sender interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ Sender = (*sqs.Client)(nil)

// Handler processes outbox stream batches.
type Handler struct {
	Store    Store
	Queue    Sender
	QueueURL string
	Log      *slog.Logger
	// Metrics receives RejectedOutboxItems (EMF). Nil: none.
	Metrics *metrics.Writer
	// Fault, for the soak test only, may fail the invocation after part of
	// a record's messages were sent (package fault). Nil: never.
	Fault func(point string) error
}

// invocation is the state of one Handle call: the endpoints of each tenant
// seen in the batch (read once per batch, not once per record), and the
// soak fault drawn for it.
type invocation struct {
	endpoints     map[string][]store.Endpoint
	failAfterSend bool
}

// Handle processes a stream batch in order. A record that fails for an
// infrastructure reason (DynamoDB or SQS unavailable) fails the invocation,
// so the event source mapping retries the batch, bisecting it on AWS: the
// records before it are processed again as no-ops (their deliveries exist
// and are marked sent), so nothing is sent twice and nothing is skipped.
// This is deliberately an error and not a batch item failure: a local cloud
// that ignores batchItemFailures would move past the failed record, while
// every event source mapping retries a failed invocation. A malformed record
// never gets here: it is recorded as rejected. The slice is never nil.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	// The soak's fault, if any, is drawn once per invocation: it then fails
	// after the first record that sent messages.
	inv := &invocation{
		endpoints:     map[string][]store.Endpoint{},
		failAfterSend: h.Fault != nil && h.Fault(fault.EnqueueFail) != nil,
	}
	for _, rec := range ev.Records {
		if err := h.record(ctx, rec, inv); err != nil {
			h.Log.ErrorContext(ctx, "enqueue failed; the stream will retry the batch",
				"sequence_number", rec.Change.SequenceNumber, "error", err.Error())
			return resp, fmt.Errorf("record %s: %w", rec.Change.SequenceNumber, err)
		}
	}
	return resp, nil
}

func (h *Handler) record(ctx context.Context, rec events.DynamoDBEventRecord, inv *invocation) error {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return nil // updates and TTL removals of outbox items are not events
	}
	ev, err := decodeImage(rec.Change.NewImage)
	var verr *outbox.ValidationError
	if errors.As(err, &verr) {
		return h.reject(ctx, rec, ev, verr.Reason, verr.Field, verr.Detail)
	}
	if err != nil {
		return err
	}
	endpoints, seen := inv.endpoints[ev.TenantID]
	if !seen {
		// Read once per tenant per batch: an endpoint created or changed
		// while the batch runs applies from the next batch, a second later.
		if endpoints, err = h.Store.Endpoints(ctx, ev.TenantID); err != nil {
			return err
		}
		inv.endpoints[ev.TenantID] = endpoints
	}
	var targets []store.Endpoint
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
	if len(targets) == 0 && len(endpoints) == 0 {
		// Only on this rare path is the tenant itself looked up.
		if _, err := h.Store.Tenant(ctx, ev.TenantID); errors.Is(err, store.ErrNotFound) {
			return h.reject(ctx, rec, ev, ReasonUnknownTenant, outbox.AttrTenantID, "no tenant "+strconv.Quote(ev.TenantID))
		} else if err != nil {
			return err
		}
	}
	if len(targets) == 0 {
		if ev.EndpointID != "" {
			return h.reject(ctx, rec, ev, ReasonUnknownEndpoint, outbox.AttrEndpointID, "the tenant has no endpoint "+strconv.Quote(ev.EndpointID))
		}
		return h.reject(ctx, rec, ev, ReasonNoEndpoint, outbox.AttrTenantID, "no endpoint of the tenant subscribes to "+strconv.Quote(ev.Type))
	}
	return h.fanOut(ctx, ev, targets, inv)
}

// fanOut creates the deliveries and sends their messages, ten at a time.
func (h *Handler) fanOut(ctx context.Context, ev outbox.Event, targets []store.Endpoint, inv *invocation) error {
	var pending []sqstypes.SendMessageBatchRequestEntry
	flush := func() error {
		if err := delivery.SendBatch(ctx, h.Queue, h.QueueURL, pending); err != nil {
			return err
		}
		for i, e := range pending {
			if err := h.Store.MarkEnqueued(ctx, *e.Id); err != nil {
				return err
			}
			if i == 0 && inv.failAfterSend {
				// Sent, part marked: the retry must lose nothing.
				inv.failAfterSend = false
				return fmt.Errorf("%w at %s", fault.Injected, fault.EnqueueFail)
			}
		}
		pending = pending[:0]
		return nil
	}
	for _, ep := range targets {
		id := delivery.ID(ev.ID, ep.EndpointID)
		send, err := h.Store.CreateDelivery(ctx, store.Delivery{
			DeliveryID: id, TenantID: ev.TenantID, EndpointID: ep.EndpointID, EventID: ev.ID, EventType: ev.Type,
		})
		if err != nil {
			return err
		}
		if !send {
			continue // created and sent by an earlier run of this record
		}
		body, err := json.Marshal(delivery.Message{
			DeliveryID: id, TenantID: ev.TenantID, EndpointID: ep.EndpointID, EventID: ev.ID,
			EventType: ev.Type, OccurredAt: ev.OccurredAt, Sequence: ev.Sequence, Payload: ev.Payload,
		})
		if err != nil {
			return fmt.Errorf("encode delivery message %s: %w", id, err)
		}
		pending = append(pending, sqstypes.SendMessageBatchRequestEntry{Id: &id, MessageBody: aws.String(string(body))})
		if len(pending) == 10 {
			if err := flush(); err != nil {
				return err
			}
		}
		h.Log.InfoContext(ctx, "delivery created", "tenant_id", ev.TenantID, "event_id", ev.ID, "endpoint_id", ep.EndpointID, "delivery_id", id)
	}
	return flush()
}

func (h *Handler) reject(ctx context.Context, rec events.DynamoDBEventRecord, ev outbox.Event, reason, field, detail string) error {
	// An id or tenant that is itself the problem cannot key the record.
	key, tenant := safeText(ev.ID), safeText(ev.TenantID)
	if key == "" {
		key = "seq:" + rec.Change.SequenceNumber
	}
	ev.TenantID = tenant
	h.Log.WarnContext(ctx, "outbox item rejected", "key", key, "tenant_id", tenant, "reason", reason, "field", field)
	h.Metrics.Put(metrics.RejectedItems, 1, map[string]string{metrics.DimensionReason: reason})
	return h.Store.PutRejection(ctx, store.Rejection{
		Key: key, EventID: safeText(ev.ID), TenantID: tenant, Reason: reason, Field: field, Detail: detail,
	})
}

// safeText returns s if it can key a DynamoDB record, else "".
func safeText(s string) string {
	if len(s) > outbox.MaxIDBytes || !utf8.ValidString(s) {
		return ""
	}
	return s
}
