package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
)

// The dead-letter listing (ListDead) and its pure parts: the index range a
// filter selects, the fingerprint of the query, and the cursor.

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
// key of the last delivery returned, or of the last one read) and the query
// it belongs to. Q is empty in the cursors made before it was added; they
// are checked by position only. Every partition the listing reads (the dead
// index's DeadShards shards and gsi1's legacy partition, deadPartitions)
// resumes after the same position: merged oldest first, none of them has
// anything not listed yet at or before it. X is the bit set of those that
// have nothing after it (bit n shard n, bit DeadShards the legacy one; in
// the delivery log's, bits 0 to 15 by_log's shards, 16 to 31 the shards of
// records); L is the legacy bit of the cursors made before the shards. ID,
// the delivery id SK ends with, is only in those older cursors.
//
// Its bound: SK is a sortableFormat time (30 bytes), "#" and a delivery id
// (domain.DeliveryID: 43 bytes; DecodeDeadCursor takes up to 256), Q 12
// bytes and X at most 10 digits: under 400 bytes of JSON, under 540 of
// base64, whatever a filter read in one shard past what was listed (that
// shard reads it again on the next page), within the API's 1,024.
type DeadCursor struct {
	ID string `json:",omitempty"`
	SK string
	Q  string `json:",omitempty"`
	L  bool   `json:",omitempty"`
	X  uint64 `json:",omitempty"`
}

// EncodeDeadCursor is the opaque form of c that ListDead returns.
func EncodeDeadCursor(c DeadCursor) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodeDeadCursor reads a cursor and checks that its position is a key of
// the dead-letter index: a time in sortableFormat, "#", the delivery id (ID,
// filled in from SK when the cursor has none).
func DecodeDeadCursor(cursor string) (DeadCursor, error) {
	var c DeadCursor
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) == 0 || json.Unmarshal(raw, &c) != nil {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	at, id, ok := strings.Cut(c.SK, "#")
	t, err := time.Parse(sortableFormat, at)
	if !ok || err != nil || sortableTime(t) != at || id == "" || len(id) > 256 || (c.ID != "" && id != c.ID) {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	c.ID = id
	if c.L {
		c.X |= 1 << DeadShards
	}
	return c, nil
}

// maxScanPerPage bounds the index items one ListDead call reads when a
// filter on endpoint or type skips most of them; the page is then short and
// carries a cursor.
const maxScanPerPage = 1000

// ListDead returns a page of a tenant's dead deliveries, oldest death first,
// at most limit, after cursor ("" for the first page), as DeadListed has
// them (no message, no attempt log). It queries the dead index's
// DeadShards shards of the tenant (IndexDead), and gsi1's partition of
// deaths recorded by earlier versions (legacyDeadIndex), at most
// deadParallel at once, each until it is read to its end, and merges them
// in death order (mergeShards, ascending), so its cost follows the page times the
// partitions (and, with an endpoint or type filter, the tenant's dead
// deliveries in the time range), never the size of the DLQ or of other
// tenants' dead deliveries.
//
// A filter whose times the index cannot hold (see KeyTime) or whose Until is
// before its Since is ErrBadFilter; a cursor this store did not make is
// ErrBadCursor, and one made for another query (another filter, or a
// position outside this filter's time range) ErrCursorMismatch. DynamoDB
// refuses such a query (ValidationException); this store never sends it.
func (s *Store) ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := DeadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	query := DeadFingerprint(f)
	var after *DeadCursor
	if cursor != "" {
		if after, err = checkDeadCursor(cursor, query, lo, hi); err != nil {
			return nil, "", err
		}
		if after.X >= 1<<(DeadShards+1) {
			return nil, "", fmt.Errorf("cursor: %w", ErrBadCursor)
		}
	}
	parts := deadPartitions(tenantID)
	reads := make([]*deadRead, len(parts))
	err = fanout.Each(len(parts), deadParallel, func(n int) error {
		if after != nil && after.X&(1<<n) != 0 {
			return nil // read to its end
		}
		r, err := s.queryDead(ctx, tenantID, parts[n].src, s.deadQuery(parts[n].src, parts[n].pk, f, lo, hi, after), limit)
		reads[n] = &r
		return err
	})
	if err != nil {
		return nil, "", err
	}
	out, next := mergeShards(reads, limit, query, ascending)
	return out, next, nil
}

// checkDeadCursor decodes a cursor of query whose position must fall inside
// the key condition (lo to hi), or DynamoDB refuses the query: a cursor of
// another query is refused here.
func checkDeadCursor(cursor, query, lo, hi string) (*DeadCursor, error) {
	c, err := DecodeDeadCursor(cursor)
	if err != nil {
		return nil, err
	}
	if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
		return nil, fmt.Errorf("cursor: %w", ErrCursorMismatch)
	}
	return &c, nil
}

// deadQuery is the query of partition pk of source between sort keys lo and
// hi, after cursor c (nil: from the start), filtered on f's endpoint and
// event type.
func (s *Store) deadQuery(src deadSource, pk string, f domain.DeadFilter, lo, hi string, c *DeadCursor) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(src.index),
		KeyConditionExpression: aws.String(src.pkAttr + " = :pk AND " + src.skAttr + " BETWEEN :lo AND :hi"),
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
	if c != nil {
		// Rebuilt with this tenant's partition: a cursor cannot reach another.
		k := deliveryKey(c.ID)
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			src.pkAttr: &types.AttributeValueMemberS{Value: pk}, src.skAttr: &types.AttributeValueMemberS{Value: c.SK}, "pk": k["pk"], "sk": k["sk"],
		}
	}
	return in
}

