package store

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/stretchr/testify/require"
)

// TestStatsItemIsOneWriteUnit holds the cost model's StatsWRU to the item
// AddEndpointStats writes at its largest: the longest tenant id (64), an
// endpoint id as long as the API makes, every counter and histogram bucket
// in the millions, a last success and a last failure with the longest
// error kept. Under 1 KB, each write of it is one write unit.
func TestStatsItemIsOneWriteUnit(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := New(db, "state")
	tenant, endpoint := strings.Repeat("t", 64), "ep_abcdefghijklmnop"
	hour := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	at := hour.Add(59*time.Minute + 59*time.Second + 999999999)
	st := domain.AttemptStats{
		Attempts: 99_999_999, Delivered: 99_999_999, Failures: map[domain.AttemptClass]int64{},
		LastSuccessAt: &at,
		LastFailure:   &domain.AttemptFailure{At: at, Status: 599, Error: strings.Repeat("e", domain.MaxFailureErrorBytes)},
	}
	for _, c := range domain.FailureClasses {
		st.Failures[c] = 99_999_999
	}
	for i := range st.Latency {
		st.Latency[i] = 99_999_999
	}
	require.NoError(t, s.AddEndpointStats(context.Background(), tenant, endpoint, hour, st))
	item := stored(db, key(keys.StatsShard(tenant, endpoint, 0), hour.Format(hourFormat))) // a new store's first shard
	size := cost.ItemSize(item)
	t.Logf("largest stats item: %d bytes", size)
	require.Equal(t, cost.InitialAssumptions.StatsWRU, cost.WriteUnits(size))

	got, err := s.EndpointStats(context.Background(), tenant, endpoint, hour, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, st.Latency, got[0].Latency, "every bucket read back")
	require.Equal(t, st.Failures, got[0].Failures)
	require.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(DefaultStatsRetention).Unix(), 10)}, item["expires_at"], "kept 35 days from its hour")
}

