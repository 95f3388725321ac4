package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

// firstDelivered is delivery n of tenant t1 as deliver reads it before
// its first attempt (its ids alone), and that attempt, delivered: its
// event n seconds after the epoch, so that each n is a page of its own.
func firstDelivered(s *Store, n int) FirstAttempt {
	return firstDeliveredAt(s, n, time.Unix(int64(n), 0))
}

// firstDeliveredAt is firstDelivered with its event at eventAt.
func firstDeliveredAt(s *Store, n int, eventAt time.Time) FirstAttempt {
	ev := fmt.Sprintf("evt_%d", n)
	return FirstAttempt{
		Delivery: domain.Delivery{DeliveryID: domain.DeliveryID("t1", ev, "ep_1", eventAt), TenantID: "t1", EndpointID: "ep_1", EventID: ev, EventType: "order.created"},
		Attempt:  domain.Attempt{Number: 1, At: s.Now(), Status: 200, LatencyMS: 12, Excerpt: "ok"},
	}
}

// Ten first attempts of one second are one outcome page, written in one
// call for 1 write unit where their records took 10, and each reads back
// (Delivery, Load) as the record RecordAttempt's first write of it would
// be, field for field.
func TestFirstAttemptsAreReadAsTheRecordRecordAttemptWould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one, batch := newFakeDB(), newFakeDB()
	s1, sb := newTestStore(one), newTestStore(batch)
	var firsts []FirstAttempt
	var ids []string
	for n := range 10 {
		f := firstDeliveredAt(s1, n, time.Date(2026, 12, 7, 11, 0, 0, int(n)*int(time.Millisecond), time.UTC))
		require.NoError(t, s1.RecordAttempt(ctx, f.Delivery, f.Attempt, domain.Outcome{State: domain.StateDelivered}))
		firsts, ids = append(firsts, f), append(ids, f.Delivery.DeliveryID)
	}
	left, err := sb.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Empty(t, left)
	require.Equal(t, 1, batch.Calls("BatchWriteItem"), "ten deliveries, one call")
	require.Len(t, batch.Items(), 1, "one page")
	require.Equal(t, 10.0, one.Billed()[""].W, "a record each")
	require.Equal(t, 1.0, batch.Billed()[""].W, "a page of ten")
	snap, err := sb.Load(ctx, ids, nil)
	require.NoError(t, err)
	for _, f := range firsts {
		a, err := s1.Delivery(ctx, f.Delivery.DeliveryID)
		require.NoError(t, err)
		b, err := sb.Delivery(ctx, f.Delivery.DeliveryID)
		require.NoError(t, err)
		require.True(t, b.Packed)
		require.Equal(t, b, snap.Deliveries[f.Delivery.DeliveryID], "Load reads it as Delivery does")
		b.Packed = false
		require.Equal(t, a, b)
		require.Equal(t, domain.StateDelivered, b.State)
		require.Equal(t, 1, b.Attempts)
	}
	eventual, err := sb.LoadWith(ctx, LoadOptions{Eventual: true}, ids, nil)
	require.NoError(t, err)
	require.Empty(t, eventual.Deliveries, "deliver's and enqueue's reads: records only")
}

// More than 25 pages go out 25 to a request; a delivery twice, one that
// had a record when read, or one of a legacy id, is left to the caller
// (RecordAttempt), as is a request that fails whole and what stays
// unprocessed.
func TestFirstAttemptsLeaveTheCallerWhatTheyCannotWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	var firsts []FirstAttempt
	for n := range 30 {
		firsts = append(firsts, firstDelivered(s, n))
	}
	firsts = append(firsts, firstDelivered(s, 3)) // a second copy in the batch
	had := firstDelivered(s, 40)
	had.Delivery.State = domain.StatePending
	firsts = append(firsts, had)
	legacy := firstDelivered(s, 41)
	legacy.Delivery.DeliveryID = domain.LegacyDeliveryID("evt_41", "ep_1")
	firsts = append(firsts, legacy)
	left, err := s.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Equal(t, []int{30, 31, 32}, left, "the second copy, the one with a record, the legacy id")
	require.Equal(t, 2, db.Calls("BatchWriteItem"), "25 pages a request")
	require.Len(t, db.Items(), 30, "a page a second")

	boom := errors.New("boom")
	db.Fault = func(op string, _ map[string]types.AttributeValue) error {
		if op == "BatchWriteItem" {
			return boom
		}
		return nil
	}
	left, err = s.RecordFirstAttempts(ctx, []FirstAttempt{firstDelivered(s, 50), firstDelivered(s, 51)})
	require.ErrorIs(t, err, boom)
	require.Equal(t, []int{0, 1}, left, "a failed request: every one left")
}

// Items DynamoDB leaves unprocessed (their key value over its
// throughput) are sent again, after a wait; one still unprocessed after
// the last try is left to the caller.
func TestFirstAttemptsSendTheUnprocessedAgain(t *testing.T) {
	t.Parallel()
	for _, recovers := range []bool{true, false} {
		ctx := context.Background()
		db := newFakeDB()
		s := newTestStore(db)
		hot, cold := firstDelivered(s, 1), firstDelivered(s, 2)
		for n := 3; pagePK(cold) == pagePK(hot); n++ {
			cold = firstDelivered(s, n) // a page of another partition
		}
		now := s.Now()
		db.Limits = dynamofake.DynamoDBLimits()
		db.Now = func() time.Time { return now }
		// The hot delivery's key value has used its second's 1,000 units.
		for i := range 1000 {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: pagePK(hot)}, "sk": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}})
			require.NoError(t, err)
		}
		calls := 0
		db.BeforeWrite = func(op string, _ []map[string]types.AttributeValue) {
			if op == "BatchWriteItem" {
				if calls++; calls == 2 && recovers {
					now = now.Add(time.Second) // the next second: room again
				}
			}
		}
		left, err := s.RecordFirstAttempts(ctx, []FirstAttempt{hot, cold})
		if recovers {
			require.NoError(t, err)
			require.Empty(t, left)
			require.Equal(t, 2, calls, "the unprocessed one sent again")
			_, err = s.Delivery(ctx, hot.Delivery.DeliveryID)
			require.NoError(t, err)
			continue
		}
		require.True(t, dynamofake.Throttled(err), "%v", err)
		require.Equal(t, []int{0}, left, "the hot one left, the cold one written")
		require.LessOrEqual(t, calls, unprocessedTries)
		_, err = s.Delivery(ctx, cold.Delivery.DeliveryID)
		require.NoError(t, err)
	}
}

// pagePK is the partition of f's outcome page.
func pagePK(f FirstAttempt) string {
	p, _ := domain.ParseDeliveryID(f.Delivery.DeliveryID)
	return outcomesPK(p.TenantHash, outcomeSecond(p.At))
}
