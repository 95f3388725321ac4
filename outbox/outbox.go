package outbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of an outbox item: the producer contract.
const (
	AttrID         = "id"          // S, partition key, unique event id
	AttrTenantID   = "tenant_id"   // S
	AttrType       = "type"        // S, e.g. payment.succeeded
	AttrPayload    = "payload"     // S, a JSON document
	AttrOccurredAt = "occurred_at" // S, RFC 3339
	AttrEndpointID = "endpoint_id" // S, optional: deliver to this endpoint only
	AttrSequence   = "sequence"    // N, optional ordering hint
	AttrExpiresAt  = "expires_at"  // N, optional TTL (unix seconds)
	// AttrTraceParent (S, optional) is the producer's W3C trace context
	// (Event.TraceParent): the event's deliveries join that trace.
	AttrTraceParent = "traceparent"
	// AttrLogKey (S) is the message log's sort key, LogKey(OccurredAt, ID),
	// as producer libraries before the message log's pages wrote it: the
	// outbox table's index IndexByTenant lists a tenant's events by it,
	// newest first. Item no longer writes it (each index entry is a billed
	// write): hookline's enqueue lists every item without AttrLogShard in
	// the message log's pages instead.
	AttrLogKey = "log_sk"
	// AttrLogShard (S) is the message log's sharded partition key,
	// LogShard(TenantID, ID), as producer libraries before the message
	// log's pages wrote it beside AttrLogKey: the index IndexByTenantShard
	// lists those items by it, one shard of LogShards at a time. An item
	// without it is absent from that index (it is sparse), and listed in
	// the pages.
	AttrLogShard = "log_pk"
)

// IndexByTenant is the outbox table's index of a tenant's events: partition
// key tenant_id, sort key log_sk (AttrLogKey); it projects the id, type,
// occurred_at and endpoint_id, not the payload.
// It puts every event of a tenant on one index key value, which takes at
// most 1,000 writes a second: IndexByTenantShard supersedes it. It is kept while an outbox may hold items written without
// AttrLogShard (docs/deploying.md, "Upgrading the message log index").
const IndexByTenant = "by_tenant"

// IndexByTenantShard is the outbox table's sharded index of a tenant's
// events: partition key log_pk (AttrLogShard, LogShards values a tenant),
// sort key log_sk (AttrLogKey); it projects what IndexByTenant does. A
// tenant's listing queries each of its shards and merges them.
const IndexByTenantShard = "by_tenant_shard"

// LogShards is how many index key values a tenant's events spread over:
// DynamoDB takes at most 1,000 index writes a second on one key value, so
// a tenant's events can be written at 16 x 1,000 = 16,000 a second
// before its index throttles the producers' writes, while a listing page
// costs 16 queries. It is part of the stored data: changing it moves no
// item already written.
const LogShards = 16

// LogShard is the log_pk of tenantID's event id: the tenant, "#", and the
// shard, the FNV-1a hash of the id modulo LogShards, in decimal.
func LogShard(tenantID, id string) string {
	return LogShardKey(tenantID, shardOf(id))
}

// LogShardKey is the log_pk of tenantID's shard n (0 <= n < LogShards).
func LogShardKey(tenantID string, n int) string {
	return tenantID + "#" + strconv.Itoa(n)
}

func shardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % LogShards)
}

// LogKey is an event's message log sort key: its occurred_at in UTC at a
// fixed width (nanoseconds), "#", its id; so keys sort by time as strings.
func LogKey(occurredAt time.Time, id string) string {
	return occurredAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
}

// DefaultRetention is how long after OccurredAt an outbox item is kept when
// the event sets neither ExpiresAt nor NoExpiry: Item writes expires_at =
// OccurredAt + DefaultRetention, and DynamoDB's TTL deletes the item some
// time after that (usually within days), so the outbox does not grow forever.
//
// Delivery never reads the outbox item again: enqueue takes the event from
// the stream record, which the stream keeps 24 h, and each delivery carries
// its own copy of the event. The item is still read by hand in one case: a
// stream batch that enqueue could not process for 24 h is parked in the
// enqueue failure queue, which keeps it 14 days, and the runbook re-inserts
// those events from the outbox (docs/operations.md, EnqueueFailures). 16
// days covers that for every event written within a day of OccurredAt;
// later ones are past the default age cap (24 h) and go dead at once anyway.
const DefaultRetention = 16 * 24 * time.Hour

