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
}
