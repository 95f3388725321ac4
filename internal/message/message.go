package message

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Message is the body of a delivery message on the delivery queue and the DLQ.
type Message struct {
	DeliveryID string          `json:"delivery_id"`
	TenantID   string          `json:"tenant_id"`
	EndpointID string          `json:"endpoint_id"`
	EventID    string          `json:"event_id"`
	EventType  string          `json:"event_type"`
	OccurredAt time.Time       `json:"occurred_at"`
	Sequence   *int64          `json:"sequence,omitempty"`
	Payload    json.RawMessage `json:"payload"`
	// ReplayedAt is set on a message a replay (or a redrive) sends again:
	// its age, which the retry policy's maximum bounds, counts from then,
	// not from the event, so that an event older than the maximum age can
	// still be replayed. Receivers never see it.
	ReplayedAt *time.Time `json:"replayed_at,omitempty"`
	// Resend marks a message the API sent to deliver a delivered delivery
	// again (POST /v1/deliveries/{id}/resend): deliver attempts it although
	// the delivery is delivered, logs its attempts as the resend's
	// (store.RecordResendAttempt) and leaves the delivery delivered. Its
	// ReplayedAt is the resend's time. Receivers never see it.
	Resend bool `json:"resend,omitempty"`
	// Attempts is the number of attempts made before this message was
	// sent: set on a message deliver sends again rather than spend an
	// attempt or a receive on a wait (its endpoint's rate limit, open
	// circuit breaker or busy gate, a hitch of hookline's own, a long
	// backoff): its receive count starts again at 0, so the attempt number
	// is Attempts plus the receive count. 0 on every other
	// message. Receivers never see it.
	Attempts int `json:"attempts,omitempty"`
	// Deferrals counts the times deliver sent the message again to wait
	// for its endpoint (rate limit, breaker, gate): each wait is longer
	// than the last, so
	// a long backlog costs a few re-sends, not one every few seconds. 0 on
	// every other message. Receivers never see it.
	Deferrals int `json:"deferrals,omitempty"`
	// Hitches counts the times deliver sent the message again because
	// hookline's own dependencies (DynamoDB, KMS) failed before the
	// attempt: each wait doubles, from 5 s to 15 min. 0 on every other
	// message. Receivers never see it.
	Hitches int `json:"hitches,omitempty"`
	// NotBefore, on a message waiting out a retry delay longer than SQS
	// can delay or hide a message for (15 minutes), is when its next
	// attempt is due: until then each receive sends it again, delayed
	// (a hop), without an attempt. Nil on every other message. Receivers
	// never see it.
	NotBefore *time.Time `json:"not_before,omitempty"`
	// EndpointRevision is the endpoint's revision (domain.Endpoint.Revision)
	// its sender read when it made the message: deliver sends it by a copy
	// of the endpoint at least that new, reading the endpoint again,
	// strongly consistent, when the copy it keeps is older (package
	// deliver, "Endpoint reads"). 0, as on messages of earlier versions:
	// any copy will do. A replay or a deferral keeps it. Receivers never
	// see it.
	EndpointRevision int64 `json:"endpoint_revision,omitempty"`
	// TraceParent is the W3C trace context of the hop that sent the
	// message (enqueue's fan-out span, a replay's send, the API's resend):
	// the attempt's span is its child (package trace). Every re-send keeps
	// it, a replay sets its own span. Empty on messages of earlier
	// versions: deliver derives the event's trace (trace.Derive). The
	// receiver gets a traceparent of the same trace id, never this value.
	TraceParent string `json:"traceparent,omitempty"`
}

// TraceAttribute is the delivery queue message attribute (String) that
// mirrors Message.TraceParent, as OpenTelemetry's messaging conventions
// carry a trace context on SQS: read by deliver first, by any tool that
// does not parse the body. It is the one attribute of a delivery message;
// one of three on the DLQ's (dead_reason, tenant_id), within SQS's
// MaxAttributes.
const TraceAttribute = "traceparent"

