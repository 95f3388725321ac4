package messagelog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// DB is what the reader needs of DynamoDB: Query (on the by_tenant index
// only) and GetItem (on the outbox table).
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
// (the index does not project them).
func (r *Reader) ListEvents(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	q := r.query(tenantID, f)
	fp := fingerprint(f)
	if cursor != "" {
		sk, err := decodeCursor(cursor, fp)
		if err != nil {
			return nil, "", err
		}
		q.ExclusiveStartKey = map[string]types.AttributeValue{
			outbox.AttrID: &types.AttributeValueMemberS{Value: sk[strings.IndexByte(sk, '#')+1:]}, outbox.AttrTenantID: &types.AttributeValueMemberS{Value: tenantID},
			outbox.AttrLogKey: &types.AttributeValueMemberS{Value: sk},
		}
	}
	var out []domain.Event
	for range maxQueries {
		q.Limit = aws.Int32(int32(limit - len(out)))
		if f.Type != "" {
			q.Limit = aws.Int32(100) // the filter drops some of what is read
		}
		page, err := r.DB.Query(ctx, q)
		if err != nil {
			return nil, "", fmt.Errorf("list events of tenant %s: %w", tenantID, err)
		}
		for _, item := range page.Items {
			e, err := eventOf(item)
			if err != nil {
				return nil, "", err
			}
			e.Payload, e.Sequence = nil, nil // not projected; a cloud that ignores projections does not change the answer
			out = append(out, e)
			if len(out) == limit {
				return out, encodeCursor(LogKey(item), fp), nil
			}
		}
		if page.LastEvaluatedKey == nil {
			return out, "", nil
		}
		q.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, encodeCursor(LogKey(q.ExclusiveStartKey), fp), nil
}

// query is the index query of tenantID's events that f selects, newest
// first, before any cursor.
func (r *Reader) query(tenantID string, f domain.EventFilter) *dynamodb.QueryInput {
	cond := "#t = :t"
	names := map[string]string{"#t": outbox.AttrTenantID}
	values := map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: tenantID}}
	lo, hi := bounds(f)
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
		TableName: aws.String(r.Table), IndexName: aws.String(outbox.IndexByTenant),
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

// cursorKey is a listing's cursor: the log key of the last item read, and
// the fingerprint of the filter it was read with.
type cursorKey struct {
	SK string `json:"k"`
	F  string `json:"f"`
}

func fingerprint(f domain.EventFilter) string {
	h := sha256.Sum256([]byte(f.Type + "\x00" + f.Since.UTC().Format(time.RFC3339Nano) + "\x00" + f.Until.UTC().Format(time.RFC3339Nano)))
	return base64.RawURLEncoding.EncodeToString(h[:8])
}

func encodeCursor(sk, fp string) string {
	b, _ := json.Marshal(cursorKey{SK: sk, F: fp})
	return base64.RawURLEncoding.EncodeToString(b)
}

// errNoKey is a cursor whose position is not a log key.
var errNoKey = errors.New("no log key")

func decodeCursor(cursor, fp string) (string, error) {
	var c cursorKey
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && (len(c.SK) < 31 || c.SK[30] != '#' || len(c.SK) > 1024) {
		err = errNoKey
	}
	if err != nil {
		return "", fmt.Errorf("cursor: %w (%w)", store.ErrBadCursor, err)
	}
	if c.F != fp {
		return "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
	}
	return c.SK, nil
}
