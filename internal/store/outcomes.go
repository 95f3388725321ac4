package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/store/keys"
)

// Outcome pages: a delivery delivered at its first attempt, the common
// case, has no record of its own. RecordFirstAttempts packs a batch's such
// deliveries into pages, one per tenant and second of the events' time
// (which the delivery id carries, with the tenant's hash), instead of a
// record each (1 KB write unit each, however small):
//
//	pk  OUTCOMES#<tenant hash>#<n>   n one of OutcomeShards, by hash and second
//	sk  <second, UTC, "2006-01-02T15:04:05">#<digest of the ids>
//
// with the tenant's id, state "delivered", an expiry (TTL) and the
// deliveries as rows of one JSON attribute (pageBody). Every other
// attempt, death, claim or cancel keeps a record, as before.
//
// An id names its page's partition and second, so a delivery is found by
// one Query of that second (Delivery, after its record's GetItem; Load,
// beside its records' BatchGetItem, a Query per second of its ids); a tenant's
// delivery log merges the OutcomeShards shards with its records' (the
// pages of a second are all in one shard, read to the second's end). A
// record of the same id wins over a row, but for a record that saw no
// attempt (a cancel that raced the delivery): the delivered row does.
//
// The key's digest makes a page of other deliveries a page of its own: a
// batch tried again with the same deliveries writes its page over, one of
// a redelivered message beside others writes another page, and the id is
// then on two pages (its latest row is read).

// OutcomeShards is how many partitions a tenant's outcome pages spread
// over: all the pages of one second are in one of them (so that a delivery
// is one Query), the seconds spread. One partition takes 1,000 write
// units a second, about 10,000 deliveries of one tenant and second at a
// unit a page of ten; a page that DynamoDB leaves unprocessed is written
// again, then as records. Part of the stored data: changing it moves no page.
const OutcomeShards = 4

// maxOutcomeRows bounds a page's rows: 100 rows of at most 4 ids, a type,
// an error and a 1 KB response excerpt stay far below DynamoDB's 400 KB
// item (TestTheLargestOutcomePageFitsAnItem).
const maxOutcomeRows = 100

// maxOutcomeQueries bounds the queries (1 MB each) that read one second of
// a shard: 16 MB of one tenant's deliveries in one second, more than a
// partition takes in writes in a second. A second past it is refused
// (ErrSecondTooLarge), not read without end.
const maxOutcomeQueries = 16

// outcomePagesPerQuery bounds the pages a listing's query reads at once.
const outcomePagesPerQuery = 100

// ErrSecondTooLarge is a second of one tenant's outcome pages in one shard
// that maxOutcomeQueries queries do not read.
var ErrSecondTooLarge = errors.New("one second of outcome pages is more than a listing reads")

// outcomeSecond is the second of t, as a page's sort key begins.
func outcomeSecond(t time.Time) string { return t.UTC().Format(secondFormat) }

// secondFormat is a page's second in its sort key.
const secondFormat = "2006-01-02T15:04:05"

// outcomesPK is the partition of the pages of the tenants of hash th and
// second sec.
func outcomesPK(th, sec string) string {
	return keys.Outcomes(th, int(fnv32(th+"#"+sec)%OutcomeShards))
}

// outcomePartitions are the partitions of tenantID's outcome pages.
func outcomePartitions(tenantID string) []string {
	return hashPartitions(tenantID, OutcomeShards, keys.Outcomes)
}

// outcomeRow is a delivery of an outcome page.
type outcomeRow struct {
	ID, Endpoint, Event, Type string
	Number                    int
	At                        int64 // the attempt's time, Unix ms
	Status                    int
	LatencyMS                 int64
	Error, Excerpt            string
	Expires                   int64 // the page's, Unix s
}

// A page's rows attribute is JSON, written small (a page of ten of the
// cost model's deliveries is one write unit: about 65 bytes a row):
//
//	{"e": [endpoint ids], "t": [event types], "r": [rows]}
//
// a row [event id, endpoint index, type index, the event's millisecond in
// the page's second, the attempt's Unix ms, status, latency ms, error,
// excerpt, attempt number, delivery id], its trailing fields left out at
// their defaults ("", "", 1, and the id that domain.DeliveryID makes of
// the tenant, event, endpoint and time: every id of this version's).
type pageBody struct {
	E []string            `json:"e"`
	T []string            `json:"t"`
	R [][]json.RawMessage `json:"r"`
}