// TraceAttributes are the message attributes of a delivery message whose
// trace context is traceParent: TraceAttribute, or none when it is empty.
func TraceAttributes(traceParent string) map[string]sqstypes.MessageAttributeValue {
	if traceParent == "" {
		return nil
	}
	return map[string]sqstypes.MessageAttributeValue{TraceAttribute: {DataType: aws.String("String"), StringValue: aws.String(traceParent)}}
}

// DeadLetterAttributes are the message attributes of a delivery message
// in the DLQ: dead_reason, tenant_id (when known) and its trace context
// (TraceAttribute, when it carries one): three of SQS's ten. deliver gives
// them to the deaths it sends there, and the DLQ sweep to the arrivals it
// moves in.
func DeadLetterAttributes(reason, tenantID, traceParent string) map[string]sqstypes.MessageAttributeValue {
	attrs := map[string]sqstypes.MessageAttributeValue{
		"dead_reason": {DataType: aws.String("String"), StringValue: aws.String(reason)},
	}
	if tenantID != "" {
		attrs["tenant_id"] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(tenantID)}
	}
	if traceParent != "" {
		attrs[TraceAttribute] = TraceAttributes(traceParent)[TraceAttribute]
	}
	return attrs
}

// AgeFrom is the time the message's age counts from: its replay, if any,
// else its event.
func (m Message) AgeFrom() time.Time {
	if m.ReplayedAt != nil && m.ReplayedAt.After(m.OccurredAt) {
		return *m.ReplayedAt
	}
	return m.OccurredAt
}

// Replayed returns body, a delivery message, marked as sent again at at,
// with a fresh schedule (no attempts carried).
// Each edit is applied to the message after that (a replay sets its own
// trace context with one).
func Replayed(body string, at time.Time, edits ...func(*Message)) (string, error) {
	m, err := Decode(body)
	if err != nil {
		return "", err
	}
	at = at.UTC()
	m.ReplayedAt = &at
	m.Attempts, m.Deferrals, m.Hitches, m.NotBefore = 0, 0, 0, nil // a fresh schedule
	for _, edit := range edits {
		edit(&m)
	}
	out, err := Encode(m)
	if err != nil {
		return "", fmt.Errorf("encode replayed message %s: %w", m.DeliveryID, err)
	}
	return string(out), nil
}

// Validate reports a message that cannot be delivered as it stands.
func (m Message) Validate() error {
	switch {
	case m.DeliveryID == "":
		return errors.New("delivery message: delivery_id is missing")
	case m.TenantID == "":
		return errors.New("delivery message: tenant_id is missing")
	case m.EndpointID == "":
		return errors.New("delivery message: endpoint_id is missing")
	case m.EventID == "":
		return errors.New("delivery message: event_id is missing")
	case len(m.Payload) == 0 || !json.Valid(m.Payload):
		return errors.New("delivery message: payload is not JSON")
	}
	return nil
}

// Decode parses and validates a message body.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("delivery message: %w", err)
	}
	return m, m.Validate()
}

// Body is the JSON document POSTed to the endpoint.
type Body struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Sequence  *int64          `json:"sequence,omitempty"`
}

// RequestBody renders the body POSTed to the endpoint: the event id, type,
// occurrence time, the payload unchanged as data, and the sequence if any.
// It is the same bytes on every attempt and replay.
func (m Message) RequestBody() ([]byte, error) {
	return Encode(Body{ID: m.EventID, Type: m.EventType, Timestamp: m.OccurredAt.UTC(), Data: m.Payload, Sequence: m.Sequence})
}

// Encode is json.Marshal without HTML escaping: a payload goes out as the
// producer wrote it (compacted), and its size stays its size. json.Marshal
// would write each <, > and & of a payload as six bytes, so a valid payload
// under the outbox's limit could grow past SQS's 256 KiB.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
