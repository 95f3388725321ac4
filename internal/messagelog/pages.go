package messagelog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
)

// Pages of the message log: enqueue lists the events of a stream batch
// that the outbox's index does not (items without log_pk: every item of
// outbox.Event.Item since pages replaced the index entry) in the state
// table, a page per tenant and second of occurred_at, instead of each
// event paying for an index entry. A page's key:
//
//	pk  TENANT#<tenant>#EVENTS#<n>   n one of PageShards, by the first id
//	sk  <second of occurred_at, UTC, "2006-01-02T15:04:05">#<first id>
//
// and it holds its events (at most maxPageEntries) as one JSON attribute.
// The key derives from the page's first event (in stream order) and its
// second, so a stream batch tried again writes the same pages over; a
// batch split differently on a retry may list an event on two pages, and
// the listing, merged in log key order, lists it once.
//
// Every event of a page falls in its second, so a listing that has read a
// shard's pages down to a second knows every event of the seconds after
// it: it reads each shard to the end of a second before listing (one
// second of a tenant's events over at most maxBucketQueries queries).

// PageShards is how many partitions a tenant's pages spread over:
// DynamoDB takes 1,000 write units a second on one partition key value,
// and a page holds about ten events a unit, so a tenant's events can be
// paged at about 40,000 a second, while a listing queries 4 partitions.
// Part of the stored data: changing it moves no page already written.
const PageShards = 4

// maxPageEntries bounds a page: 100 events of at most 3 ids and a type of
// outbox.MaxIDBytes each (about 1.1 KB with the JSON) stay far below
// DynamoDB's 400 KB item.
const maxPageEntries = 100

// maxBucketQueries bounds the queries of one shard's read while it looks
// for the end of a second, each of at most pagesPerQuery pages and 1 MB:
// 1,600 pages or 16 MB of one tenant's events in one second of one shard,
// more than the 1,000 write units a second a partition takes (a page is
// at least one).
const maxBucketQueries = 16

// pagesPerQuery is a listing query's Limit: 100 full pages (about 9 KB
// each) are under DynamoDB's 1 MB a query.
const pagesPerQuery = 100

// pageWrites bounds the BatchWriteItem requests of one Write that end
// with items unprocessed (DynamoDB throttled them) before Write fails:
// the stream then tries the batch again.
const pageWrites = 5

// Attributes of a page item, beside pk, sk and expires_at.
const (
	attrPageTenant = "tenant_id"
	attrPageEvents = "events"
)

// Entry is one event as the message log lists it.
type Entry struct {
	ID, TenantID, Type, EndpointID string
	OccurredAt                     time.Time
	// ExpiresAt is when the outbox item expires (its expires_at), after
	// which the log no longer lists it; zero: it does not.
	ExpiresAt time.Time
}

// PagesDB is what Pages needs of DynamoDB.
type PagesDB interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ PagesDB = (*dynamodb.Client)(nil)

// Pages are the message log's pages in the state table: enqueue writes
// them (Write), the Reader lists them, the erasure deletes them. Build it
// with a literal.
type Pages struct {
	DB PagesDB
	// Table is the state table's name. Required.
	Table string
	// Now is the clock that expires entries. Default time.Now.
	Now func() time.Time
	// Backoff is the wait before writing unprocessed items again, doubled
	// each time. Default 25 ms.
	Backoff time.Duration
}

func (p *Pages) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Page is one page: its key and its events.
type Page struct {
	PK, SK  string
	Entries []Entry
}

