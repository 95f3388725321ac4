package store

import (
	"context"
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

// DefaultStatsRetention is a new Store's StatsRetention: 35 days, so that
// 30 days of hours are always there to read.
const DefaultStatsRetention = 35 * 24 * time.Hour

// StatsShards is how many partitions an endpoint's hour item is spread
// over (STATS#<t>#<e>#<n> / <hour>): each batch's UpdateItem (1 WCU)
// goes to the next shard of its store (statsShard), so one endpoint takes
// 8,000 batches a second (80,000 events with batches of 10) before a
// shard reaches its partition's 1,000 WCU, where one item took 1,000. A
// read queries every shard and the partition of before the shards (9
// Queries, half a read unit each for an hour's few items): more shards
// would cost every stats and health read another Query for writes no
// endpoint makes.
const StatsShards = 8

// hourFormat is an hour bucket's sort key: fixed-width RFC 3339, UTC.
const hourFormat = "2006-01-02T15:04:05Z"

// Stats item attributes (short names keep the item well under 1 KB, one
// write unit): counters, the latency histogram's buckets l00..l27 and the
// newest success and failure.
const (
	attrAttempts   = "attempts"
	attrDelivered  = "delivered"
	failurePrefix  = "f_"
	latencyPrefix  = "l"
	attrLastOK     = "last_ok_at"
	attrLastFail   = "last_fail_at"
	attrLastStatus = "last_fail_status"
	attrLastError  = "last_fail_error"
)

func latencyAttr(i int) string { return fmt.Sprintf("%s%02d", latencyPrefix, i) }

// statsShard is the shard the store's next AddEndpointStats writes to:
// its writes in turn, so each of its shards takes an equal share (within
// one write) of every second's writes whatever the others do.
func (s *Store) statsShard() int { return int((s.statsNext.Add(1) - 1) % StatsShards) }

// AddEndpointStats adds a batch's attempt counters to an endpoint's bucket
// of the hour that starts at hour, in one of its StatsShards shards
// (statsShard): one UpdateItem, which creates the shard's item if it is
// not there (ADD of each counter; the histogram's buckets with a count
// only). The newest success and failure of st are SET, replacing the
// shard's (the last writer's win: concurrent batches are seconds apart; a
// read takes the newest of the shards'). The item expires StatsRetention
// after its hour.
func (s *Store) AddEndpointStats(ctx context.Context, tenantID, endpointID string, hour time.Time, st domain.AttemptStats) error {
	hour = domain.StatsHour(hour)
	vals := map[string]types.AttributeValue{}
	set := []string{"expires_at = :exp"}
	vals[":exp"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(s.statsRetention()).Unix(), 10)}
	set = append(set, lastSets(st, vals)...)
	expr := "SET " + strings.Join(set, ", ")
	if add := counterAdds(st, vals); len(add) > 0 {
		expr += " ADD " + strings.Join(add, ", ")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(keys.StatsShard(tenantID, endpointID, s.statsShard()), hour.Format(hourFormat)),
		UpdateExpression: &expr, ExpressionAttributeValues: vals,
	})
	if err != nil {
		return fmt.Errorf("add stats of endpoint %s: %w", endpointID, err)
	}
	return nil
}

// counterAdds are the ADD clauses of st's counters (attempts, delivered,
// each failure class and histogram bucket with a count), their values put
// in vals.
func counterAdds(st domain.AttemptStats, vals map[string]types.AttributeValue) []string {
	var add []string
	addIf := func(attr string, v int64) {
		if v != 0 {
			ph := fmt.Sprintf(":a%d", len(add))
			add = append(add, attr+" "+ph)
			vals[ph] = &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
		}
	}
	addIf(attrAttempts, st.Attempts)
	addIf(attrDelivered, st.Delivered)
	for _, c := range domain.FailureClasses {
		addIf(failurePrefix+string(c), st.Failures[c])
	}
	for i, v := range st.Latency {
		addIf(latencyAttr(i), v)
	}
	return add
}

