package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// The dead-letter listing (ListDead) and its pure parts, which memstore
// uses too so that both page alike: the index range a filter selects, the
// fingerprint of the query, and the cursor.

// DeadKeyRange is the sort key range of the dead-letter index that f
// selects: every key is a time in sortableFormat, "#", a delivery id.
func DeadKeyRange(f domain.DeadFilter) (lo, hi string, err error) {
	lo, hi = "0", "~" // below and above every digit a key starts with
	if !f.Since.IsZero() {
		if !KeyTime(f.Since) {
			return "", "", fmt.Errorf("since %s: %w", f.Since.Format(time.RFC3339Nano), ErrBadFilter)
		}
		lo = sortableTime(f.Since)
	}
	if !f.Until.IsZero() {
		if !KeyTime(f.Until) {
			return "", "", fmt.Errorf("until %s: %w", f.Until.Format(time.RFC3339Nano), ErrBadFilter)
		}
		hi = sortableTime(f.Until) + "#~"
	}
	if lo > hi {
		return "", "", fmt.Errorf("until is before since: %w", ErrBadFilter)
	}
	return lo, hi, nil
}

// DeadFingerprint names the query f makes, for its cursors.
func DeadFingerprint(f domain.DeadFilter) string {
	key := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return sortableTime(t)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{f.EndpointID, f.EventType, key(f.Since), key(f.Until)}, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// DeadCursor is a dead-letter listing's cursor: the position (the index
// key of the last delivery returned) and the query it belongs to. Q is
// empty in the cursors made before it was added; they are checked by
// position only.
type DeadCursor struct {
	ID, SK string
	Q      string `json:",omitempty"`
}

// EncodeDeadCursor is the opaque form of c that ListDead returns.
func EncodeDeadCursor(c DeadCursor) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodeDeadCursor reads a cursor and checks that its position is a key of
// the dead-letter index: a time in sortableFormat, "#", the delivery id.
func DecodeDeadCursor(cursor string) (DeadCursor, error) {
	var c DeadCursor
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.ID == "" || len(c.ID) > 256 {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	at, id, ok := strings.Cut(c.SK, "#")
	t, err := time.Parse(sortableFormat, at)
	if !ok || err != nil || sortableTime(t) != at || id != c.ID {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	return c, nil
}

// maxScanPerPage bounds the index items one ListDead call reads when a
// filter on endpoint or type skips most of them; the page is then short and
// carries a cursor.
const maxScanPerPage = 1000

// ListDead returns a page of a tenant's dead deliveries, oldest death first,
// at most limit, after cursor ("" for the first page). It reads the sparse
// dead-letter index, so its cost follows the page (and, with an endpoint or
// type filter, the tenant's dead deliveries in the time range), never the
// size of the DLQ or of other tenants' dead deliveries.
//
// A filter whose times the index cannot hold (see KeyTime) or whose Until is
// before its Since is ErrBadFilter; a cursor this store did not make is
// ErrBadCursor, and one made for another query (another filter, or a
// position outside this filter's time range) ErrCursorMismatch. DynamoDB
// refuses such a query (ValidationException); this store never sends it.
func (s *Store) ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	pk := keys.TenantIndex(tenantID, "DEAD")
	lo, hi, err := DeadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	in := s.deadQuery(pk, f, lo, hi)
	query := DeadFingerprint(f)
	if cursor != "" {
		if in.ExclusiveStartKey, err = deadStartKey(pk, cursor, query, lo, hi); err != nil {
			return nil, "", err
		}
	}
	return s.queryDead(ctx, tenantID, in, limit, query)
}

// deadQuery is the query of partition pk of the dead-letter index between
// sort keys lo and hi, filtered on f's endpoint and event type.
func (s *Store) deadQuery(pk string, f domain.DeadFilter, lo, hi string) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
	}
	var conds []string
	if f.EndpointID != "" {
		conds = append(conds, "endpoint_id = :ep")
		in.ExpressionAttributeValues[":ep"] = &types.AttributeValueMemberS{Value: f.EndpointID}
	}
	if f.EventType != "" {
		conds = append(conds, "event_type = :type")
		in.ExpressionAttributeValues[":type"] = &types.AttributeValueMemberS{Value: f.EventType}
	}
	if len(conds) > 0 {
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	return in
}

// deadStartKey is the start key a cursor of query names in partition pk. The
// start key must fall inside the key condition (lo to hi), or DynamoDB
// refuses the query: a cursor of another query is refused here.
func deadStartKey(pk, cursor, query, lo, hi string) (map[string]types.AttributeValue, error) {
	c, err := DecodeDeadCursor(cursor)
	if err != nil {
		return nil, err
	}
	if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
		return nil, fmt.Errorf("cursor: %w", ErrCursorMismatch)
	}
	// Rebuilt with this tenant's partition: a cursor cannot reach another.
	return map[string]types.AttributeValue{
		"gsi1pk": &types.AttributeValueMemberS{Value: pk}, "gsi1sk": &types.AttributeValueMemberS{Value: c.SK},
		"pk": &types.AttributeValueMemberS{Value: keys.Delivery(c.ID)}, "sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
	}, nil
}