// TestStatsReadTheItemsOfBeforeTheShards: an hour item the versions before
// the shards wrote (STATS#<t>#<e>, unsharded) is merged into the shards'
// buckets by EndpointStats and LastAttempts, and EraseStats deletes it
// with every shard's.
func TestStatsReadTheItemsOfBeforeTheShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := New(db, "state")
	hour := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	earlier := hour.Add(-2 * time.Hour)
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	for _, h := range []time.Time{earlier, hour} {
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("state"), Item: withKey(map[string]types.AttributeValue{
			attrAttempts: n(3), attrDelivered: n(2), failurePrefix + string(domain.ClassHTTP5xx): n(1),
			latencyAttr(domain.LatencyBucket(40 * time.Millisecond)): n(3),
			attrLastOK:   str(sortableTime(h.Add(10 * time.Minute))),
			attrLastFail: str(sortableTime(h.Add(50 * time.Minute))), attrLastStatus: n(502), attrLastError: str("http_502"),
		}, key(statsPK("t1", "ep_1"), h.Format(hourFormat)))})
		require.NoError(t, err)
	}
	for i := range StatsShards + 1 {
		var st domain.AttemptStats
		st.Count(domain.ClassDelivered, 40*time.Millisecond, hour.Add(time.Duration(20+i)*time.Second), 200, "")
		require.NoError(t, s.AddEndpointStats(ctx, "t1", "ep_1", hour, st))
	}

	got, err := s.EndpointStats(ctx, "t1", "ep_1", earlier, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.True(t, got[0].Start.Equal(earlier), "the old hour alone: %v", got[0].Start)
	require.Equal(t, int64(3), got[0].Attempts)
	cur := got[1]
	require.Equal(t, int64(3+StatsShards+1), cur.Attempts, "the old item's and every shard's")
	require.Equal(t, int64(2+StatsShards+1), cur.Delivered)
	require.Equal(t, map[domain.AttemptClass]int64{domain.ClassHTTP5xx: 1}, cur.Failures)
	require.Equal(t, int64(3+StatsShards+1), cur.Latency[domain.LatencyBucket(40*time.Millisecond)])
	require.True(t, cur.LastSuccessAt.Equal(hour.Add(10*time.Minute)), "the old item's success is the newest: %v", cur.LastSuccessAt)
	require.Equal(t, "http_502", cur.LastFailure.Error)

	ok, fail, err := s.LastAttempts(ctx, "t1", "ep_1")
	require.NoError(t, err)
	require.True(t, ok.Equal(hour.Add(10*time.Minute)))
	require.Equal(t, 502, fail.Status)
	require.True(t, fail.At.Equal(hour.Add(50*time.Minute)))

	erased, done := 0, false
	for i := 0; !done; i++ {
		require.Less(t, i, 20, "EraseStats ends")
		var m int
		m, done, err = s.EraseStats(ctx, "t1", "ep_1", 3)
		require.NoError(t, err)
		erased += m
	}
	require.Equal(t, 2+StatsShards, erased, "the 2 old items and one a shard")
	left, err := s.EndpointStats(ctx, "t1", "ep_1", earlier, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Empty(t, left)
}

// queryUnits is a table that counts its Queries and the read units they
// consume (each page's items summed, eventually consistent unless asked).
type queryUnits struct {
	DynamoDB
	mu      sync.Mutex
	queries int
	units   float64
}

func (q *queryUnits) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := q.DynamoDB.Query(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	size := 0
	for _, item := range out.Items {
		size += cost.ItemSize(item)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queries++
	q.units += cost.ReadUnits(size, aws.ToBool(in.ConsistentRead))
	return out, nil
}

// TestStatsReadCostOfAWeek holds the read cost docs/api.md states for the
// metrics route: an endpoint's 7 days, every hour of every shard written
// with the largest item, is 9 Queries (one page each) and at most 121
// read units; a day of it at most 21.
func TestStatsReadCostOfAWeek(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	db.PageSize = 1 << 20 // DynamoDB's 1 MB pages, for these items
	q := &queryUnits{DynamoDB: db}
	s := New(q, "state")
	tenant, endpoint := strings.Repeat("t", 64), "ep_abcdefghijklmnop"
	until := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	since := until.Add(-7 * 24 * time.Hour)
	for h := since; h.Before(until); h = h.Add(time.Hour) {
		at := h.Add(59 * time.Minute)
		st := domain.AttemptStats{
			Attempts: 99_999_999, Delivered: 99_999_999, Failures: map[domain.AttemptClass]int64{}, LastSuccessAt: &at,
			LastFailure: &domain.AttemptFailure{At: at, Status: 599, Error: strings.Repeat("e", domain.MaxFailureErrorBytes)},
		}
		for _, c := range domain.FailureClasses {
			st.Failures[c] = 99_999_999
		}
		for i := range st.Latency {
			st.Latency[i] = 99_999_999
		}
		for range StatsShards {
			require.NoError(t, s.AddEndpointStats(context.Background(), tenant, endpoint, h, st))
		}
	}
	for _, tc := range []struct {
		hours int
		units float64
	}{{168, 121}, {24, 21}} {
		q.queries, q.units = 0, 0
		got, err := s.EndpointStats(context.Background(), tenant, endpoint, until.Add(-time.Duration(tc.hours)*time.Hour), until)
		require.NoError(t, err)
		require.Len(t, got, tc.hours)
		require.Equal(t, int64(StatsShards)*99_999_999, got[0].Attempts, "every shard's item merged")
		t.Logf("%d hours: %d Queries, %.1f read units", tc.hours, q.queries, q.units)
		require.Equal(t, StatsShards+1, q.queries, "one page per partition")
		require.LessOrEqual(t, q.units, tc.units)
	}
}

// TestTypeStatsItemIsOneWriteUnit holds the cost model's TypeStatsWRU to
// the item AddEndpointTypeStats writes at its largest: the longest tenant
// id (64), an endpoint id as long as the API makes, an event type of the
// longest the outbox accepts (outbox.MaxIDBytes), every counter and
// histogram bucket in the millions. Under 1 KB, each write of it is one
// write unit; it is read back under its type.
func TestTypeStatsItemIsOneWriteUnit(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := New(db, "state")
	tenant, endpoint, typ := strings.Repeat("t", 64), "ep_abcdefghijklmnop", strings.Repeat("y", outbox.MaxIDBytes)
	hour := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	st := domain.AttemptStats{Attempts: 99_999_999, Delivered: 99_999_999, Failures: map[domain.AttemptClass]int64{}}
	for _, c := range domain.FailureClasses {
		st.Failures[c] = 99_999_999
	}
	for i := range st.Latency {
		st.Latency[i] = 99_999_999
	}
	require.NoError(t, s.AddEndpointTypeStats(context.Background(), tenant, endpoint, typ, hour, st))
	item := stored(db, key(keys.TypeStatsShard(tenant, endpoint, 0), typeStatsSK(hour, typ)))
	size := cost.ItemSize(item)
	t.Logf("largest stats item by type: %d bytes", size)
	require.Equal(t, cost.InitialAssumptions.TypeStatsWRU, cost.WriteUnits(size))

	got, err := s.EndpointTypeStats(context.Background(), tenant, endpoint, hour, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, typ, got[0].EventType)
	require.Equal(t, st, got[0].AttemptStats, "every counter read back")
	require.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(DefaultStatsRetention).Unix(), 10)}, item["expires_at"], "kept 35 days from its hour")
	last, fail, err := s.LastAttempts(context.Background(), tenant, endpoint)
	require.NoError(t, err)
	require.Nil(t, last, "the type items are not in the hour items' partitions")
	require.Nil(t, fail)
}