// Limits on an outbox item. An item over them is rejected, not truncated.
const (
	// MaxPayloadBytes bounds the payload so that a delivery message (payload
	// plus envelope) always fits in one SQS message of 256 KiB.
	MaxPayloadBytes = 192 << 10
	// MaxIDBytes bounds the event id, tenant id, endpoint id and type.
	MaxIDBytes = 256
)

// Event is one outbox item.
type Event struct {
	// ID is chosen by the producer and unique across all events. Required.
	ID string
	// TenantID owns the event; it is delivered to that tenant's endpoints. Required.
	TenantID string
	// Type names the event, e.g. "payment.succeeded". Required.
	Type string
	// Payload is delivered unchanged as the body's "data". Required, valid JSON.
	Payload json.RawMessage
	// OccurredAt is when the business change happened. Required.
	OccurredAt time.Time
	// EndpointID, when set, delivers to that endpoint only. Default: every
	// subscribed endpoint of the tenant.
	EndpointID string
	// Sequence, when set, is passed to receivers as an ordering hint.
	Sequence *int64
	// ExpiresAt is the outbox item's expires_at: DynamoDB's TTL deletes the
	// item some time after it. Zero: OccurredAt + DefaultRetention.
	ExpiresAt time.Time
	// NoExpiry, when true, writes no expires_at: the item is kept until
	// someone deletes it. ExpiresAt must then be zero. Default false.
	NoExpiry bool
	// TraceParent, when set, is the producer's W3C trace context (a
	// traceparent header value, "00-<trace id>-<span id>-<flags>"): every
	// span of the event's delivery is in that trace, and each attempt
	// sends the receiver a traceparent with its trace id. A value that is
	// not a valid traceparent (ValidTraceParent) is left out of the item,
	// never an error: hookline then starts a trace of its own. Default:
	// none.
	TraceParent string
}

// ValidTraceParent reports whether s is a traceparent hookline reads (W3C
// Trace Context, version 00: 55 characters, lowercase hex, ids not all
// zero, and a later version read the same way).
func ValidTraceParent(s string) bool {
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" || (s[:2] == "00" && len(s) != 55) || (len(s) > 55 && s[55] != '-') {
		return false
	}
	for _, part := range []string{s[0:2], s[3:35], s[36:52], s[53:55]} {
		zero := true
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
			zero = zero && c == '0'
		}
		if zero && len(part) > 2 {
			return false
		}
	}
	return true
}

// Rejection reasons, as recorded for an invalid outbox item.
const (
	ReasonMissingField = "missing_field"
	ReasonWrongType    = "wrong_type"
	ReasonInvalidJSON  = "invalid_json"
	ReasonInvalidUTF8  = "invalid_utf8"
	ReasonTooLarge     = "too_large"
	ReasonInvalidTime  = "invalid_timestamp"
	// ReasonInvalidChars: a field holds a character that SQS refuses in a
	// message, or (in an id or type) a control character, which HTTP
	// refuses in the headers that carry it.
	ReasonInvalidChars = "invalid_characters"
	// ReasonReservedType: the type is one of hookline's own operational
	// event types (ReservedTypes), which only hookline writes.
	ReasonReservedType = "reserved_type"
	// ReasonTooDeep: the payload nests objects and arrays deeper than
	// MaxPayloadDepth.
	ReasonTooDeep = "too_deep"
)

// MaxPayloadDepth bounds how deep a payload nests objects and arrays (the
// payload itself is depth 1): 32, above any webhook payload of Stripe's,
// GitHub's or Svix's examples (under 10) with room to spare, and far
// below encoding/json's 10000; past it a payload costs every reader
// (filters, the console, receivers' parsers) work for no event a business
// sends.
const MaxPayloadDepth = 32

// PayloadDepth is how deep the JSON document data nests objects and arrays
// (a scalar is 0, {} and [] are 1), counted outside strings in one pass.
func PayloadDepth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// ReservedTypes are the event types hookline itself emits (operational
// events: an endpoint disabled, failing, recovered or degraded, deliveries
// dead; and hookline.test, the test event a tenant asks for through the
// API). A producer may not write them: Validate refuses them, and hookline
// rejects an outbox item of one of them that it did not write.
var ReservedTypes = []string{"endpoint.disabled", "endpoint.failing", "endpoint.recovered", "delivery.dead", "endpoint.degraded", "hookline.test"}