// bucket is the second of t as a page's sort key begins with it.
func bucket(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

// bucketChars is the length of a bucket, the first characters of a log key
// of a time in it.
const bucketChars = len("2006-01-02T15:04:05")

// bucketEnd is the position after every log key of the second b: a key
// of b's last nanosecond, then "$" (after "#").
func bucketEnd(b string) string { return b + ".999999999Z$" }

// Paginate groups entries (in stream order) into pages: per tenant and
// second, at most maxPageEntries each, keyed by their first entry.
func Paginate(entries []Entry) []Page {
	var pages []Page
	open := map[[2]string]int{} // (tenant, second) -> index of its page being filled
	for _, e := range entries {
		k := [2]string{e.TenantID, bucket(e.OccurredAt)}
		i, ok := open[k]
		if !ok || len(pages[i].Entries) == maxPageEntries {
			h := fnv.New32a()
			_, _ = h.Write([]byte(e.ID))
			pages = append(pages, Page{PK: keys.EventPages(e.TenantID, int(h.Sum32()%PageShards)), SK: k[1] + "#" + e.ID})
			i = len(pages) - 1
			open[k] = i
		}
		pages[i].Entries = append(pages[i].Entries, e)
	}
	return pages
}

// item is page p as stored: expires_at the latest of its entries', none
// when one of them does not expire. An entry is a JSON array of strings:
// id, type, occurred_at (Unix nanoseconds), endpoint id, and its expiry:
// "" for the outbox's default (occurred_at + outbox.DefaultRetention, what
// Item writes unless told otherwise), "-" for none, else Unix seconds.
func (p Page) item() (map[string]types.AttributeValue, error) {
	rows := make([][5]string, len(p.Entries))
	var expires int64
	never := false
	for i, e := range p.Entries {
		rows[i] = [5]string{e.ID, e.Type, strconv.FormatInt(e.OccurredAt.UnixNano(), 10), e.EndpointID, ""}
		switch {
		case e.ExpiresAt.IsZero():
			never, rows[i][4] = true, "-"
		case e.ExpiresAt.Unix() != e.OccurredAt.Add(outbox.DefaultRetention).Unix():
			rows[i][4] = strconv.FormatInt(e.ExpiresAt.Unix(), 10)
		}
		expires = max(expires, e.ExpiresAt.Unix())
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: p.PK}, "sk": &types.AttributeValueMemberS{Value: p.SK},
		attrPageTenant: &types.AttributeValueMemberS{Value: p.Entries[0].TenantID},
		attrPageEvents: &types.AttributeValueMemberS{Value: string(b)},
	}
	if !never {
		it["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(expires, 10)}
	}
	return it, nil
}

// pageOf reads a stored page; one of another tenant than tenantID (which
// a page written here never is) is an error.
func pageOf(it map[string]types.AttributeValue, tenantID string) (Page, error) {
	p := Page{PK: str(it, "pk"), SK: str(it, "sk")}
	if t := str(it, attrPageTenant); t != tenantID {
		return p, fmt.Errorf("message log page %s %s: tenant %q, not %q", p.PK, p.SK, t, tenantID)
	}
	var rows [][5]string
	if err := json.Unmarshal([]byte(str(it, attrPageEvents)), &rows); err != nil {
		return p, fmt.Errorf("message log page %s %s: %w", p.PK, p.SK, err)
	}
	p.Entries = make([]Entry, 0, len(rows))
	for _, r := range rows {
		at, err := strconv.ParseInt(r[2], 10, 64)
		if err != nil {
			return p, fmt.Errorf("message log page %s %s: occurred_at of %s: %w", p.PK, p.SK, r[0], err)
		}
		e := Entry{ID: r[0], TenantID: tenantID, Type: r[1], OccurredAt: time.Unix(0, at).UTC(), EndpointID: r[3]}
		switch r[4] {
		case "":
			e.ExpiresAt = time.Unix(e.OccurredAt.Add(outbox.DefaultRetention).Unix(), 0)
		case "-":
		default:
			exp, err := strconv.ParseInt(r[4], 10, 64)
			if err != nil {
				return p, fmt.Errorf("message log page %s %s: expires_at of %s: %w", p.PK, p.SK, r[0], err)
			}
			e.ExpiresAt = time.Unix(exp, 0)
		}
		p.Entries = append(p.Entries, e)
	}
	return p, nil
}

// Write writes the pages of entries (Paginate), 25 a BatchWriteItem
// request, writing again what DynamoDB leaves unprocessed, at most
// pageWrites times: the error then names how many pages are unwritten.
func (p *Pages) Write(ctx context.Context, entries []Entry) error {
	var reqs []types.WriteRequest
	for _, pg := range Paginate(entries) {
		it, err := pg.item()
		if err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	left, err := store.BatchWrite(ctx, p.DB, p.Table, reqs, pageWrites, cmp.Or(p.Backoff, 25*time.Millisecond))
	switch {
	case err != nil:
		return fmt.Errorf("write the message log: %w", err)
	case len(left) > 0:
		return fmt.Errorf("write the message log: %d pages unprocessed after %d requests", len(left), pageWrites)
	}
	return nil
}

// Tenant answers tenantID's pages, from its shards in turn, until they
// hold limit entries: at most limit - 1 more, a page being whole (the
// erasure's listing: it deletes each page after its events).
func (p *Pages) Tenant(ctx context.Context, tenantID string, limit int) ([]Page, error) {
	var pages []Page
	entries := 0
	for n := 0; n < PageShards && entries < limit; n++ {
		out, err := p.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:                 &p.Table,
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: keys.EventPages(tenantID, n)}},
			Limit:                     aws.Int32(int32(limit - entries)), // a page holds one entry at least
		})
		if err != nil {
			return nil, fmt.Errorf("list the message log pages of %s: %w", tenantID, err)
		}
		for _, it := range out.Items {
			if entries >= limit {
				break
			}
			pg, err := pageOf(it, tenantID)
			if err != nil {
				return nil, err
			}
			pages, entries = append(pages, pg), entries+len(pg.Entries)
		}
	}
	return pages, nil
}