// encodeRows is the rows attribute of rows, of tenantID's page of second
// sec.
func encodeRows(tenantID string, sec time.Time, rows []outcomeRow) ([]byte, error) {
	var eps, typs []string
	index := func(list *[]string, v string) int {
		if i := slices.Index(*list, v); i >= 0 {
			return i
		}
		*list = append(*list, v)
		return len(*list) - 1
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		p, _ := domain.ParseDeliveryID(r.ID)
		row := []any{r.Event, index(&eps, r.Endpoint), index(&typs, r.Type), p.At.Sub(sec).Milliseconds(), r.At, r.Status, r.LatencyMS, r.Error, r.Excerpt, r.Number, r.ID}
		n := len(row)
		if domain.DeliveryID(tenantID, r.Event, r.Endpoint, p.At) == r.ID {
			n-- // the id is made again
			for n > 7 && row[n-1] == [...]any{"", "", 1}[n-8] {
				n--
			}
		}
		out[i] = row[:n]
	}
	return json.Marshal(map[string]any{"e": eps, "t": typs, "r": out})
}

// decodeRows reads a rows attribute (encodeRows) of tenantID's page of
// second sec, expiring at expires.
func decodeRows(tenantID string, sec time.Time, expires int64, b []byte) ([]outcomeRow, error) {
	var body pageBody
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	rows := make([]outcomeRow, len(body.R))
	for i, raw := range body.R {
		r := outcomeRow{Number: 1, Expires: expires}
		var ei, ti int
		var offset int64
		fields := []any{&r.Event, &ei, &ti, &offset, &r.At, &r.Status, &r.LatencyMS, &r.Error, &r.Excerpt, &r.Number, &r.ID}
		if len(raw) < 7 || len(raw) > len(fields) {
			return nil, fmt.Errorf("outcome row of %d fields", len(raw))
		}
		for j := range raw {
			if err := json.Unmarshal(raw[j], fields[j]); err != nil {
				return nil, err
			}
		}
		if ei < 0 || ei >= len(body.E) || ti < 0 || ti >= len(body.T) {
			return nil, fmt.Errorf("outcome row of an endpoint or type the page does not name")
		}
		r.Endpoint, r.Type = body.E[ei], body.T[ti]
		if r.ID == "" {
			r.ID = domain.DeliveryID(tenantID, r.Event, r.Endpoint, sec.Add(time.Duration(offset)*time.Millisecond))
		}
		rows[i] = r
	}
	return rows, nil
}

// delivery is the delivery r is, of tenantID: delivered at its first
// attempt, as its record would say.
func (r outcomeRow) delivery(tenantID string) domain.Delivery {
	at := time.UnixMilli(r.At).UTC()
	return domain.Delivery{
		DeliveryID: r.ID, TenantID: tenantID, EndpointID: r.Endpoint, EventID: r.Event, EventType: r.Type,
		State: domain.StateDelivered, CreatedAt: at, DeliveredAt: &at, Attempts: 1, LastStatus: r.Status, LastError: r.Error,
		AttemptLog: []domain.Attempt{{Number: r.Number, At: at, Status: r.Status, Error: r.Error, LatencyMS: r.LatencyMS, Excerpt: r.Excerpt}},
		Packed:     true,
	}
}

// outcomePage is a page being formed.
type outcomePage struct {
	tenant, th, sec string
	rows            []outcomeRow
	at              []int // each row's index in RecordFirstAttempts' firsts
}

// item is the page's table item. Its sort key's digest is of its ids, in
// order: the same deliveries make the same page.
func (p *outcomePage) item() (map[string]types.AttributeValue, error) {
	ids := make([]string, len(p.rows))
	var expires int64
	for i, r := range p.rows {
		ids[i] = r.ID
		expires = max(expires, r.Expires)
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, "\x00")))
	sec, _ := time.Parse(secondFormat, p.sec)
	body, err := encodeRows(p.tenant, sec, p.rows)
	if err != nil {
		return nil, err
	}
	return map[string]types.AttributeValue{
		"pk":         &types.AttributeValueMemberS{Value: outcomesPK(p.th, p.sec)},
		"sk":         &types.AttributeValueMemberS{Value: p.sec + "#" + base64.RawURLEncoding.EncodeToString(sum[:9])},
		"tenant_id":  &types.AttributeValueMemberS{Value: p.tenant},
		"state":      &types.AttributeValueMemberS{Value: string(domain.StateDelivered)},
		"rows":       &types.AttributeValueMemberS{Value: string(body)},
		"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(expires, 10)},
	}, nil
}

// OutcomeRows are the deliveries of an outcome page item (its rows, as
// Delivery reads them), expired ones included; an item that is no outcome
// page has none.
func OutcomeRows(item map[string]types.AttributeValue) ([]domain.Delivery, error) {
	if !strings.HasPrefix(stringAttr(item, "pk"), keys.OutcomesPrefix) {
		return nil, nil
	}
	rows, err := pageRows(item)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.delivery(stringAttr(item, "tenant_id"))
	}
	return out, nil
}

