package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// Tenant DLQ depth counters, sharded: a tenant's depth is the sum of
// depthShards items, shard n in a partition of its own (pk
// TENANT#<t>#DLQDEPTH#<n>, sk DLQDEPTH: the shards in the tenant's
// partition would share its 1,000 WCU a second), so a tenant's deaths do
// not queue on one item: each shard takes 500 transactional moves a second
// (2 WCU a move), the tenant 32 x 500 = 16,000. A delivery's moves go to
// the shard of its id (a hash): the moves spread evenly, and the death and
// the replay of one delivery move the same item. Only the sum means
// anything (a correction lands on shard 0, so a shard alone may go below
// 0). The shards are listed through gsi1 under depthIndexKeys keys
// (DLQDEPTH#<m>, m the tenant's hash plus the shard: one tenant's shards
// sit under distinct keys, and every key takes 1/32 of all tenants'
// moves) for the per-tenant depth metric and the operator's stats;
// DLQDepths queries each and sums per tenant. Every move of a delivery
// into or out of dead (an attempt, a death recorded before a last attempt,
// a replay's claim) and its shard's move are one transaction: both happen
// or neither, so the counter cannot drift from the dead index. Each move
// also counts itself (moves) and stamps its shard (moved_at), which the
// reconciliation uses to tell a counter that is wrong from an index that
// has not caught up yet: it reads every item of the counter and corrects
// their sum, in a transaction that is cancelled if any of them moved.
// Counters written by earlier versions, which moved the counter in a
// second write, may be off: ReconcileDLQDepth recounts. The counter of the
// versions before the shards (one item, TENANT#<t> / DLQDEPTH, listed
// under DLQDEPTH) is still read and summed in, and the reconciliation
// folds it into shard 0 and deletes it, in the transaction of its
// correction: an upgrade neither loses nor doubles a depth.

// depthShards is how many items a tenant's DLQ depth counter is spread
// over: 32, 16,000 deaths a second of one tenant at 2 WCU a move.
const depthShards = 32

// depthIndexKeys is how many gsi1 keys the shards of every tenant are
// listed under: 32, each written by 1/32 of all tenants' moves.
const depthIndexKeys = 32

// DefaultDepthSettle is a new Store's DepthSettle: one minute.
const DefaultDepthSettle = time.Minute