// Delete deletes a page.
func (p *Pages) Delete(ctx context.Context, pg Page) error {
	_, err := p.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &p.Table,
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pg.PK}, "sk": &types.AttributeValueMemberS{Value: pg.SK}},
	})
	if err != nil {
		return fmt.Errorf("delete message log page %s %s: %w", pg.PK, pg.SK, err)
	}
	return nil
}

// errBucketTooLarge is a second of one shard's pages that maxBucketQueries
// queries did not read to its end.
var errBucketTooLarge = errors.New("one second of the message log's pages exceeds what a listing reads")

// readPages reads the next events of page shard s: the pages of the
// seconds at and before s.hi's (within f's range), on to the end of a
// second (the pages of the second it stops in are read again next time:
// readSeconds), the events below s.hi that f selects, newest first, as
// items of the index's shape.
func (r *Reader) readPages(ctx context.Context, f domain.EventFilter, s *shard) error {
	lo, hi := bounds(f) // hi ends in "$": after every key of its nanosecond
	if s.hi != "" && (hi == "" || s.hi < hi) {
		hi = s.hi // a listed key (not listed again) or a position
	}
	from, to := "0", "~"
	if lo != "" {
		from = lo[:bucketChars]
	}
	if hi != "" {
		to = hi[:bucketChars] + "#~"
	}
	if from > to {
		s.done = true
		return nil
	}
	read, cut, err := r.readSeconds(ctx, s, from, to)
	if err != nil {
		return err
	}
	now := r.Pages.now()
	s.buf = s.buf[:0]
	for _, it := range read {
		if cut != "" && str(it, "sk")[:bucketChars] == cut {
			continue
		}
		pg, err := pageOf(it, s.tenant)
		if err != nil {
			return err
		}
		for _, e := range pg.Entries {
			k := outbox.LogKey(e.OccurredAt, e.ID)
			if (hi != "" && k >= hi) || (lo != "" && k < lo) ||
				(f.Type != "" && e.Type != f.Type) || (!e.ExpiresAt.IsZero() && !e.ExpiresAt.After(now)) {
				continue
			}
			s.buf = append(s.buf, entryItem(e, k))
		}
	}
	slices.SortFunc(s.buf, func(a, b map[string]types.AttributeValue) int { return strings.Compare(LogKey(b), LogKey(a)) })
	s.buf = slices.CompactFunc(s.buf, func(a, b map[string]types.AttributeValue) bool { return LogKey(a) == LogKey(b) })
	if cut != "" {
		s.last = bucketEnd(cut)
	}
	s.settle()
	return nil
}

// readSeconds queries shard s's pages with sort keys from to to, newest
// first, until it has read a second whole and met the next one (cut, whose
// pages may go on: the caller drops them), or the shard's end (s.end).
func (r *Reader) readSeconds(ctx context.Context, s *shard, from, to string) (read []map[string]types.AttributeValue, cut string, err error) {
	q := &dynamodb.QueryInput{
		TableName:              &r.Pages.Table,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: s.key}, ":from": &types.AttributeValueMemberS{Value: from}, ":to": &types.AttributeValueMemberS{Value: to},
		},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(pagesPerQuery),
	}
	for range maxBucketQueries {
		out, err := r.Pages.DB.Query(ctx, q)
		if err != nil {
			return nil, "", err
		}
		read = append(read, out.Items...)
		if s.end = out.LastEvaluatedKey == nil; s.end {
			return read, "", nil
		}
		if len(read) > 0 {
			if first, last := str(read[0], "sk")[:bucketChars], str(read[len(read)-1], "sk")[:bucketChars]; last < first {
				return read, last, nil
			}
		}
		q.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return nil, "", fmt.Errorf("%s: %w", s.key, errBucketTooLarge)
}

// entryItem is e as an item of the index's projection, with its log key k.
func entryItem(e Entry, k string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: e.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: e.TenantID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: e.Type},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: e.OccurredAt.Format(time.RFC3339Nano)},
		outbox.AttrLogKey:     &types.AttributeValueMemberS{Value: k},
	}
	if e.EndpointID != "" {
		it[outbox.AttrEndpointID] = &types.AttributeValueMemberS{Value: e.EndpointID}
	}
	return it
}