func pageRows(item map[string]types.AttributeValue) ([]outcomeRow, error) {
	sk := stringAttr(item, "sk")
	secText, _, _ := strings.Cut(sk, "#")
	sec, err := time.Parse(secondFormat, secText)
	if err != nil {
		return nil, fmt.Errorf("decode outcome page %s: %w", sk, err)
	}
	rows, err := decodeRows(stringAttr(item, "tenant_id"), sec, int64(numberAttr(item, "expires_at")), []byte(stringAttr(item, "rows")))
	if err != nil {
		return nil, fmt.Errorf("decode outcome page %s: %w", sk, err)
	}
	return rows, nil
}

// outcomeGroup is the ids packedDeliveries looks for in one partition
// and second of outcome pages.
type outcomeGroup struct {
	pk, sec string
	want    map[string]bool
}

// outcomeGroups groups ids (those that carry a time) by page partition
// and second.
func outcomeGroups(ids []string) []*outcomeGroup {
	groups := map[string]*outcomeGroup{}
	var order []*outcomeGroup
	for _, id := range ids {
		p, ok := domain.ParseDeliveryID(id)
		if !ok {
			continue
		}
		sec := outcomeSecond(p.At)
		pk := outcomesPK(p.TenantHash, sec)
		g := groups[pk+"#"+sec]
		if g == nil {
			g = &outcomeGroup{pk: pk, sec: sec, want: map[string]bool{}}
			groups[pk+"#"+sec] = g
			order = append(order, g)
		}
		g.want[id] = true
	}
	return order
}

// packedDeliveries reads the deliveries ids (those whose ids carry a time:
// a legacy id is never packed) from their outcome pages: one Query (of at
// most maxOutcomeQueries pages of results) per tenant hash and second of
// the ids, at most deadParallel at once, each reading its second's pages
// (at most maxOutcomeQueries queries of 1 MB). A row past
// its expiry is not read; an id on two pages is read from its latest row.
func (s *Store) packedDeliveries(ctx context.Context, ids []string, consistent bool) (map[string]domain.Delivery, error) {
	order := outcomeGroups(ids)
	out := map[string]domain.Delivery{}
	var mu sync.Mutex
	now := s.Now().Unix()
	err := fanout.Each(len(order), deadParallel, func(n int) error {
		g := order[n]
		in := &dynamodb.QueryInput{
			TableName: &s.table, ConsistentRead: aws.Bool(consistent),
			KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk":   &types.AttributeValueMemberS{Value: g.pk},
				":from": &types.AttributeValueMemberS{Value: g.sec + "#"},
				":to":   &types.AttributeValueMemberS{Value: g.sec + "#~"},
			},
		}
		return s.eachOutcomePage(ctx, in, g.sec, func(item map[string]types.AttributeValue, rows []outcomeRow) {
			tenant := stringAttr(item, "tenant_id")
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rows {
				if had, ok := out[r.ID]; g.want[r.ID] && r.Expires >= now && (!ok || had.CreatedAt.UnixMilli() < r.At) {
					out[r.ID] = r.delivery(tenant)
				}
			}
		})
	})
	return out, err
}

// eachOutcomePage runs in (a query of one second, sec, of a partition of
// outcome pages) to its end, at most maxOutcomeQueries queries, and hands
// each page and its rows to f.
func (s *Store) eachOutcomePage(ctx context.Context, in *dynamodb.QueryInput, sec string, f func(map[string]types.AttributeValue, []outcomeRow)) error {
	for q := 0; q < maxOutcomeQueries; q++ {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("read the outcome pages of %s: %w", sec, err)
		}
		for _, item := range page.Items {
			rows, err := pageRows(item)
			if err != nil {
				return err
			}
			f(item, rows)
		}
		if page.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return fmt.Errorf("read the outcome pages of %s: %w", sec, ErrSecondTooLarge)
}

// rowMayWin reports whether a delivered row of d's id is truer than d's
// record: a record no attempt wrote (a cancel that created it, racing the
// delivery that a row then recorded).
func rowMayWin(d domain.Delivery) bool {
	return d.State == domain.StateCancelled && d.Attempts == 0
}