// lastSets are the SET clauses of st's newest success and failure.
func lastSets(st domain.AttemptStats, vals map[string]types.AttributeValue) []string {
	var set []string
	if st.LastSuccessAt != nil {
		set = append(set, attrLastOK+" = :ok")
		vals[":ok"] = &types.AttributeValueMemberS{Value: sortableTime(*st.LastSuccessAt)}
	}
	if f := st.LastFailure; f != nil {
		set = append(set, attrLastFail+" = :fat", attrLastStatus+" = :fst", attrLastError+" = :fer")
		vals[":fat"] = &types.AttributeValueMemberS{Value: sortableTime(f.At)}
		vals[":fst"] = &types.AttributeValueMemberN{Value: strconv.Itoa(f.Status)}
		vals[":fer"] = &types.AttributeValueMemberS{Value: f.Error}
	}
	return set
}

func (s *Store) statsRetention() time.Duration {
	if s.StatsRetention > 0 {
		return s.StatsRetention
	}
	return DefaultStatsRetention
}

// EndpointStats reads an endpoint's hour buckets whose hour starts in
// [since, until), oldest first: a Query of each of its stats partitions
// (statsPartitions: the shards and the partition of before them), whose
// items of one hour are merged into its bucket (counts and histogram
// buckets added, the newest success and failure kept). An hour without
// attempts has no bucket.
func (s *Store) EndpointStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error) {
	var out []domain.StatsBucket
	if !since.Before(until) {
		return out, nil // BETWEEN refuses an upper bound below its lower
	}
	hours := map[time.Time]*domain.StatsBucket{}
	var mu sync.Mutex
	pks := statsPartitions(tenantID, endpointID)
	err := fanout.Each(len(pks), 0, func(i int) error {
		return s.statsRange(ctx, pks[i], since, until, func(b domain.StatsBucket) {
			mu.Lock()
			defer mu.Unlock()
			if m := hours[b.Start]; m != nil {
				m.Merge(b.AttemptStats)
				return
			}
			hours[b.Start] = &b
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query stats of endpoint %s: %w", endpointID, err)
	}
	for _, b := range hours {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b domain.StatsBucket) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// statsRange calls f with each item of stats partition pk whose hour
// starts in [since, until).
func (s *Store) statsRange(ctx context.Context, pk string, since, until time.Time, f func(domain.StatsBucket)) error {
	return hourRange(ctx, s, pk, since, until, "", decodeStats, func(b domain.StatsBucket) time.Time { return b.Start }, f)
}

// hourRange calls f with each item of partition pk whose sort key starts
// with an hour (hourFormat) in [since, until), decoded by decode, start
// the hour it holds: a paged Query. Keys are whole seconds and BETWEEN
// includes its ends, so the range ends at the last second before until,
// then toSuffix: "" for the hour items, "$" for the type items, whose keys
// are "<hour>#<type>" ('$' sorts after '#').
func hourRange[T any](ctx context.Context, s *Store, pk string, since, until time.Time, toSuffix string,
	decode func(map[string]types.AttributeValue) (T, error), start func(T) time.Time, f func(T)) error {
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":   &types.AttributeValueMemberS{Value: pk},
			":from": &types.AttributeValueMemberS{Value: since.UTC().Format(hourFormat)},
			":to":   &types.AttributeValueMemberS{Value: until.UTC().Add(-time.Nanosecond).Format(hourFormat) + toSuffix},
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			b, err := decode(item)
			if err != nil {
				return fmt.Errorf("decode: %w", err)
			}
			if at := start(b); !at.Before(since) && at.Before(until) {
				f(b)
			}
		}
	}
	return nil
}

// LastAttempts finds an endpoint's newest success and newest failure in its
// kept buckets (StatsRetention): the newest of those found in each of its
// stats partitions (statsPartitions). Either is nil when no kept bucket
// has one.
func (s *Store) LastAttempts(ctx context.Context, tenantID, endpointID string) (*time.Time, *domain.AttemptFailure, error) {
	pks := statsPartitions(tenantID, endpointID)
	found := make([]domain.AttemptStats, len(pks))
	err := fanout.Each(len(pks), 0, func(i int) (err error) {
		found[i], err = s.lastIn(ctx, pks[i])
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("query stats of endpoint %s: %w", endpointID, err)
	}
	var last domain.AttemptStats
	for _, f := range found {
		last.Merge(f)
	}
	return last.LastSuccessAt, last.LastFailure, nil
}

// lastIn finds the newest success and failure of stats partition pk: a
// Query, newest first, 24 items a page, that stops as soon as both are
// found.
func (s *Store) lastIn(ctx context.Context, pk string) (domain.AttemptStats, error) {
	var last domain.AttemptStats
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
		},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(24),
	})
	for p.HasMorePages() && (last.LastSuccessAt == nil || last.LastFailure == nil) {
		page, err := p.NextPage(ctx)
		if err != nil {
			return last, err
		}
		for _, item := range page.Items {
			b, err := decodeStats(item)
			if err != nil {
				return last, fmt.Errorf("decode: %w", err)
			}
			last.Merge(domain.AttemptStats{LastSuccessAt: b.LastSuccessAt, LastFailure: b.LastFailure})
		}
	}
	return last, nil
}

