package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/outboxwrite"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
)

// Outbox is the outbox table, for the events the API writes (POST
// /v1/events, POST /v1/endpoints/{id}/test): PutItem, and GetItem to answer
// a publish repeated. A *dynamodb.Client in production.
type Outbox interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

var _ Outbox = (*dynamodb.Client)(nil)

// MaxPublishBodyBytes caps the body of POST /v1/events: the outbox's
// payload limit (outbox.MaxPayloadBytes) and room for the other fields and
// white space. A bigger body answers 413, as does a payload over
// outbox.MaxPayloadBytes in a body under the cap.
const MaxPublishBodyBytes = outbox.MaxPayloadBytes + 16<<10

// MaxIdempotencyKeyBytes bounds the Idempotency-Key header.
const MaxIdempotencyKeyBytes = 255

// ReservedIDPrefix starts the ids of the events hookline makes (test
// events, the ids derived from an Idempotency-Key, operational events): a
// publish may not choose such an id.
const ReservedIDPrefix = "hl_"

// ReplayedHeader is set to "true" on the answer to a publish that repeats
// one already written: the same status and body as the first answer.
const ReplayedHeader = "Idempotent-Replayed"

// publishInput is the body of POST /v1/events.
type publishInput struct {
	ID         *string         `json:"id"`
	Type       *string         `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	OccurredAt *string         `json:"occurred_at"`
	EndpointID *string         `json:"endpoint_id"`
	Sequence   *int64          `json:"sequence"`
}

// publish writes an event into the outbox, once per id: the id given, or
// derived from the Idempotency-Key header, or a new one.
func (s *Server) publish(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	if s.Outbox == nil {
		return problem(http.StatusServiceUnavailable, "publishing is not configured in this deployment")
	}
	var in publishInput
	if p := decodeLimit(w, r, &in, MaxPublishBodyBytes); p != nil {
		return p
	}
	ev, p := s.publishEvent(r, tenant, in)
	if p != nil {
		return p
	}
	// The producer's trace (a malformed header is ignored), or a new one.
	span := s.Tracer.Start(trace.Or(r.Header.Get(trace.Header), trace.Context{}), "api.publish")
	ev.TraceParent = span.TraceParent()
	defer func() { span.End(r.Context(), slog.String("tenant_id", tenant), slog.String("event_id", ev.ID)) }()
	item, err := ev.Item()
	if err != nil {
		return outboxProblem(err)
	}
	if ev.EndpointID != "" {
		if _, err := s.Store.Endpoint(r.Context(), tenant, ev.EndpointID); errors.Is(err, store.ErrNotFound) {
			return unprocessable(FieldError{Field: outbox.AttrEndpointID, Message: "names no endpoint of yours: " + strconv.Quote(ev.EndpointID)})
		} else if err != nil {
			return s.internal(r, err)
		}
	}
	written, err := s.putEvent(r.Context(), item)
	if err != nil {
		return s.internal(r, err)
	}
	if !written {
		return s.publishedBefore(w, r, in, ev)
	}
	writeJSON(w, http.StatusAccepted, publishedView(ev))
	return nil
}

// publishEvent is the event in, with its id and time resolved, or the
// problem with in's id, time or Idempotency-Key.
func (s *Server) publishEvent(r *http.Request, tenant string, in publishInput) (outbox.Event, *Problem) {
	ev := outbox.Event{TenantID: tenant, Payload: in.Payload, OccurredAt: s.now().UTC(), Sequence: in.Sequence}
	if in.Type != nil {
		ev.Type = *in.Type
	}
	if in.EndpointID != nil {
		if ev.EndpointID = *in.EndpointID; ev.EndpointID == "" {
			return ev, invalid(FieldError{Field: outbox.AttrEndpointID, Message: "is empty: leave it out to deliver to every subscribed endpoint"})
		}
	}
	if in.OccurredAt != nil {
		t, err := outbox.ParseOccurredAt(*in.OccurredAt)
		if err != nil {
			return ev, outboxProblem(err)
		}
		ev.OccurredAt = t
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > MaxIdempotencyKeyBytes || !outbox.ValidText(key) {
		// Checked even when the body gives an id, which wins over it.
		return ev, invalid(FieldError{Field: "Idempotency-Key", Message: "must be at most " + strconv.Itoa(MaxIdempotencyKeyBytes) + " bytes of text without control characters"})
	}
	switch {
	case in.ID != nil && strings.HasPrefix(*in.ID, ReservedIDPrefix):
		return ev, invalid(FieldError{Field: outbox.AttrID, Message: "starts with " + ReservedIDPrefix + ", which is reserved for the ids hookline makes"})
	case in.ID != nil:
		// The id as given, checked as the outbox checks any (empty, control
		// characters), then put in the tenant's namespace.
		ev.ID = *in.ID
		if err := ev.Validate(); err != nil {
			return ev, outboxProblem(err)
		}
		ev.ID = TenantEventID(tenant, *in.ID)
		if len(ev.ID) > outbox.MaxIDBytes {
			return ev, invalid(FieldError{Field: outbox.AttrID, Reason: outbox.ReasonTooLarge,
				Message: "must be at most " + strconv.Itoa(outbox.MaxIDBytes-len(tenant)-1) + " bytes: the event's id is " + strconv.Quote(tenant+":") + " and this id, at most " + strconv.Itoa(outbox.MaxIDBytes)})
		}
	case key != "":
		ev.ID = KeyedEventID(tenant, key)
	default:
		id, err := s.newID("evt_")
		if err != nil {
			return ev, s.internal(r, err)
		}
		ev.ID = id
	}
	return ev, nil
}

// TenantEventID is the id of the event a tenant publishes with an id of
// its choosing: that id in the tenant's namespace, "<tenant id>:<id>" (the
// answer, the message log and the receivers all carry it). Tenant ids hold
// no ":" (letters, digits, _ and -), so two tenants' ids never meet in the
// outbox, whose put keeps its attribute_not_exists(id) condition: a publish
// can only find its own tenant's event under its id, and no tenant can learn
// whether an id exists elsewhere (issue 23).
func TenantEventID(tenantID, id string) string { return tenantID + ":" + id }

// KeyedEventID is the id of the event a tenant publishes with an
// Idempotency-Key and no id: the same tenant and key, the same id; another
// tenant's same key, another id.
func KeyedEventID(tenantID, key string) string {
	h := sha256.Sum256([]byte(tenantID + "\x00" + key))
	return ReservedIDPrefix + "key_" + hex.EncodeToString(h[:16])
}

// putEvent writes item unless an event with its id exists: written is
// false then.
func (s *Server) putEvent(ctx context.Context, item map[string]types.AttributeValue) (written bool, err error) {
	return outboxwrite.PutNew(ctx, s.Outbox, s.OutboxTable, item)
}

// publishedBefore answers a publish whose event id exists: the first
// answer again if the event there is this request's (same tenant, same
// fields), else 409. The id is in the tenant's namespace (TenantEventID,
// KeyedEventID) or a new random one, so the event found is the tenant's
// own; one that is not (a producer writing the outbox directly under such
// an id) answers as a different body does, and nothing of it is shown.
func (s *Server) publishedBefore(w http.ResponseWriter, r *http.Request, in publishInput, ev outbox.Event) *Problem {
	out, err := s.Outbox.GetItem(r.Context(), &dynamodb.GetItemInput{
		TableName:      aws.String(s.OutboxTable),
		Key:            map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: ev.ID}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return s.internal(r, err)
	}
	first, same := samePublish(out.Item, in, ev)
	if c, ok := trace.Parse(str(out.Item, outbox.AttrTraceParent)); ok {
		first.TraceParent = c.String() // the first publish's trace
	}
	if !same {
		return problem(http.StatusConflict, "an event with the id %q exists, and this request is not the one that wrote it: "+
			"publish a different event under another id (or Idempotency-Key)", ev.ID)
	}
	w.Header().Set(ReplayedHeader, "true")
	writeJSON(w, http.StatusAccepted, publishedView(first))
	return nil
}

// samePublish reads the stored item and reports whether the request in
// (ev resolved from it) is the one that wrote it: the same tenant, type,
// payload, endpoint and sequence, and the same time if in gives one.
func samePublish(item map[string]types.AttributeValue, in publishInput, ev outbox.Event) (outbox.Event, bool) {
	str := func(k string) string { return str(item, k) }
	stored := outbox.Event{ID: str(outbox.AttrID), TenantID: str(outbox.AttrTenantID), Type: str(outbox.AttrType),
		Payload: json.RawMessage(str(outbox.AttrPayload)), EndpointID: str(outbox.AttrEndpointID)}
	at, err := time.Parse(time.RFC3339Nano, str(outbox.AttrOccurredAt))
	if err != nil || item[opevent.AttrOrigin] != nil {
		return stored, false
	}
	stored.OccurredAt = at
	if n, ok := item[outbox.AttrSequence].(*types.AttributeValueMemberN); ok {
		seq, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return stored, false
		}
		stored.Sequence = &seq
	}
	same := stored.TenantID == ev.TenantID && stored.Type == ev.Type && string(stored.Payload) == string(ev.Payload) &&
		stored.EndpointID == ev.EndpointID && equalSeq(stored.Sequence, ev.Sequence) &&
		(in.OccurredAt == nil || stored.OccurredAt.Equal(ev.OccurredAt))
	return stored, same
}

// str is the string attribute k of item, "" when it is not one.
func str(item map[string]types.AttributeValue, k string) string {
	v, _ := item[k].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

func equalSeq(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// publishedView is the answer to a publish: the event, without its payload.
func publishedView(ev outbox.Event) PublishedEventView {
	v := PublishedEventView{ID: ev.ID, Type: ev.Type, OccurredAt: ev.OccurredAt.UTC(), EndpointID: ev.EndpointID, Sequence: ev.Sequence}
	if c, ok := trace.Parse(ev.TraceParent); ok {
		v.TraceID = c.TraceIDHex()
	}
	return v
}

// outboxProblem answers an event that fails the outbox contract
// (*outbox.ValidationError): 400 naming the field and the reason code, 413
// for a payload over outbox.MaxPayloadBytes.
func outboxProblem(err error) *Problem {
	var verr *outbox.ValidationError
	if !errors.As(err, &verr) {
		return invalid(FieldError{Field: "body", Message: err.Error()})
	}
	p := invalid(FieldError{Field: verr.Field, Message: verr.Detail, Reason: verr.Reason})
	if verr.Reason == outbox.ReasonTooLarge && verr.Field == outbox.AttrPayload {
		p.Status, p.Title = http.StatusRequestEntityTooLarge, http.StatusText(http.StatusRequestEntityTooLarge)
	}
	return p
}

// unprocessable is a 422 naming the fields at fault: well-formed, but
// naming what does not exist.
func unprocessable(errs ...FieldError) *Problem {
	p := invalid(errs...)
	p.Status, p.Title = http.StatusUnprocessableEntity, http.StatusText(http.StatusUnprocessableEntity)
	return p
}

// TestEventView answers POST /v1/endpoints/{id}/test: the test event and
// the id of its delivery to the endpoint (GET /v1/deliveries/{id}).
type TestEventView struct {
	PublishedEventView
	DeliveryID string `json:"delivery_id"`
}

// testItem is the outbox item of a test event to the endpoint epID: a
// hookline.test event (typ nil), or an ordinary event of the catalog type
// typ with its example as the payload, addressed to that endpoint alone
// (endpoint_id), so its subscriptions do not matter; its id starts
// hl_test_ as every test event's does. It answers the item and its type.
func testItem(id, tenant, epID string, at time.Time, typ *eventtypes.Type) (map[string]types.AttributeValue, string, error) {
	if typ == nil {
		item, err := opevent.TestItem(id, tenant, epID, at)
		return item, domain.TestEventType, err
	}
	item, err := outbox.Event{ID: id, TenantID: tenant, Type: typ.Name, Payload: typ.Example, OccurredAt: at, EndpointID: epID}.Item()
	return item, typ.Name, err
}

// testEndpoint sends a hookline.test event to one endpoint of the tenant,
// through the outbox like any event; or, with a body naming a type of the
// event-type catalog ({"event_type": "payment.succeeded"}), an event of
// that type whose payload is the type's example, to that endpoint alone.
func (s *Server) testEndpoint(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	if s.Outbox == nil {
		return problem(http.StatusServiceUnavailable, "test events are not configured in this deployment")
	}
	typ, p := s.testEventType(w, r)
	if p != nil {
		return p
	}
	epID := r.PathValue("endpoint_id")
	ep, err := s.Store.Endpoint(r.Context(), tenant, epID)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(epID), err)
	}
	if ep.Disabled {
		return problem(http.StatusConflict, "endpoint %q is disabled: enable it (POST /v1/endpoints/%s/enable), then test it", epID, epID)
	}
	id, err := s.newID(ReservedIDPrefix + "test_")
	if err != nil {
		return s.internal(r, err)
	}
	at := s.now().UTC()
	item, eventType, err := testItem(id, tenant, epID, at, typ)
	if err != nil {
		return s.internal(r, err)
	}
	if written, err := s.putEvent(r.Context(), item); err != nil || !written {
		return s.internal(r, errors.Join(err, errors.New("test event id "+id+" taken")))
	}
	writeJSON(w, http.StatusAccepted, TestEventView{
		PublishedEventView: PublishedEventView{ID: id, Type: eventType, OccurredAt: at, EndpointID: epID},
		DeliveryID:         domain.DeliveryID(tenant, id, epID, at),
	})
	return nil
}