// queryOutcomes reads the rows of pk, one of tenantID's shards of outcome
// pages, that f selects, newest first, before cursor c (nil: from the
// newest): whole seconds, until it has limit rows, the shard ends, or
// maxOutcomeQueries queries read one second (ErrSecondTooLarge). Pages are
// filtered here (a row is no attribute): every filter of f, the tenant,
// the expiry. Its until, when the shard has more, is the start of the
// last second read (<its time>#!): every row of the seconds after it was
// read.
func (s *Store) queryOutcomes(ctx context.Context, pk, tenantID string, f domain.DeliveryFilter, c *DeadCursor, limit int) (deadRead, error) {
	var r deadRead
	in, cut, ok := outcomesQuery(s.table, pk, f, c)
	if !ok {
		return r, nil
	}
	now := s.Now().Unix()
	last, inSecond := "", 0 // the second being read, the queries it took
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return r, err
		}
		for _, item := range page.Items {
			sec, _, _ := strings.Cut(stringAttr(item, "sk"), "#")
			if sec != last && len(r.ds) >= limit && last != "" {
				// The second before is whole: stop at its start, a
				// position a cursor can hold (before every id of it:
				// "!" sorts first).
				t, _ := time.Parse(secondFormat, last)
				r.until = sortableTime(t) + "#!"
				sortRead(&r)
				return r, nil
			}
			if sec != last {
				last, inSecond = sec, 0
			}
			if err := listRows(&r, item, tenantID, f, cut, now); err != nil {
				return r, err
			}
		}
		if page.LastEvaluatedKey == nil {
			sortRead(&r)
			return r, nil
		}
		if inSecond++; inSecond >= maxOutcomeQueries {
			return r, fmt.Errorf("list the outcome pages of %s: %w", last, ErrSecondTooLarge)
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// outcomesQuery is the query of partition pk of outcome pages for f's
// seconds, newest first, up to cursor c's second, and the listing key the
// rows are to be before (c's; "" for none); false when f selects no row
// (a state other than delivered, a range with nothing in it).
func outcomesQuery(table, pk string, f domain.DeliveryFilter, c *DeadCursor) (*dynamodb.QueryInput, string, bool) {
	if f.State != "" && f.State != domain.StateDelivered {
		return nil, "", false // a row is delivered
	}
	lo, hi := "0000", "9999~"
	if !f.Since.IsZero() {
		lo = outcomeSecond(f.Since)
	}
	if !f.Until.IsZero() {
		hi = outcomeSecond(f.Until) + "#~"
	}
	cut := ""
	if c != nil {
		if at, _, ok := cutTime(c.SK); ok {
			hi, cut = min(hi, outcomeSecond(at)+"#~"), c.SK
		}
	}
	return &dynamodb.QueryInput{
		TableName: &table, ScanIndexForward: aws.Bool(false), Limit: aws.Int32(outcomePagesPerQuery),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: pk},
			":from": &types.AttributeValueMemberS{Value: lo},
			":to":   &types.AttributeValueMemberS{Value: hi},
		},
	}, cut, hi >= lo
}

// listRows adds to r the rows of page item that a listing of tenantID by
// f lists: the tenant's, not expired at now, before cut ("" none).
func listRows(r *deadRead, item map[string]types.AttributeValue, tenantID string, f domain.DeliveryFilter, cut string, now int64) error {
	if stringAttr(item, "tenant_id") != tenantID {
		return nil // another tenant of the same hash
	}
	rows, err := pageRows(item)
	if err != nil {
		return err
	}
	for _, row := range rows {
		p, ok := domain.ParseDeliveryID(row.ID)
		if !ok || row.Expires < now {
			continue
		}
		k := sortableTime(p.At) + "#" + row.ID
		d := row.delivery(tenantID)
		if (cut == "" || k < cut) && selects(f, p.At, d) {
			r.ds, r.sks = append(r.ds, LogListed(d)), append(r.sks, k)
		}
	}
	return nil
}

// selects reports whether f selects the delivered delivery d, of its
// event's time at (as the records' query and filter do).
func selects(f domain.DeliveryFilter, at time.Time, d domain.Delivery) bool {
	return (f.Since.IsZero() || !at.Before(f.Since.Truncate(time.Millisecond))) &&
		(f.Until.IsZero() || !at.After(f.Until.Truncate(time.Millisecond))) &&
		(f.EndpointID == "" || d.EndpointID == f.EndpointID) &&
		(f.EventType == "" || d.EventType == f.EventType) &&
		(f.Status == 0 || d.LastStatus == f.Status) &&
		(f.Class == "" || f.Class.Matches(d.LastStatus, d.LastError))
}

// sortRead puts r's deliveries newest first, as a shard's query reads
// records.
func sortRead(r *deadRead) {
	idx := make([]int, len(r.ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(r.sks[b], r.sks[a]) })
	ds, sks := make([]domain.Delivery, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		ds[i], sks[i] = r.ds[j], r.sks[j]
	}
	r.ds, r.sks = ds, sks
}
