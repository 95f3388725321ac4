package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/stretchr/testify/require"
)

// recordOfT1 is a store on a fresh fake table and a delivery of t1 with
// no record yet, named as enqueue names it.
func recordOfT1() (*Store, *dynamofake.DB, domain.Delivery) {
	db := newFakeDB()
	s := newTestStore(db)
	d := domain.Delivery{TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "a.b"}
	d.DeliveryID = domain.DeliveryID(d.TenantID, d.EventID, d.EndpointID, s.Now())
	return s, db, d
}

// A record of a time-carrying id is in its tenant's shards of records and
// writes no entry in the delivery log's index, whatever its moves; the
// listing finds it by its key.
func TestRecordsWriteNoIndexEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, d := recordOfT1()
	a := domain.Attempt{Number: 1, At: s.Now(), Status: 503}
	require.NoError(t, s.RecordAttempt(ctx, d, a, domain.Outcome{State: domain.StatePending}))
	a.Number, a.Status = 2, 200
	require.NoError(t, s.RecordAttempt(ctx, read(t, s, d), a, domain.Outcome{State: domain.StateDelivered}))
	item := stored(db, deliveryKey(d.DeliveryID))
	require.NotNil(t, item)
	require.NotContains(t, item, AttrLogPK)
	require.NotContains(t, item, AttrLogSK)
	for _, c := range db.Hottest() {
		require.NotEqual(t, IndexLog, c.Index, "no write on the delivery log's index")
	}
	listed, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, d.DeliveryID, listed[0].DeliveryID)
	require.Equal(t, domain.StateDelivered, listed[0].State)
	require.Equal(t, 2, listed[0].Attempts)
}

// answers keeps the items of every Query answer.
type answers struct {
	*dynamofake.DB
	items []map[string]types.AttributeValue
}

func (a *answers) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := a.DB.Query(ctx, in, opts...)
	if err == nil {
		a.items = append(a.items, out.Items...)
	}
	return out, err
}

// A listing's answers carry the listed attributes of a record, never its
// message (a dead record keeps up to 256 KB of it) nor its attempt log:
// what a page moves stays small whatever the records hold.
func TestListingAnswersCarryNoMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, d := recordOfT1()
	require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: s.Now(), Status: 410, Excerpt: strings.Repeat("x", 1024)},
		domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(410), Message: strings.Repeat("m", 100<<10)}))
	require.Contains(t, stored(db, deliveryKey(d.DeliveryID)), "message")
	a := &answers{DB: db}
	listed, _, err := New(a, "state").ListDeliveries(ctx, "t1", domain.DeliveryFilter{State: domain.StateDead}, 10, "")
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, 410, listed[0].LastStatus)
	require.NotEmpty(t, a.items)
	for _, item := range a.items {
		require.NotContains(t, item, "message")
		require.NotContains(t, item, "attempt_log")
		require.Less(t, cost.ItemSize(item), 1024)
	}
}

// A since inside a millisecond lists the records of that whole millisecond
// (an id carries its event's time to the millisecond), and the cursors of
// such a listing are its own, however small the page.
func TestSinceWithinAMillisecondPagesToTheEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	var want []string
	for i := range 4 { // two in the first millisecond
		d := domain.Delivery{TenantID: "t1", EndpointID: "ep_1", EventID: fmt.Sprintf("evt_%d", i), EventType: "a.b"}
		d.DeliveryID = domain.DeliveryID(d.TenantID, d.EventID, d.EndpointID, at.Add(time.Duration(max(0, i-1))*time.Millisecond))
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: s.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		want = append(want, d.DeliveryID)
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) }) // newest first, then id
	f := domain.DeliveryFilter{Since: at.Add(500 * time.Microsecond)}             // inside the first's millisecond
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := s.ListDeliveries(ctx, "t1", f, 1, cursor)
		require.NoError(t, err)
		for _, d := range page {
			got = append(got, d.DeliveryID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	require.Equal(t, want, got)
}

// A legacy record's entry in the delivery log (a delivery of an id that
// carries no time, made before: the only kind the index still lists) is
// one write unit at its largest (the ids and type as long as they can be,
// every time set, the counters at their largest), and each write of the
// record after its first writes the entry once, without moving it: its
// keys are its creation's. The message (4 KB here) and the attempt log (a
// 1 KB excerpt) stay in the table.
func TestLogIndexEntryIsOneWriteUnit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	db.Limits = dynamofake.DynamoDBLimits()
	s := newTestStore(db)
	d := domain.Delivery{TenantID: strings.Repeat("t", 64), EndpointID: "ep_" + strings.Repeat("e", 61), EventID: strings.Repeat("v", outbox.MaxIDBytes),
		EventType: strings.Repeat("y", outbox.MaxIDBytes)}
	d.DeliveryID = domain.LegacyDeliveryID(d.EventID, d.EndpointID)
	a := domain.Attempt{Number: 1, At: s.Now(), Status: 599, Error: strings.Repeat("e", 40), LatencyMS: 30_000, Excerpt: strings.Repeat("x", 1024)}
	require.NoError(t, s.RecordAttempt(ctx, d, a, domain.Outcome{State: domain.StatePending}))
	first := stored(db, deliveryKey(d.DeliveryID))
	require.NotNil(t, first[AttrLogPK], "in the index")
	a.Number = 2
	require.NoError(t, s.RecordAttempt(ctx, read(t, s, d), a, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: strings.Repeat("m", 4096)}))

	item := stored(db, deliveryKey(d.DeliveryID))
	require.Equal(t, first[AttrLogPK], item[AttrLogPK], "the entry does not move")
	require.Equal(t, first[AttrLogSK], item[AttrLogSK], "the entry does not move")
	item["attempts"] = &types.AttributeValueMemberN{Value: "9999999"}
	entry := map[string]types.AttributeValue{}
	for _, a := range append([]string{"pk", "sk", AttrLogPK, AttrLogSK}, LogIndexAttributes...) {
		if v, ok := item[a]; ok {
			entry[a] = v
		}
	}
	size := cost.ItemSize(entry)
	t.Logf("largest delivery log entry: %d bytes (the item: %d)", size, cost.ItemSize(item))
	require.Equal(t, 1.0, cost.WriteUnits(size))
	require.NotContains(t, LogIndexAttributes, "message")
	require.NotContains(t, LogIndexAttributes, "attempt_log")
	for _, c := range db.Hottest() {
		if c.Index == IndexLog {
			require.Equal(t, 2.0, c.WCU, "two writes of the record, one unit each on the index")
		}
	}
}
