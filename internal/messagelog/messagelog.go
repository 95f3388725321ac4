package messagelog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// DB is what the reader needs of DynamoDB: Query (on the message log's
// index only) and GetItem (on the outbox table).
type DB interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Reader reads the message log from the outbox table. Build it with a
// literal.
type Reader struct {
	DB DB
	// Table is the outbox table's name. Required.
	Table string
	// Legacy says the outbox table still has the unsharded index by_tenant
	// (outbox.IndexByTenant), which lists every event, those written
	// without log_pk too: a listing reads it alone. Default false: a
	// listing reads the sharded index by_tenant_shard
	// (outbox.IndexByTenantShard), where an item without log_pk is absent.
	// Either reads the other's cursors.
	Legacy bool
	// Pages are the message log's pages (pages.go), listed beside the
	// index: the events whose outbox items have no log_pk. Nil: none.
	Pages *Pages
}

// maxQueries bounds the index reads of one listing page: a type filter
// evaluates items it does not return, so a page may come back short with a
// cursor rather than read without end.
const maxQueries = 10

// ListEvents lists tenantID's events that f selects, newest first (by
// occurred_at, then id), at most limit of them, from cursor ("" for the
// first page). next is "" when the listing is complete; a page may be
// short, or empty, and still have a next cursor. A cursor this reader did
// not make is store.ErrBadCursor; one made for another filter
// store.ErrCursorMismatch. Listed events carry no payload and no sequence
// (neither the index nor the pages keep them).
func (r *Reader) ListEvents(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	return r.list(ctx, tenantID, f, limit, cursor)
}

// query is the query of index (partition key attribute pk, value key) for
// the events that f selects, newest first, at or before the log key upTo
// ("" for no bound but f's).
func (r *Reader) query(index, pk, key string, f domain.EventFilter, upTo string) *dynamodb.QueryInput {
	cond := "#t = :t"
	names := map[string]string{"#t": pk}
	values := map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: key}}
	lo, hi := bounds(f)
	if upTo != "" && (hi == "" || upTo < hi) {
		hi = upTo
	}
	switch {
	case lo != "" && hi != "":
		cond += " AND #k BETWEEN :lo AND :hi"
	case lo != "":
		cond += " AND #k >= :lo"
	case hi != "":
		cond += " AND #k <= :hi"
	}
	if lo != "" || hi != "" {
		names["#k"] = outbox.AttrLogKey
	}
	if lo != "" {
		values[":lo"] = &types.AttributeValueMemberS{Value: lo}
	}
	if hi != "" {
		values[":hi"] = &types.AttributeValueMemberS{Value: hi}
	}
	q := &dynamodb.QueryInput{
		TableName: aws.String(r.Table), IndexName: aws.String(index),
		KeyConditionExpression: aws.String(cond), ScanIndexForward: aws.Bool(false),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}
	if f.Type != "" {
		q.FilterExpression = aws.String("#ty = :ty")
		names["#ty"] = outbox.AttrType
		values[":ty"] = &types.AttributeValueMemberS{Value: f.Type}
	}
	return q
}

// bounds are the log keys of f's time range, "" where it is open: Since's
// first key and a key after every key of Until (the time part then "$",
// which sorts after "#").
func bounds(f domain.EventFilter) (lo, hi string) {
	if !f.Since.IsZero() {
		lo = outbox.LogKey(f.Since, "")
	}
	if !f.Until.IsZero() {
		k := outbox.LogKey(f.Until, "")
		hi = k[:len(k)-1] + "$"
	}
	return lo, hi
}

// Event reads tenantID's event id with its payload: store.ErrNotFound when
// there is no such item or it is another tenant's.
func (r *Reader) Event(ctx context.Context, tenantID, id string) (domain.Event, error) {
	out, err := r.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.Table),
		Key:       map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		return domain.Event{}, fmt.Errorf("read event %s: %w", id, err)
	}
	if out.Item == nil || str(out.Item, outbox.AttrTenantID) != tenantID {
		return domain.Event{}, fmt.Errorf("event %s: %w", id, store.ErrNotFound)
	}
	return eventOf(out.Item)
}

// eventOf reads an outbox item (or its index projection).
func eventOf(item map[string]types.AttributeValue) (domain.Event, error) {
	e := domain.Event{ID: str(item, outbox.AttrID), TenantID: str(item, outbox.AttrTenantID), Type: str(item, outbox.AttrType), EndpointID: str(item, outbox.AttrEndpointID)}
	at, err := time.Parse(time.RFC3339Nano, str(item, outbox.AttrOccurredAt))
	if err != nil {
		return e, fmt.Errorf("event %s: occurred_at: %w", e.ID, err)
	}
	e.OccurredAt = at
	if n, ok := item[outbox.AttrSequence].(*types.AttributeValueMemberN); ok {
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			e.Sequence = &v
		}
	}
	if outbox.ValidTraceParent(str(item, outbox.AttrTraceParent)) {
		e.TraceParent = str(item, outbox.AttrTraceParent)
	}
	if p, ok := item[outbox.AttrPayload].(*types.AttributeValueMemberS); ok && json.Valid([]byte(p.Value)) {
		e.Payload = json.RawMessage(p.Value)
	}
	return e, nil
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// LogKey is the log_sk of an item or key, "" when it has none.
func LogKey(item map[string]types.AttributeValue) string { return str(item, outbox.AttrLogKey) }

// cursorKey is a listing's cursor: the log key of the last item read (the
// newest not yet listed are older), and the fingerprint of the filter it
// was read with. A cursor of the sharded index adds the shards that are
// done and, for a shard read further than SK, where it is (shards.go).
type cursorKey struct {
	SK string `json:"k"`
	F  string `json:"f"`
	// Done is a bit set of the shards read to their end.
	Done uint32 `json:"d,omitempty"`
	// At maps a shard to the occurred_at (Unix nanoseconds) at and after
	// which it holds nothing more to list.
	At map[int]int64 `json:"p,omitempty"`
	// Keys maps a shard to the log key at and after which it holds
	// nothing more to list, where At cannot say it (within a nanosecond).
	Keys map[int]string `json:"q,omitempty"`
}

func fingerprint(f domain.EventFilter) string {
	h := sha256.Sum256([]byte(f.Type + "\x00" + f.Since.UTC().Format(time.RFC3339Nano) + "\x00" + f.Until.UTC().Format(time.RFC3339Nano)))
	return base64.RawURLEncoding.EncodeToString(h[:8])
}

func encodeCursor(sk, fp string) string { return encodeKey(cursorKey{SK: sk, F: fp}) }

func encodeKey(c cursorKey) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// isKey reports whether k has a log key's shape.
func isKey(k string) bool { return len(k) >= 31 && k[30] == '#' && len(k) <= 1024 }

// errNoKey is a cursor whose position is not a log key.
var errNoKey = errors.New("no log key")

// decodeKey reads a cursor of the filter of fingerprint fp: SK is a log
// key, or "" when the cursor places shards (At) only.
func decodeKey(cursor, fp string) (cursorKey, error) {
	var c cursorKey
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && (c.SK != "" || len(c.At)+len(c.Keys) == 0) && !isKey(c.SK) {
		err = errNoKey
	}
	if err == nil {
		err = checkShards(c)
	}
	if err != nil {
		return cursorKey{}, fmt.Errorf("cursor: %w (%w)", store.ErrBadCursor, err)
	}
	if c.F != fp {
		return cursorKey{}, fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
	}
	return c, nil
}