// TestTypeStatsReadCost measures what EndpointTypeStats reads: one Query
// of each of the StatsShards partitions, whatever the range; for an
// endpoint with 5 types attempted in every shard every hour at the largest
// counters, at most 62 read units for 24 hours (eventually consistent,
// half a unit per 4 KB); a quiet endpoint 4 (half a unit a Query).
func TestTypeStatsReadCost(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	db.PageSize = 1 << 20 // DynamoDB's 1 MB pages, for these items
	q := &queryUnits{DynamoDB: db}
	s := New(q, "state")
	tenant, endpoint := strings.Repeat("t", 64), "ep_abcdefghijklmnop"
	until := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	st := domain.AttemptStats{Attempts: 99_999_999, Delivered: 99_999_999, Failures: map[domain.AttemptClass]int64{}}
	for _, c := range domain.FailureClasses {
		st.Failures[c] = 99_999_999
	}
	for i := range st.Latency {
		st.Latency[i] = 99_999_999
	}
	types := []string{"order.created", "order.paid", "order.refunded", "invoice.sent", "customer.updated"}
	for h := until.Add(-24 * time.Hour); h.Before(until); h = h.Add(time.Hour) {
		for _, typ := range types {
			for range StatsShards {
				require.NoError(t, s.AddEndpointTypeStats(context.Background(), tenant, endpoint, typ, h, st))
			}
		}
	}
	got, err := s.EndpointTypeStats(context.Background(), tenant, endpoint, until.Add(-24*time.Hour), until)
	require.NoError(t, err)
	require.Len(t, got, 24*len(types))
	require.Equal(t, int64(StatsShards)*99_999_999, got[0].Attempts, "every shard's item merged")
	t.Logf("24 hours of 5 types: %d Queries, %.1f read units", q.queries, q.units)
	require.Equal(t, StatsShards, q.queries, "one page per partition")
	require.LessOrEqual(t, q.units, 62.0)

	q.queries, q.units = 0, 0
	_, err = s.EndpointTypeStats(context.Background(), tenant, "ep_quiet", until.Add(-24*time.Hour), until)
	require.NoError(t, err)
	require.Equal(t, StatsShards, q.queries)
	require.Equal(t, 4.0, q.units)
}
