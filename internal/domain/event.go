package domain

import (
	"encoding/json"
	"time"
)

// Event is one event of a tenant's message log: an outbox item as hookline
// reads it back. Payload is nil where it is not read (a listing) or no
// longer served (older than the payload retention).
type Event struct {
	ID         string
	TenantID   string
	Type       string
	OccurredAt time.Time
	// EndpointID is set when the event was addressed to one endpoint.
	EndpointID string
	// Sequence is the producer's ordering hint, nil when it gave none.
	Sequence *int64
	// Payload is the event's JSON document, nil when not read.
	Payload json.RawMessage
	// TraceParent is the trace context its outbox item carries (the
	// producer's, or the API's publish span), "" when none or not read.
	TraceParent string
}

// EventFilter selects a tenant's events. Zero fields select all: Type an
// exact event type, Since and Until bound OccurredAt (both inclusive).
type EventFilter struct {
	Type         string
	Since, Until time.Time
}