// queryDead runs a dead-letter query page by page until it has limit
// deliveries, the index ends, or it has read maxScanPerPage items (with a
// filter), and returns them with the cursor of the rest.
func (s *Store) queryDead(ctx context.Context, tenantID string, in *dynamodb.QueryInput, limit int, query string) ([]domain.Delivery, string, error) {
	filtered := in.FilterExpression != nil
	var out []domain.Delivery
	scanned := 0
	for {
		in.Limit = aws.Int32(int32(limit - len(out)))
		if filtered {
			in.Limit = aws.Int32(int32(min(maxScanPerPage-scanned, max(limit*4, 50))))
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("list dead deliveries of tenant %s: %w", tenantID, err)
		}
		scanned += int(page.ScannedCount)
		var ds []domain.Delivery
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ds); err != nil {
			return nil, "", fmt.Errorf("decode dead deliveries: %w", err)
		}
		for _, d := range ds {
			if len(out) == limit {
				// Stop inside this page: the cursor is the last one returned.
				return out, deadCursor(out[len(out)-1], query), nil
			}
			out = append(out, d)
		}
		if page.LastEvaluatedKey == nil {
			return out, "", nil
		}
		if len(out) == limit || scanned >= maxScanPerPage {
			return out, pageCursor(page.LastEvaluatedKey, query), nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// pageCursor is the cursor that resumes a query of query after the index's
// last evaluated key.
func pageCursor(last map[string]types.AttributeValue, query string) string {
	sk := last["gsi1sk"].(*types.AttributeValueMemberS).Value
	id := last["pk"].(*types.AttributeValueMemberS).Value[len(keys.DeliveryPrefix):]
	return EncodeDeadCursor(DeadCursor{ID: id, SK: sk, Q: query})
}

// ErrBadFilter is returned for a dead-letter filter the index cannot be
// queried with.
var ErrBadFilter = errors.New("dead-letter filter is not valid")

// ErrCursorMismatch is returned for a pagination cursor this store made for
// another query.
var ErrCursorMismatch = errors.New("pagination cursor belongs to another query")

// The times a sort key can hold: sortableFormat compares as strings in time
// order only with a four-digit year.
var (
	minKeyTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxKeyTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// KeyTime reports whether t can bound a query of the store's time-ordered
// indexes: from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z, in
// UTC (RFC 3339 allows 9999-12-31T23:59:59-01:00, which is in year 10000).
func KeyTime(t time.Time) bool {
	return !t.Before(minKeyTime) && !t.After(maxKeyTime)
}

// deadCursor is the cursor after d, in the listing of query.
func deadCursor(d domain.Delivery, query string) string {
	sk := ""
	if d.DeadAt != nil {
		sk = keys.TimeID(*d.DeadAt, d.DeliveryID)
	}
	return EncodeDeadCursor(DeadCursor{ID: d.DeliveryID, SK: sk, Q: query})
}
