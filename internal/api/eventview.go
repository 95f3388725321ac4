package api

import (
	"encoding/json"
	"time"
)

// PublishedEventView is the event resource, as POST /v1/events answers it
// and as the message log shows it beside the deliveries (EventView): the
// same names as the outbox item's. Payload is set only where a route
// documents it.
type PublishedEventView struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurred_at"`
	EndpointID string          `json:"endpoint_id,omitempty"`
	Sequence   *int64          `json:"sequence,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	// TraceID is the trace the event's deliveries are in (package trace):
	// the traceparent header's, or the one the publish started. Set on
	// the answer to POST /v1/events.
	TraceID string `json:"trace_id,omitempty"`
}
