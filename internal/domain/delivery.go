package domain

import (
	"crypto/sha256"
	"encoding/base32"
	"time"
)

// DeliveryState is the state of a delivery.
type DeliveryState string

// The states a delivery moves through: pending until an attempt succeeds
// (delivered) or it is given up on (dead), or its tenant cancels it
// (cancelled: never sent again, unless a replay sends it). A replay makes a
// dead or cancelled delivery pending again.
const (
	StatePending   DeliveryState = "pending"
	StateDelivered DeliveryState = "delivered"
	StateDead      DeliveryState = "dead"
	StateCancelled DeliveryState = "cancelled"
)

// DLQDepthDelta is what a delivery's move from one state to another does
// to its tenant's DLQ depth (the count of its dead deliveries): +1 into
// dead, -1 out of it (a replay), 0 otherwise. From "" is a delivery's
// first record.
func DLQDepthDelta(from, to DeliveryState) int {
	n := 0
	if to == StateDead {
		n++
	}
	if from == StateDead {
		n--
	}
	return n
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// DeliveryID returns the delivery id of eventID bound for endpointID: "msg_"
// and 26 base32 characters of SHA-256 over both ids (130 bits). Processing
// the same event twice names the same delivery: the id is the idempotency
// key (webhook-id) of every attempt and every replay.
func DeliveryID(eventID, endpointID string) string {
	h := sha256.New()
	h.Write([]byte(eventID))
	h.Write([]byte{0})
	h.Write([]byte(endpointID))
	return "msg_" + idEncoding.EncodeToString(h.Sum(nil))[:26]
}

// Attempt is one entry of a delivery's attempt log.
type Attempt struct {
	Number    int       `dynamodbav:"n"`
	At        time.Time `dynamodbav:"at"`
	Status    int       `dynamodbav:"status,omitempty"`
	Error     string    `dynamodbav:"error,omitempty"`
	LatencyMS int64     `dynamodbav:"latency_ms"`
	Excerpt   string    `dynamodbav:"excerpt,omitempty"`
	// Resend marks an attempt of a resend of a delivered delivery
	// (POST /v1/deliveries/{id}/resend): logged, the delivery still
	// delivered.
	Resend bool `dynamodbav:"resend,omitempty"`
}

// Delivery is the record of one event bound for one endpoint.
type Delivery struct {
	DeliveryID string        `dynamodbav:"delivery_id"`
	TenantID   string        `dynamodbav:"tenant_id"`
	EndpointID string        `dynamodbav:"endpoint_id"`
	EventID    string        `dynamodbav:"event_id"`
	EventType  string        `dynamodbav:"event_type"`
	State      DeliveryState `dynamodbav:"state"`
	// CreatedAt is when the record was written: when the delivery's first
	// attempt was recorded (the store creates it with that attempt).
	CreatedAt time.Time `dynamodbav:"created_at"`
	// EnqueuedAt is set only on records written by earlier versions, in
	// which enqueue recorded each delivery it sent.
	EnqueuedAt  *time.Time `dynamodbav:"enqueued_at,omitempty"`
	DeliveredAt *time.Time `dynamodbav:"delivered_at,omitempty"`
	DeadAt      *time.Time `dynamodbav:"dead_at,omitempty"`
	DeadReason  DeadReason `dynamodbav:"dead_reason,omitempty"`
	ReplayedAt  *time.Time `dynamodbav:"replayed_at,omitempty"`
	Attempts    int        `dynamodbav:"attempts"`
	LastStatus  int        `dynamodbav:"last_status,omitempty"`
	LastError   string     `dynamodbav:"last_error,omitempty"`
	AttemptLog  []Attempt  `dynamodbav:"attempt_log,omitempty"`
	// Resends counts the attempts of resends of this delivery once
	// delivered (each also in AttemptLog, marked Resend); Attempts does not
	// count them.
	Resends int `dynamodbav:"resends,omitempty"`
	// Message is the SQS message body, kept while the delivery is dead.
	Message string `dynamodbav:"message,omitempty"`
	// ReplayClaimedBy is the job (a replay, or the operator's redrive) that
	// has claimed this delivery to send it again and not yet confirmed
	// sending it; ReplayClaimedAt is when it claimed it. Its attribute keeps
	// its earlier name, replay_job, so that stored claims stay readable.
	ReplayClaimedBy string     `dynamodbav:"replay_job,omitempty"`
	ReplayClaimedAt *time.Time `dynamodbav:"replay_claimed_at,omitempty"`
	// ReplayedBy is the last job (a replay, or the redrive) that sent this
	// delivery again.
	ReplayedBy string `dynamodbav:"replayed_by,omitempty"`
	// CancelledAt is when a cancel job (CancelledBy) cancelled it; a
	// message of the delivery replayed after it is attempted, every other
	// is dropped unsent.
	CancelledAt *time.Time `dynamodbav:"cancelled_at,omitempty"`
	CancelledBy string     `dynamodbav:"cancelled_by,omitempty"`
}

// Revives reports whether a message replayed at replayedAt (nil: not a
// replay) may be attempted although d is cancelled: a replay made after
// the cancel. A message of a delivery that is not cancelled always may.
func (d Delivery) Revives(replayedAt *time.Time) bool {
	if d.State != StateCancelled {
		return true
	}
	return replayedAt != nil && d.CancelledAt != nil && replayedAt.After(*d.CancelledAt)
}

// Outcome is what an attempt did to a delivery.
type Outcome struct {
	// State after the attempt: pending (will retry), delivered or dead.
	State DeliveryState
	// DeadReason says why a dead delivery was given up on.
	DeadReason DeadReason
	// Message is the delivery's SQS message body, kept on a dead delivery so
	// that a replay needs nothing but the index.
	Message string
}