// fnv32 is the 32-bit FNV-1a hash of s.
func fnv32(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// depthShard is the shard of a tenant's counter a delivery's moves go to.
func depthShard(deliveryID string) int { return int(fnv32(deliveryID) % depthShards) }

// depthIndexKey is the gsi1 key shard n of a tenant's counter is listed
// under.
func depthIndexKey(tenantID string, n int) string {
	return keys.DepthIndex(int((fnv32(tenantID) + uint32(n)) % depthIndexKeys))
}

// depthListing is the gsi1 attributes of shard n of a tenant's counter, as
// a SET clause's values.
func depthListing(tenantID string, n int, values map[string]types.AttributeValue) string {
	values[":t"] = &types.AttributeValueMemberS{Value: tenantID}
	values[":g"] = &types.AttributeValueMemberS{Value: depthIndexKey(tenantID, n)}
	values[":gs"] = &types.AttributeValueMemberS{Value: tenantID + "#" + strconv.Itoa(n)}
	return "tenant_id = :t, gsi1pk = :g, gsi1sk = :gs"
}

// depthMove is the counter's half of a transition: it moves tenantID's
// depth by delta, on the shard of deliveryID.
func (s *Store) depthMove(tenantID, deliveryID string, delta int, now time.Time) *types.Update {
	n := depthShard(deliveryID)
	values := map[string]types.AttributeValue{
		":d":   &types.AttributeValueMemberN{Value: strconv.Itoa(delta)},
		":one": &types.AttributeValueMemberN{Value: "1"},
		":now": timeValue(now),
	}
	return &types.Update{
		TableName:                 &s.table,
		Key:                       depthShardKey(tenantID, n),
		UpdateExpression:          aws.String("ADD #depth :d, moves :one SET " + depthListing(tenantID, n, values) + ", moved_at = :now"),
		ExpressionAttributeNames:  map[string]string{"#depth": "depth"},
		ExpressionAttributeValues: values,
	}
}

// maxConflictTries bounds how often a write that collided with another
// transaction on the same item (TransactionConflict) is tried again.
const maxConflictTries = 8

// transition writes a delivery's conditional update u and, when delta is not
// 0, the move of tenantID's DLQ depth by delta (on deliveryID's shard), in
// one transaction (a
// single UpdateItem when delta is 0). A failed condition is a
// *changedError carrying the item as it is; a collision with another
// transaction on either item is tried again after a jittered backoff (a
// burst of deaths of one tenant contends on its counter's shards).
func (s *Store) transition(ctx context.Context, u *types.Update, tenantID, deliveryID string, delta int, now time.Time) error {
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	for try := 1; ; try++ {
		var err error
		if delta == 0 {
			_, err = s.db.UpdateItem(ctx, alone(u))
			var ccf *types.ConditionalCheckFailedException
			if errors.As(err, &ccf) {
				return &changedError{item: ccf.Item}
			}
			var tc *types.TransactionConflictException
			if !errors.As(err, &tc) || try == maxConflictTries {
				return err
			}
		} else {
			_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: u}, {Update: s.depthMove(tenantID, deliveryID, delta, now)},
			}})
			var tce *types.TransactionCanceledException
			if !errors.As(err, &tce) {
				return err
			}
			if r := tce.CancellationReasons; len(r) > 0 && aws.ToString(r[0].Code) == "ConditionalCheckFailed" {
				return &changedError{item: r[0].Item}
			}
			if !onlyConflicts(tce.CancellationReasons) || try == maxConflictTries {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(10*time.Millisecond) << min(try, 6)))):
		}
	}
}

// alone is transaction member u written alone, as an UpdateItem.
func alone(u *types.Update) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
		ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: u.ReturnValuesOnConditionCheckFailure,
	}
}

// onlyConflicts reports whether a transaction was cancelled for colliding
// with another one and nothing else.
func onlyConflicts(reasons []types.CancellationReason) bool {
	conflict := false
	for _, r := range reasons {
		switch aws.ToString(r.Code) {
		case "TransactionConflict":
			conflict = true
		case "None", "":
		default:
			return false
		}
	}
	return conflict
}

// DLQDepths returns every tenant's dead-delivery count that has ever moved:
// the sum of its shards (and of its counter of before the shards), as
// listed under each depth index key, queried one after another.
func (s *Store) DLQDepths(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for m := range depthIndexKeys {
		if err := s.sumDepths(ctx, keys.DepthIndex(m), out); err != nil {
			return nil, err
		}
	}
	if err := s.sumDepths(ctx, keys.DepthSK, out); err != nil {
		return nil, err
	}
	return out, nil
}

// sumDepths adds the depths of the counter items listed under the gsi1 key
// g to their tenants' in out.
func (s *Store) sumDepths(ctx context.Context, g string, out map[string]int) error {
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression:    aws.String("gsi1pk = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: g}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list DLQ depths: %w", err)
		}
		for _, item := range page.Items {
			t, _ := item["tenant_id"].(*types.AttributeValueMemberS)
			d, _ := item["depth"].(*types.AttributeValueMemberN)
			if t == nil || d == nil {
				continue
			}
			n, _ := strconv.Atoi(d.Value)
			out[t.Value] += n
		}
	}
	return nil
}

