package api

import (
	"encoding/json"
	"time"
)

// EventView is an event as the API shows it (the event resource): the same
// names as the outbox item's. Payload is set only where a route documents
// it.
type EventView struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurred_at"`
	EndpointID string          `json:"endpoint_id,omitempty"`
	Sequence   *int64          `json:"sequence,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}
