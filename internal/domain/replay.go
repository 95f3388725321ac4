package domain

import "time"

// DeadFilter selects a tenant's dead deliveries. Zero fields select all.
type DeadFilter struct {
	EndpointID string    `json:"endpoint_id,omitempty" dynamodbav:"endpoint_id,omitempty"`
	EventType  string    `json:"event_type,omitempty" dynamodbav:"event_type,omitempty"`
	Since      time.Time `json:"since,omitzero" dynamodbav:"since,omitempty"`
	Until      time.Time `json:"until,omitzero" dynamodbav:"until,omitempty"`
}