// DepthCheck is what ReconcileDLQDepth found for one tenant, and did.
type DepthCheck struct {
	TenantID string
	// Counter is the tenant's DLQ depth counter as read, the sum of its
	// items (0 if it has none); Indexed, its dead deliveries as the dead
	// index lists them (when they were counted).
	Counter, Indexed int
	// Corrected says the counter was set to Indexed.
	Corrected bool
	// Migrated says the counter of the versions before the shards was
	// folded into them (and deleted), its depth kept or corrected.
	Migrated bool
	// Deferred says nothing was concluded: the counter moved less than
	// DepthSettle before (the index may not show that move yet) or while
	// the index was counted. The next reconciliation looks again.
	Deferred bool
}

// depthCounter is one item of a tenant's DLQ depth counter.
type depthCounter struct {
	Depth   int    `dynamodbav:"depth"`
	Moves   *int   `dynamodbav:"moves"`
	MovedAt string `dynamodbav:"moved_at"`
}

// depthCounters is a tenant's DLQ depth counter as read: each shard, and
// the counter of the versions before the shards (nil: absent).
type depthCounters struct {
	shards [depthShards]*depthCounter
	legacy *depthCounter
}

// sum is the depth the counter says.
func (c depthCounters) sum() int {
	n := 0
	for _, sh := range append(c.shards[:], c.legacy) {
		if sh != nil {
			n += sh.Depth
		}
	}
	return n
}

// settled reports whether no item of the counter moved less than settle
// before now.
func (c depthCounters) settled(now time.Time, settle time.Duration) bool {
	for _, sh := range append(c.shards[:], c.legacy) {
		if sh == nil {
			continue
		}
		if moved, err := time.Parse(time.RFC3339Nano, sh.MovedAt); err == nil && now.Sub(moved) < settle {
			return false
		}
	}
	return true
}

// ReconcileDLQDepth recounts a tenant's dead deliveries from the dead index
// and, if the counter (its shards' sum) says otherwise, corrects it to the
// count, on shard 0; a counter of the versions before the shards is folded
// into shard 0 and deleted at the same time. The index is eventually
// consistent, so it is trusted only once every item of the counter has
// stood still for DepthSettle, and the correction is conditional on none
// having moved since it was read (else Deferred). The count reads the
// tenant's whole dead index (eventually consistent reads of every dead
// delivery's item), so it is run on a schedule, not per delivery.
func (s *Store) ReconcileDLQDepth(ctx context.Context, tenantID string) (DepthCheck, error) {
	check := DepthCheck{TenantID: tenantID}
	now := s.Now().UTC()
	c, err := s.readDepthCounters(ctx, tenantID)
	if err != nil {
		return check, err
	}
	check.Counter = c.sum()
	if !c.settled(now, s.DepthSettle) {
		check.Deferred = true
		return check, nil
	}
	if check.Indexed, err = s.countDead(ctx, tenantID); err != nil {
		return check, err
	}
	if check.Indexed == check.Counter && c.legacy == nil {
		return check, nil
	}
	err = s.correctDepth(ctx, tenantID, c, check.Indexed, now)
	if movedMeanwhile(err) {
		check.Deferred = true
		return check, nil
	}
	if err != nil {
		return check, fmt.Errorf("correct DLQ depth of tenant %s: %w", tenantID, err)
	}
	check.Corrected, check.Migrated = check.Indexed != check.Counter, c.legacy != nil
	return check, nil
}

// readDepthCounters reads every item of a tenant's DLQ depth counter,
// strongly consistent, in one BatchGetItem.
func (s *Store) readDepthCounters(ctx context.Context, tenantID string) (depthCounters, error) {
	var c depthCounters
	ks := make([]map[string]types.AttributeValue, 0, depthShards+1)
	at := map[string]int{}
	for n := range depthShards {
		ks = append(ks, depthShardKey(tenantID, n))
		at[ks[n]["pk"].(*types.AttributeValueMemberS).Value] = n
	}
	ks = append(ks, legacyDepthKey(tenantID))
	items, err := s.batchGet(ctx, ks, true)
	if err != nil {
		return c, fmt.Errorf("read DLQ depth of tenant %s: %w", tenantID, err)
	}
	for _, item := range items {
		var one depthCounter
		if err := attributevalue.UnmarshalMap(item, &one); err != nil {
			return c, fmt.Errorf("decode DLQ depth of tenant %s: %w", tenantID, err)
		}
		pk, _ := item["pk"].(*types.AttributeValueMemberS)
		if pk == nil {
			continue
		}
		if n, ok := at[pk.Value]; ok {
			c.shards[n] = &one
		} else {
			c.legacy = &one
		}
	}
	return c, nil
}

