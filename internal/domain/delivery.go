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

// timeEncoding is base32hex in lower case: its digits sort as the values
// they encode, so equal-width times sort as strings.
const timeEncoding = "0123456789abcdefghijklmnopqrstuv"

// deliveryTimeChars is the width of the event time in a delivery id: nine
// base32hex digits of Unix milliseconds, 45 bits (to the year 3084).
const deliveryTimeChars = 9

// TenantHashChars is the width of a tenant's hash in a delivery id: eight
// base32hex digits, 40 bits of SHA-256 over the tenant id (TenantHash).
const TenantHashChars = 8

// deliveryHashChars is the width of the hash of the event and endpoint ids
// in a delivery id: 22 base32 characters, 110 bits.
const deliveryHashChars = 22

// deliveryIDLen is the length of a delivery id: "msg_", the time, the
// tenant's hash, the hash of the ids.
const deliveryIDLen = 4 + deliveryTimeChars + TenantHashChars + deliveryHashChars

// DeliveryID returns the delivery id of tenantID's event eventID, which
// occurred at at, bound for endpointID: "msg_", the event's time (nine
// base32hex digits of Unix milliseconds), the tenant's hash (TenantHash)
// and 22 base32 characters of SHA-256 over the event and endpoint ids
// (110 bits): 43 characters. A tenant's ids sort by their events' time,
// and an id names the partitions its record is kept in without anything
// else (store: the record of a delivery is in its tenant's delivery log,
// found by its id alone). Processing the same event twice names the same
// delivery: the id is the idempotency key (webhook-id) of every attempt
// and every replay. Every reader names an event's deliveries with its
// occurred_at as the outbox item holds it, so all agree; a time before
// 1970 is written as 1970, one past the encoding's end as its end.
// Deliveries made by versions before the time are named by
// LegacyDeliveryID: DeliveryIDs names both.
func DeliveryID(tenantID, eventID, endpointID string, at time.Time) string {
	var id [deliveryIDLen]byte
	copy(id[:], "msg_")
	putTime(id[4:4+deliveryTimeChars], at)
	putTenantHash(id[4+deliveryTimeChars:4+deliveryTimeChars+TenantHashChars], tenantID)
	var enc [52]byte // base32 of the 32-byte hash
	sum := deliveryHashSum(eventID, endpointID)
	idEncoding.Encode(enc[:], sum[:])
	copy(id[4+deliveryTimeChars+TenantHashChars:], enc[:deliveryHashChars])
	return string(id[:])
}

// DeliveryIDPrefix is how the ids of the deliveries of events of at's
// millisecond begin: "msg_" and its time (at, to the millisecond, clamped
// to the encoding's range). Every id of an earlier millisecond sorts before
// it; every id of a later one after it followed by "~".
func DeliveryIDPrefix(at time.Time) string {
	var p [4 + deliveryTimeChars]byte
	copy(p[:], "msg_")
	putTime(p[4:], at)
	return string(p[:])
}

// putTime writes at's Unix milliseconds, clamped to what len(dst) base32hex
// digits hold, into dst.
func putTime(dst []byte, at time.Time) {
	ms := min(max(at.UnixMilli(), 0), 1<<(5*len(dst))-1)
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = timeEncoding[ms&31]
		ms >>= 5
	}
}

// TenantHash is the hash of tenantID a delivery id carries: the first 40
// bits of SHA-256 over it, as eight base32hex digits. Two tenants may share
// one (about one chance in two that some pair does among a million
// tenants): it places records, it does not say whose they are.
func TenantHash(tenantID string) string {
	var th [TenantHashChars]byte
	putTenantHash(th[:], tenantID)
	return string(th[:])
}

func putTenantHash(dst []byte, tenantID string) {
	sum := sha256.Sum256([]byte(tenantID))
	v := uint64(sum[0])<<32 | uint64(sum[1])<<24 | uint64(sum[2])<<16 | uint64(sum[3])<<8 | uint64(sum[4])
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = timeEncoding[v&31]
		v >>= 5
	}
}

// LegacyDeliveryID is the delivery id versions before DeliveryID's time
// gave eventID bound for endpointID: "msg_" and 26 characters of the hash
// alone. Their records keep it; a reader that names an event's deliveries
// looks for both (DeliveryIDs) until the last of them has expired
// (docs/deploying.md).
func LegacyDeliveryID(eventID, endpointID string) string {
	return "msg_" + deliveryHash(eventID, endpointID)
}

// DeliveryIDs are the ids a delivery of tenantID's event eventID (which
// occurred at at) to endpointID may have: DeliveryID's, then
// LegacyDeliveryID's, for a record written before DeliveryID carried the
// time.
func DeliveryIDs(tenantID, eventID, endpointID string, at time.Time) [2]string {
	return [2]string{DeliveryID(tenantID, eventID, endpointID, at), LegacyDeliveryID(eventID, endpointID)}
}

// ParsedDeliveryID is what a delivery id carries.
type ParsedDeliveryID struct {
	// At is its event's time, to the millisecond.
	At time.Time
	// TenantHash is its tenant's (TenantHash).
	TenantHash string
}

// ParseDeliveryID reads what a delivery id (DeliveryID) carries; false for
// a legacy id (LegacyDeliveryID) or a string that is no delivery id.
func ParseDeliveryID(id string) (ParsedDeliveryID, bool) {
	if len(id) != deliveryIDLen || id[:4] != "msg_" {
		return ParsedDeliveryID{}, false
	}
	var ms int64
	for i := 4; i < 4+deliveryTimeChars+TenantHashChars; i++ {
		c := id[i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'v':
			v = c - 'a' + 10
		default:
			return ParsedDeliveryID{}, false
		}
		if i < 4+deliveryTimeChars {
			ms = ms<<5 | int64(v)
		}
	}
	th := id[4+deliveryTimeChars : 4+deliveryTimeChars+TenantHashChars]
	return ParsedDeliveryID{At: time.UnixMilli(ms).UTC(), TenantHash: th}, true
}

func deliveryHash(eventID, endpointID string) string {
	sum := deliveryHashSum(eventID, endpointID)
	return idEncoding.EncodeToString(sum[:])[:26]
}

// deliveryHashSum is SHA-256 over eventID, a zero byte and endpointID.
func deliveryHashSum(eventID, endpointID string) [sha256.Size]byte {
	var buf [2*256 + 1]byte // the ids' limit (outbox.MaxIDBytes): no allocation
	if len(eventID)+len(endpointID)+1 > len(buf) {
		return sha256.Sum256([]byte(eventID + "\x00" + endpointID))
	}
	n := copy(buf[:], eventID)
	buf[n] = 0
	n += 1 + copy(buf[n+1:], endpointID)
	return sha256.Sum256(buf[:n])
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
	// Packed marks a delivery read from its row of an outcome page (a
	// delivery delivered at its first attempt has no record of its own:
	// package store's outcome pages), not from a record. Never stored.
	Packed bool `dynamodbav:"-" json:"-"`
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