// IsReservedType reports whether t is one of ReservedTypes.
func IsReservedType(t string) bool {
	for _, r := range ReservedTypes {
		if r == t {
			return true
		}
	}
	return false
}

// MaxDetailBytes bounds a ValidationError's Detail: it may quote the value
// at fault, and a rejection record that copied a 100 KiB value could itself
// pass DynamoDB's 400 KB item limit.
const MaxDetailBytes = 512

// ValidationError says why an outbox item cannot be delivered.
type ValidationError struct {
	Reason string // one of the Reason constants
	Field  string // the attribute at fault
	Detail string // a sentence for humans
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("outbox item field %q: %s (%s)", e.Field, e.Detail, e.Reason)
}

func invalid(reason, field, format string, args ...any) error {
	return &ValidationError{Reason: reason, Field: field, Detail: Truncate(fmt.Sprintf(format, args...), MaxDetailBytes)}
}

// Truncate returns s cut to at most n bytes at a character boundary, with
// "…" at the end when it was cut (within the n bytes).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…"
	cut := max(n-len(more), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// SQSAllowed reports whether SQS accepts r in a message body: #x9, #xA,
// #xD, #x20 to #xD7FF, #xE000 to #xFFFD and #x10000 to #x10FFFF.
func SQSAllowed(r rune) bool {
	switch {
	case r == 0x9, r == 0xA, r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// firstInvalidChar returns the first character of s (valid UTF-8) that SQS
// refuses, or with header true also a control character (C0 or DEL), and
// its byte offset; ok is false when there is none.
func firstInvalidChar(s string, header bool) (r rune, at int, ok bool) {
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if (header && (b < 0x20 || b == 0x7F)) || !SQSAllowed(rune(b)) {
				return rune(b), i, true
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if !SQSAllowed(c) {
			return c, i, true
		}
		i += size
	}
	return 0, 0, false
}

// Validate reports the first problem that stops e from being delivered, as a
// *ValidationError, or nil. A reserved type (ReservedTypes) is checked
// last: its error, ReasonReservedType, means every other check passed.
func (e Event) Validate() error {
	if err := e.validateFields(); err != nil {
		return err
	}
	if IsReservedType(e.Type) {
		return invalid(ReasonReservedType, AttrType, "%q is reserved for the events hookline itself sends", e.Type)
	}
	return nil
}

// validateFields is Validate without the reserved type check.
func (e Event) validateFields() error {
	for _, f := range []struct{ name, value string }{
		{AttrID, e.ID}, {AttrTenantID, e.TenantID}, {AttrType, e.Type},
	} {
		if f.value == "" {
			return invalid(ReasonMissingField, f.name, "is required")
		}
		if err := checkText(f.name, f.value); err != nil {
			return err
		}
	}
	if e.EndpointID != "" {
		if err := checkText(AttrEndpointID, e.EndpointID); err != nil {
			return err
		}
	}
	if len(e.Payload) == 0 {
		return invalid(ReasonMissingField, AttrPayload, "is required")
	}
	if len(e.Payload) > MaxPayloadBytes {
		return invalid(ReasonTooLarge, AttrPayload, "is %d bytes, over the limit of %d", len(e.Payload), MaxPayloadBytes)
	}
	if !utf8.Valid(e.Payload) {
		return invalid(ReasonInvalidUTF8, AttrPayload, "is not valid UTF-8")
	}
	if r, at, bad := firstInvalidChar(string(e.Payload), false); bad {
		return invalid(ReasonInvalidChars, AttrPayload, "has the character %U at byte %d, which SQS refuses in a message (escape it in JSON as \\u%04x)", r, at, r)
	}
	if !json.Valid(e.Payload) {
		return invalid(ReasonInvalidJSON, AttrPayload, "is not a valid JSON document")
	}
	if d := PayloadDepth(e.Payload); d > MaxPayloadDepth {
		return invalid(ReasonTooDeep, AttrPayload, "nests objects and arrays %d deep, over the limit of %d (MaxPayloadDepth)", d, MaxPayloadDepth)
	}
	if e.OccurredAt.IsZero() {
		return invalid(ReasonMissingField, AttrOccurredAt, "is required")
	}
	return nil
}

// ValidText reports whether s may be an event id, tenant id, endpoint id or
// type: at most MaxIDBytes, valid UTF-8, and free of control characters and
// of characters SQS refuses.
func ValidText(s string) bool { return checkText("", s) == nil }

func checkText(field, v string) error {
	if len(v) > MaxIDBytes {
		return invalid(ReasonTooLarge, field, "is %d bytes, over the limit of %d", len(v), MaxIDBytes)
	}
	if !utf8.ValidString(v) {
		return invalid(ReasonInvalidUTF8, field, "is not valid UTF-8")
	}
	if r, at, bad := firstInvalidChar(v, true); bad {
		return invalid(ReasonInvalidChars, field, "has the character %U at byte %d: ids and types travel in HTTP headers and SQS messages, which refuse control characters and %U", r, at, r)
	}
	return nil
}

// ParseOccurredAt parses an occurred_at value (RFC 3339, fractions allowed).
func ParseOccurredAt(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalid(ReasonInvalidTime, AttrOccurredAt, "%q is not an RFC 3339 time", Truncate(s, 64))
	}
	return t, nil
}

// ErrExpiryConflict is returned by Item and TransactPut for an event that
// sets both ExpiresAt and NoExpiry.
var ErrExpiryConflict = errors.New("outbox event sets both ExpiresAt and NoExpiry")

// Item returns the DynamoDB item for e, after validating it. Its expires_at
// is ExpiresAt, else OccurredAt + DefaultRetention, and absent with NoExpiry.
func (e Event) Item() (map[string]types.AttributeValue, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if e.NoExpiry && !e.ExpiresAt.IsZero() {
		return nil, ErrExpiryConflict
	}
	item := map[string]types.AttributeValue{
		AttrID:         &types.AttributeValueMemberS{Value: e.ID},
		AttrTenantID:   &types.AttributeValueMemberS{Value: e.TenantID},
		AttrType:       &types.AttributeValueMemberS{Value: e.Type},
		AttrPayload:    &types.AttributeValueMemberS{Value: string(e.Payload)},
		AttrOccurredAt: &types.AttributeValueMemberS{Value: e.OccurredAt.UTC().Format(time.RFC3339Nano)},
	}
	if e.EndpointID != "" {
		item[AttrEndpointID] = &types.AttributeValueMemberS{Value: e.EndpointID}
	}
	if ValidTraceParent(e.TraceParent) {
		item[AttrTraceParent] = &types.AttributeValueMemberS{Value: e.TraceParent}
	}
	if e.Sequence != nil {
		item[AttrSequence] = &types.AttributeValueMemberN{Value: strconv.FormatInt(*e.Sequence, 10)}
	}
	if !e.NoExpiry {
		expires := e.ExpiresAt
		if expires.IsZero() {
			expires = e.OccurredAt.Add(DefaultRetention)
		}
		item[AttrExpiresAt] = &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)}
	}
	return item, nil
}

// ErrNoTable is returned by TransactPut when the table name is empty.
var ErrNoTable = errors.New("outbox table name is required")

// TransactPut returns the TransactWriteItem that writes e to the outbox
// table, for the producer to add to its own TransactWriteItems call. The put
// fails the transaction if an event with the same id already exists.
func TransactPut(table string, e Event) (types.TransactWriteItem, error) {
	if table == "" {
		return types.TransactWriteItem{}, ErrNoTable
	}
	item, err := e.Item()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	put := PutIfNew(table, item)
	return types.TransactWriteItem{Put: &put}, nil
}

// PutIfNew is the put of an outbox item into table, with the condition
// every outbox put carries: no event with the item's id is there already
// (attribute_not_exists(id)), so that an event id is written once.
// TransactPut's put is one; a writer that puts an item on its own (a
// PutItem) gives it the same condition from here.
func PutIfNew(table string, item map[string]types.AttributeValue) types.Put {
	return types.Put{
		TableName:                aws.String(table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": AttrID},
	}
}