// correctDepth sets a tenant's DLQ depth counter to n: shard 0 takes the
// difference (and the depth of the counter of before the shards, which is
// deleted), on the condition that no item of the counter has moved since
// it was read as was (the same depth after the same moves; absent ones
// still absent), checked on every shard in the same transaction. A
// counter that moved cancels it.
func (s *Store) correctDepth(ctx context.Context, tenantID string, was depthCounters, n int, now time.Time) error {
	shards := 0
	for _, sh := range was.shards {
		if sh != nil {
			shards += sh.Depth
		}
	}
	cond, _, values := unmoved(was.shards[0]) // its names are the update's
	if values == nil {
		values = map[string]types.AttributeValue{}
	}
	values[":diff"] = &types.AttributeValueMemberN{Value: strconv.Itoa(n - shards)}
	values[":now"] = timeValue(now)
	items := []types.TransactWriteItem{{Update: &types.Update{
		TableName: &s.table, Key: depthShardKey(tenantID, 0),
		UpdateExpression:    aws.String("ADD #depth :diff SET " + depthListing(tenantID, 0, values) + ", corrected_at = :now"),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: map[string]string{"#depth": "depth"}, ExpressionAttributeValues: values,
	}}}
	for i := 1; i < depthShards; i++ {
		cond, names, values := unmoved(was.shards[i])
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.table, Key: depthShardKey(tenantID, i),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values}})
	}
	cond, names, values := unmoved(was.legacy)
	if was.legacy == nil {
		items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.table, Key: legacyDepthKey(tenantID),
			ConditionExpression: aws.String(cond)}})
	} else {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: legacyDepthKey(tenantID),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values}})
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return err
}

// unmoved is the condition that an item of a counter is as it was read
// (nil: absent): the same depth after the same moves; with its names and
// values (nil when it uses none).
func unmoved(was *depthCounter) (string, map[string]string, map[string]types.AttributeValue) {
	if was == nil {
		return "attribute_not_exists(pk)", nil, nil
	}
	names := map[string]string{"#depth": "depth"}
	values := map[string]types.AttributeValue{":was": &types.AttributeValueMemberN{Value: strconv.Itoa(was.Depth)}}
	if was.Moves == nil {
		return "#depth = :was AND attribute_not_exists(moves)", names, values
	}
	values[":moves"] = &types.AttributeValueMemberN{Value: strconv.Itoa(*was.Moves)}
	return "#depth = :was AND moves = :moves", names, values
}

// movedMeanwhile reports whether a correction was cancelled for an item of
// the counter that moved since it was read: a failed condition, or a
// collision with a move's transaction.
func movedMeanwhile(err error) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" {
			return true
		}
	}
	return onlyConflicts(tce.CancellationReasons)
}

// countDead counts a tenant's deliveries in the dead index's shards and in
// gsi1's legacy dead partition (deadPartitions).
func (s *Store) countDead(ctx context.Context, tenantID string) (int, error) {
	n := 0
	for _, part := range deadPartitions(tenantID) {
		p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName: &s.table, IndexName: aws.String(part.src.index), Select: types.SelectCount,
			KeyConditionExpression:    aws.String(part.src.pkAttr + " = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: part.pk}},
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return 0, fmt.Errorf("count dead deliveries of tenant %s: %w", tenantID, err)
			}
			n += int(page.Count)
		}
	}
	return n, nil
}
