package api

import (
	"encoding/json"
	"time"
)

// PublishedEventView is an event as POST /v1/events answers it (the event
// resource without its deliveries): the same
// names as the outbox item's. Payload is set only where a route documents
// it.
type PublishedEventView struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurred_at"`
	EndpointID string          `json:"endpoint_id,omitempty"`
	Sequence   *int64          `json:"sequence,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}
