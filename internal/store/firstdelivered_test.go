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
// its first attempt (its ids alone), and that attempt, delivered.
func firstDelivered(s *Store, n int) FirstAttempt {
	ev := fmt.Sprintf("evt_%d", n)
	return FirstAttempt{
		Delivery: domain.Delivery{DeliveryID: domain.DeliveryID("t1", ev, "ep_1", time.Time{}), TenantID: "t1", EndpointID: "ep_1", EventID: ev, EventType: "order.created"},
		Attempt:  domain.Attempt{Number: 1, At: s.Now(), Status: 200, LatencyMS: 12},
	}
}

// A first attempt's record written by RecordFirstAttempts is the record
// RecordAttempt's first write of it would be, attribute for attribute and
// unit for unit (the table's and the delivery log's), read back the same:
// for ten deliveries, one call.
func TestFirstAttemptsWriteTheRecordRecordAttemptWould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one, batch := newFakeDB(), newFakeDB()
	s1, sb := newTestStore(one), newTestStore(batch)
	var firsts []FirstAttempt
	for n := range 10 {
		f := firstDelivered(s1, n)
		require.NoError(t, s1.RecordAttempt(ctx, f.Delivery, f.Attempt, domain.Outcome{State: domain.StateDelivered}))
		firsts = append(firsts, f)
	}
	left, err := sb.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Empty(t, left)
	require.Equal(t, 1, batch.Calls("BatchWriteItem"), "ten records, one call")
	require.Equal(t, 10, one.Calls("UpdateItem"))
	require.ElementsMatch(t, one.Items(), batch.Items(), "the same records")
	require.Equal(t, one.Billed(), batch.Billed(), "the same units, the delivery log's index entries included")
	for _, f := range firsts {
		a, err := s1.Delivery(ctx, f.Delivery.DeliveryID)
		require.NoError(t, err)
		b, err := sb.Delivery(ctx, f.Delivery.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, a, b)
		require.Equal(t, domain.StateDelivered, b.State)
		require.Equal(t, 1, b.Attempts)
	}
}

// More than 25 go out 25 to a request; a delivery twice, or one that had
// a record when read, is left to the caller (RecordAttempt), as is a
// request that fails whole and what stays unprocessed.
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
	left, err := s.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Equal(t, []int{30, 31}, left)
	require.Equal(t, 2, db.Calls("BatchWriteItem"), "25 a request")
	require.Len(t, db.Items(), 30)

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
		now := s.Now()
		db.Limits = dynamofake.DynamoDBLimits()
		db.Now = func() time.Time { return now }
		// The hot delivery's key value has used its second's 1,000 units.
		for i := range 1000 {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{
				"pk": deliveryKey(hot.Delivery.DeliveryID)["pk"], "sk": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}})
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
