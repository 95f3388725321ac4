package domain

import "time"

// Rejection records an outbox item that cannot be delivered.
type Rejection struct {
	// Key identifies the item: its event id, or its stream sequence number
	// when it has no usable id.
	Key        string       `dynamodbav:"key"`
	EventID    string       `dynamodbav:"event_id,omitempty"`
	TenantID   string       `dynamodbav:"tenant_id,omitempty"`
	Reason     RejectReason `dynamodbav:"reason"`
	Field      string       `dynamodbav:"field,omitempty"`
	Detail     string       `dynamodbav:"detail"`
	RejectedAt time.Time    `dynamodbav:"rejected_at"`
}
