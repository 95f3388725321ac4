package domain

import (
	"encoding/json"
	"strings"
	"time"
)

// Operational events: what hookline itself tells a tenant (through its own
// pipeline, to the tenant's endpoints subscribed to these types) and the
// operator (on the stack's EventBridge bus) about the tenant's endpoints
// and deliveries. Their types are reserved: a producer's outbox item of one
// of them is rejected, so every event of these types in
// the outbox was written by hookline (package opevent).
const (
	// OpEndpointDisabled: an endpoint was disabled (after consecutive
	// failures, or on 410 Gone). Payload: OpEndpointEvent.
	OpEndpointDisabled = "endpoint.disabled"
	// OpEndpointFailing: an early warning; an endpoint's run of consecutive
	// failed attempts reached the failing threshold, well below the disable
	// threshold. Payload: OpEndpointEvent.
	OpEndpointFailing = "endpoint.failing"
	// OpEndpointRecovered: an endpoint that was failing or disabled
	// answered a delivery with success again. Payload: OpEndpointEvent.
	OpEndpointRecovered = "endpoint.recovered"
	// OpEndpointDegraded: an endpoint with a failure-rate alert
	// (Endpoint.FailureRateAlert) failed at least its threshold of the
	// attempts over the alert's window; once per degraded episode.
	// Payload: OpEndpointEvent, with the rate's fields.
	OpEndpointDegraded = "endpoint.degraded"
	// OpDeliveryDead: deliveries to an endpoint died; one summary per
	// endpoint per coalescing window. Payload: OpDeliveryDeadEvent.
	OpDeliveryDead = "delivery.dead"
)

// OpEventTypes lists the operational event types.
var OpEventTypes = []string{OpEndpointDisabled, OpEndpointFailing, OpEndpointRecovered, OpDeliveryDead, OpEndpointDegraded}

// IsOperational reports whether eventType is one of hookline's reserved
// operational event types.
func IsOperational(eventType string) bool {
	for _, t := range OpEventTypes {
		if t == eventType {
			return true
		}
	}
	return false
}

// SubscribesExplicitly reports whether e asks for eventType by name or by a
// "prefix.*" filter, not merely by having no filter or "*": operational
// events go only to endpoints that name them, so a receiver built for the
// tenant's business events never gets them unasked.
func (e Endpoint) SubscribesExplicitly(eventType string) bool {
	for _, f := range e.EventTypes {
		if f == eventType {
			return true
		}
		if n := len(f); n >= 2 && f != "*" && strings.HasSuffix(f, ".*") && strings.HasPrefix(eventType, f[:n-1]) {
			return true
		}
	}
	return false
}

// OpEndpointEvent is the payload (data) of endpoint.disabled,
// endpoint.failing, endpoint.recovered and endpoint.degraded.
type OpEndpointEvent struct {
	TenantID   string `json:"tenant_id"`
	EndpointID string `json:"endpoint_id"`
	URL        string `json:"url"`
	// Type and Target, for an endpoint of an AWS type (sqs, sns,
	// eventbridge), are its type and destination ARN (URL is then empty);
	// absent for http.
	Type   EndpointType `json:"type,omitempty"`
	Target string       `json:"target,omitempty"`
	// ConsecutiveFailures is the endpoint's run of failed attempts when the
	// event was raised (0 on recovered).
	ConsecutiveFailures int `json:"consecutive_failures"`
	// Reason is why it was disabled (endpoint.disabled only).
	Reason DisableReason `json:"reason,omitempty"`
	// LastStatus and LastError describe the attempt that raised the event.
	LastStatus int       `json:"last_status,omitempty"`
	LastError  string    `json:"last_error,omitempty"`
	At         time.Time `json:"at"`

	// The failure rate that raised endpoint.degraded, absent from the
	// other types: Failed of the Attempts sent in the window (the hour
	// buckets from WindowStart: the WindowHours whole hours before the
	// current one, and the current one so far) failed, FailurePercent in
	// percent (two decimals), at or above the alert's ThresholdPercent.
	// LastStatus and LastError are then the window's newest failure.
	FailurePercent   float64    `json:"failure_percent,omitempty"`
	ThresholdPercent int        `json:"threshold_percent,omitempty"`
	WindowHours      int        `json:"window_hours,omitempty"`
	WindowStart      *time.Time `json:"window_start,omitempty"`
	Attempts         int64      `json:"attempts,omitempty"`
	Failed           int64      `json:"failed,omitempty"`
}

// OpDeliveryDeadEvent is the payload (data) of delivery.dead: the deaths of
// one endpoint's deliveries within one coalescing window.
type OpDeliveryDeadEvent struct {
	TenantID    string    `json:"tenant_id"`
	EndpointID  string    `json:"endpoint_id"`
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Count is how many deliveries died in the window.
	Count int `json:"count"`
	// Deaths are the first deaths of the window (at most OpDeadSample).
	Deaths []OpDeath `json:"deaths"`
	// Reasons counts the window's deaths by reason.
	Reasons map[DeadReason]int `json:"reasons"`
}

// OpDeath is one dead delivery named in a delivery.dead summary.
type OpDeath struct {
	DeliveryID string     `json:"delivery_id"`
	EventID    string     `json:"event_id"`
	EventType  string     `json:"event_type"`
	Reason     DeadReason `json:"reason"`
	Attempts   int        `json:"attempts"`
}

// OpDeadSample is how many deaths a delivery.dead summary names.
const OpDeadSample = 10

// TestEventType is the type of the test event a tenant sends to one of its
// endpoints (POST /v1/endpoints/{id}/test). It is reserved as the
// operational types are (only hookline writes it, with the origin marker),
// but it is not one of them: it goes to the endpoint it names only, whatever
// that endpoint's event_types, and never to the operator's bus
// (IsOperational is false for it).
const TestEventType = "hookline.test"

// TestEvent is the payload (data) of a hookline.test event.
type TestEvent struct {
	TenantID   string `json:"tenant_id"`
	EndpointID string `json:"endpoint_id"`
	// Message says what the event is, for a human reading a receiver's log.
	Message string `json:"message"`
	// RequestedAt is when the test was asked for.
	RequestedAt time.Time `json:"requested_at"`
}

// TestEventMessage is TestEvent's Message.
const TestEventMessage = "This is a test event sent by hookline at your request. It needs no action."

// OperatorDetail is the detail of an event on the operator's bus, as
// enqueue puts it there and the e-mail notices read it: the outbox
// event, its payload (one of the Op*Event structs) as data. The event's
// detail-type is its Type. ID is the outbox event's id, unique per event:
// an event may reach the bus twice (at least once), and a consumer that
// must not act twice deduplicates on it.
type OperatorDetail struct {
	ID         string          `json:"id"`
	TenantID   string          `json:"tenant_id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}
