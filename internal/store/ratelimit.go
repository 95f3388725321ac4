package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// A rate-limited endpoint's window (RATE#<tenant>#<endpoint> / <second,
// 2006-01-02T15:04:05Z>) counts the request slots taken in one second
// (taken). It expires RateWindowTTL after the second: DynamoDB's TTL
// deletes it within a day or two, and nothing reads an old one.
const (
	attrTaken = "taken"
	// RateWindowTTL is how long after its second a window's item is kept.
	RateWindowTTL = time.Hour
)

// Slots is what TakeSlots granted: slots First to First+Granted-1 of the
// window (0 is its first). Granted is 0 when the window was full.
type Slots struct {
	First   int
	Granted int
}

// TakeSlots takes up to n of the request slots of an endpoint limited to
// limit requests per second, in the one-second window that holds at: as
// many as are left, at most n. Slot i of a window is due i/limit seconds
// into it; the first taker of a window starts at the first slot not yet
// past at (so slots already past are not sent at once, in a burst). It is
// one conditional UpdateItem (taken raised, on the condition that it
// stays within limit) whatever n; when fewer than n are left, the failed
// condition returns the count and a second UpdateItem takes what is left,
// unless another caller took it first (then none are granted: the caller
// tries the next window). Concurrent callers never take more than limit
// slots of one window between them.
func (s *Store) TakeSlots(ctx context.Context, tenantID, endpointID string, at time.Time, n, limit int) (Slots, error) {
	window := at.UTC().Truncate(time.Second)
	past := PastSlots(at, limit)
	if n <= 0 || limit <= 0 || past >= limit {
		return Slots{}, nil
	}
	// Never more than the slots not past: a window that has more left
	// than that is one whose first taker came before at.
	want := min(n, limit-past)
	for range 2 {
		got, taken, err := s.takeSlots(ctx, tenantID, endpointID, window, past, want, limit)
		if err != nil {
			return Slots{}, err
		}
		if got.Granted > 0 || taken >= limit {
			return got, nil
		}
		want = limit - taken // what was left when the condition failed
	}
	return Slots{}, nil
}

// takeSlots is one attempt at taking want slots; when the condition fails
// it reports the window's count as it found it.
func (s *Store) takeSlots(ctx context.Context, tenantID, endpointID string, window time.Time, past, want, limit int) (got Slots, taken int, err error) {
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 key(keys.Rate(tenantID, endpointID), window.Format(hourFormat)),
		UpdateExpression:                    aws.String("SET #taken = if_not_exists(#taken, :past) + :n, expires_at = :exp"),
		ConditionExpression:                 aws.String("attribute_not_exists(#taken) OR #taken <= :room"),
		ExpressionAttributeNames:            map[string]string{"#taken": attrTaken},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":past": n(int64(past)), ":n": n(int64(want)), ":room": n(int64(limit - want)), ":exp": n(window.Add(RateWindowTTL).Unix())},
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return Slots{}, numberAttr(ccf.Item, attrTaken), nil
	}
	if err != nil {
		return Slots{}, 0, fmt.Errorf("take %d request slots of endpoint %s: %w", want, endpointID, err)
	}
	now := numberAttr(out.Attributes, attrTaken)
	return Slots{First: now - want, Granted: want}, now - want, nil
}

// numberAttr is item's number attribute name, 0 when absent.
func numberAttr(item map[string]types.AttributeValue, name string) int {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.Atoi(v.Value)
		return n
	}
	return 0
}

// PastSlots is how many of a window's slots (limit per second, slot i due
// i/limit seconds into the second) are due before at.
func PastSlots(at time.Time, limit int) int {
	frac := at.Sub(at.Truncate(time.Second))
	return int((frac*time.Duration(limit) + time.Second - 1) / time.Second)
}