// deadRead is what one index's query found: deliveries in sort key order
// (sks their keys), and the key up to which it read the index, "" when it
// read it to its end.
type deadRead struct {
	ds    []domain.Delivery
	sks   []string
	until string
}

// queryDead runs a dead-letter query of src page by page until it has limit
// deliveries, the index ends, or it has read maxScanPerPage items (with a
// filter).
func (s *Store) queryDead(ctx context.Context, tenantID string, src deadSource, in *dynamodb.QueryInput, limit int) (deadRead, error) {
	r, err := s.queryListing(ctx, attrKey(src.skAttr), in, limit, func(d domain.Delivery, sk string, item map[string]types.AttributeValue) domain.Delivery {
		return fromKeys(d, tenantID, sk, item)
	}, nil)
	if err != nil {
		return r, fmt.Errorf("list dead deliveries of tenant %s: %w", tenantID, err)
	}
	return r, nil
}

// queryListing runs a listing's query page by page until it has limit
// deliveries, the partition ends, or it has read maxScanPerPage items (with
// a filter); keyOf is an item's listing key (of an index entry, its sort
// key), listed completes each delivery read from an item, whose key is sk.
// An item whose key keep refuses (nil: none) is read past, not listed nor
// counted.
func (s *Store) queryListing(ctx context.Context, keyOf func(map[string]types.AttributeValue) string, in *dynamodb.QueryInput, limit int,
	listed func(d domain.Delivery, sk string, item map[string]types.AttributeValue) domain.Delivery, keep func(sk string) bool) (deadRead, error) {
	filtered := in.FilterExpression != nil || keep != nil
	var r deadRead
	for scanned := 0; ; {
		in.Limit = aws.Int32(int32(limit - len(r.ds)))
		if filtered {
			in.Limit = aws.Int32(int32(min(maxScanPerPage-scanned, max(limit*4, 50))))
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return r, err
		}
		scanned += int(page.ScannedCount)
		for _, item := range page.Items {
			if len(r.ds) == limit {
				// Stop inside this page: read up to the last one kept.
				r.until = r.sks[len(r.sks)-1]
				return r, nil
			}
			sk := keyOf(item)
			if keep != nil && !keep(sk) {
				continue
			}
			var d domain.Delivery
			if err := attributevalue.UnmarshalMap(item, &d); err != nil {
				return r, fmt.Errorf("decode deliveries: %w", err)
			}
			r.ds, r.sks = append(r.ds, listed(d, sk, item)), append(r.sks, sk)
		}
		if page.LastEvaluatedKey == nil {
			return r, nil
		}
		if len(r.ds) == limit || scanned >= maxScanPerPage {
			r.until = keyOf(page.LastEvaluatedKey)
			return r, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// stringAttr is item's string attribute name, "" if it has none.
func stringAttr(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// readOrder is the order in which mergeShards returns what the shards
// found: ascending (the dead listing's death order) or descending (the
// delivery log's newest first).
type readOrder int

const (
	ascending  readOrder = 1
	descending readOrder = -1
)

// end is the key past every other in the order: a read up to it was read
// to its end.
func (o readOrder) end() string {
	if o == ascending {
		return "~"
	}
	return ""
}

// compare is strings.Compare in the order.
func (o readOrder) compare(a, b string) int { return int(o) * strings.Compare(a, b) }

// mergeShards merges what the shards found past the same position (a nil
// read: one read to its end before), in order: the deliveries up to the
// nearest of the keys they were read up to (past it, one of them may hold
// deliveries not read yet), at most limit, and the cursor of the rest of
// query.
func mergeShards(reads []*deadRead, limit int, query string, order readOrder) ([]domain.Delivery, string) {
	type entry struct {
		d  domain.Delivery
		sk string
	}
	var all []entry
	until := order.end()
	for _, r := range reads {
		if r == nil {
			continue
		}
		for i, d := range r.ds {
			all = append(all, entry{d, r.sks[i]})
		}
		if u := cmp.Or(r.until, order.end()); order.compare(u, until) < 0 {
			until = u
		}
	}
	// Stable: of two entries of one key (a delivery's record and its row
	// of an outcome page, the record's shard read first), the first is
	// listed, but for a record a row beats (rowMayWin).
	slices.SortStableFunc(all, func(a, b entry) int { return order.compare(a.sk, b.sk) })
	kept := all[:0]
	for _, e := range all {
		if n := len(kept); n > 0 && kept[n-1].sk == e.sk {
			if rowMayWin(kept[n-1].d) && e.d.State == domain.StateDelivered {
				kept[n-1] = e
			}
			continue
		}
		kept = append(kept, e)
	}
	all = kept
	var out []domain.Delivery
	for _, e := range all {
		if order.compare(e.sk, until) > 0 {
			break
		}
		if len(out) == limit {
			until = all[len(out)-1].sk
			break
		}
		out = append(out, e.d)
	}
	if until == order.end() {
		return out, ""
	}
	// A shard is read to its end if its query was, and every delivery it
	// found is returned.
	var done uint64
	for n, r := range reads {
		if r == nil || (r.until == "" && (len(r.sks) == 0 || order.compare(r.sks[len(r.sks)-1], until) <= 0)) {
			done |= 1 << n
		}
	}
	return out, EncodeDeadCursor(DeadCursor{SK: until, Q: query, X: done})
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
