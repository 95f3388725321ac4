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

// A rate-limited endpoint's window of one second is spread over up to
// RateShards items (RATE#<tenant>#<endpoint>#<j> / <second,
// 2006-01-02T15:04:05Z>), each counting the request slots taken of its
// part (taken). An item expires RateWindowTTL after its second: DynamoDB's
// TTL deletes it within a day or two, and nothing reads an old one.
const (
	attrTaken = "taken"
	// RateWindowTTL is how long after its second a window's item is kept.
	RateWindowTTL = time.Hour
	// RateShards is the most shards a window is spread over: each
	// TakeSlots writes one shard (or a few, rateTries), so an endpoint
	// takes 8,000 calls a second where one item took 1,000.
	RateShards = 8
	// RateShardSlots is the fewest slots a shard holds: a window of a
	// limit below 2×10 is one shard, of a limit of L is min(RateShards,
	// L/10) shards. 10 is a deliver batch's most messages, so a shard
	// usually grants a whole batch's slots in one call.
	RateShardSlots = 10
	// rateTries is how many shards one TakeSlots tries before it reports
	// the window full.
	rateTries = 3
)

// Slots is what TakeSlots granted: Granted slots of the window (0 is its
// first), First, First+Stride, First+2·Stride and so on (Slot). Granted is
// 0 when the window was full. Stride is 0 (consecutive slots) for a window
// of one shard.
type Slots struct {
	First   int
	Granted int
	Stride  int
}

// Slot is the i-th slot granted (i below Granted).
func (g Slots) Slot(i int) int { return g.First + i*max(g.Stride, 1) }

// RateWindowShards is how many shards the window of an endpoint limited
// to limit requests a second is spread over: min(RateShards,
// limit/RateShardSlots), at least 1.
func RateWindowShards(limit int) int { return min(RateShards, max(1, limit/RateShardSlots)) }

// RateShardPart is shard j's part of a window of limit slots spread over
// shards: the window's slots j, j+shards, j+2·shards and so on, quota of
// them (limit/shards, one more for the first limit%shards shards, so the
// quotas add up to limit), of which past are before at (PastSlots).
func RateShardPart(at time.Time, limit, shards, j int) (quota, past int) {
	quota = (limit - j + shards - 1) / shards
	p := PastSlots(at, limit)
	return quota, max(0, (p-j+shards-1)/shards)
}

// TakeSlots takes up to n of the request slots of an endpoint limited to
// limit requests per second, in the one-second window that holds at. Slot
// i of a window is due i/limit seconds into it; slots already past at are
// not granted (so they are not sent at once, in a burst).
//
// The window is RateWindowShards(limit) shards (RateShardPart: shard j
// holds every shards-th slot from j, limit/shards of them, the first
// limit%shards shards one more; together exactly limit). A call tries the
// shard after its store's previous call's, and while a shard has no slot
// left, the next ones (passing those whose every slot is past, which it
// does not write): at most rateTries (3) shards written, each one conditional
// UpdateItem (taken raised, on the condition that it stays within the
// shard's quota) or, when fewer than wanted are left, a second that takes
// what is left (see takeShard). It grants from one shard only: at most
// n, at most the shard's quota. Each shard stays within its quota, so
// concurrent callers never take more than limit slots of one window
// between them. What sharding changes: a call may be refused (Granted 0)
// while shards it did not try (all but 3 of up to 8) have slots left, and
// a call is granted at most its shard's part (limit/shards) however large
// n: a caller that wants more calls again. (Within a second whose limit
// changes, the shards hold at most the larger limit's quotas. A window of
// one shard, a limit below 20, is the unsharded item of before, RATE#<t>#<e>;
// while a version before the shards still takes that item, as in a
// deploy, a window of a larger limit may grant twice its limit.)
func (s *Store) TakeSlots(ctx context.Context, tenantID, endpointID string, at time.Time, n, limit int) (Slots, error) {
	window := at.UTC().Truncate(time.Second)
	if n <= 0 || limit <= 0 || PastSlots(at, limit) >= limit {
		return Slots{}, nil
	}
	shards := RateWindowShards(limit)
	first := int(s.rateNext.Add(1)-1) % shards
	for i, tried := 0, 0; i < shards && tried < rateTries; i++ {
		j := (first + i) % shards
		quota, past := RateShardPart(at, limit, shards, j)
		if past >= quota {
			continue // its every slot is past: nothing to write
		}
		tried++
		got, err := s.takeShard(ctx, rateShardPK(tenantID, endpointID, shards, j), window, past, min(n, quota-past), quota)
		if err != nil {
			return Slots{}, fmt.Errorf("take %d request slots of endpoint %s: %w", n, endpointID, err)
		}
		if got.Granted > 0 {
			return globalSlots(got, shards, j), nil
		}
	}
	return Slots{}, nil
}

// rateShardPK is the partition of shard j of a window of shards: a window
// of one shard is the one item of the versions before the shards
// (RATE#<t>#<e>), so a deploy changes nothing for such a limit.
func rateShardPK(tenantID, endpointID string, shards, j int) string {
	if shards == 1 {
		return keys.Rate(tenantID, endpointID)
	}
	return keys.RateShard(tenantID, endpointID, j)
}

// globalSlots are a shard's slots got (its own numbering) as the window's.
func globalSlots(got Slots, shards, j int) Slots {
	if shards == 1 {
		return got
	}
	return Slots{First: j + got.First*shards, Granted: got.Granted, Stride: shards}
}

// takeShard takes want of a shard's quota slots, past of them already
// past: one conditional UpdateItem; when the condition fails, the count
// it returns tells what is left, and a second UpdateItem takes that,
// unless another caller took it first (then none are granted).
func (s *Store) takeShard(ctx context.Context, pk string, window time.Time, past, want, quota int) (Slots, error) {
	for range 2 {
		got, taken, err := s.takeSlots(ctx, pk, window, past, want, quota)
		if err != nil || got.Granted > 0 || taken >= quota {
			return got, err
		}
		want = quota - taken // what was left when the condition failed
	}
	return Slots{}, nil
}

// takeSlots is one attempt at taking want slots; when the condition fails
// it reports the window's count as it found it.
func (s *Store) takeSlots(ctx context.Context, pk string, window time.Time, past, want, limit int) (got Slots, taken int, err error) {
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 key(pk, window.Format(hourFormat)),
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
		return Slots{}, 0, err
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