// decodeStats reads an hour bucket's item.
func decodeStats(item map[string]types.AttributeValue) (domain.StatsBucket, error) {
	var b domain.StatsBucket
	sk, _ := item["sk"].(*types.AttributeValueMemberS)
	if sk == nil {
		return b, fmt.Errorf("stats item without a sort key")
	}
	start, err := time.Parse(hourFormat, sk.Value)
	if err != nil {
		return b, fmt.Errorf("stats item %q: %w", sk.Value, err)
	}
	b.Start = start
	b.AttemptStats = decodeCounters(item)
	num := func(attr string) int64 { return numAttr(item, attr) }
	b.LastSuccessAt = timeAttr(item, attrLastOK)
	if at := timeAttr(item, attrLastFail); at != nil {
		f := &domain.AttemptFailure{At: *at, Status: int(num(attrLastStatus))}
		if e, ok := item[attrLastError].(*types.AttributeValueMemberS); ok {
			f.Error = e.Value
		}
		b.LastFailure = f
	}
	return b, nil
}

// decodeCounters reads the counters of a stats item (an hour's, or an hour
// and type's): attempts, delivered, failures by class, the histogram.
func decodeCounters(item map[string]types.AttributeValue) domain.AttemptStats {
	var st domain.AttemptStats
	st.Attempts, st.Delivered = numAttr(item, attrAttempts), numAttr(item, attrDelivered)
	for _, c := range domain.FailureClasses {
		if v := numAttr(item, failurePrefix+string(c)); v != 0 {
			if st.Failures == nil {
				st.Failures = map[domain.AttemptClass]int64{}
			}
			st.Failures[c] = v
		}
	}
	for i := range st.Latency {
		st.Latency[i] = numAttr(item, latencyAttr(i))
	}
	return st
}

// numAttr is a number attribute of item, 0 when absent or unreadable.
func numAttr(item map[string]types.AttributeValue, attr string) int64 {
	v, _ := item[attr].(*types.AttributeValueMemberN)
	if v == nil {
		return 0
	}
	n, _ := strconv.ParseInt(v.Value, 10, 64)
	return n
}

// timeAttr is a time attribute of item, nil when absent or unreadable.
func timeAttr(item map[string]types.AttributeValue, attr string) *time.Time {
	v, ok := item[attr].(*types.AttributeValueMemberS)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v.Value)
	if err != nil {
		return nil
	}
	return &t
}
