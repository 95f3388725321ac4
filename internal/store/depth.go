package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// Tenant DLQ depth counters: one item per tenant (pk TENANT#<t>, sk
// DLQDEPTH), listed through gsi1 (gsi1pk DLQDEPTH) for the per-tenant depth
// metric and the operator's stats. Every move of a delivery into or out of
// dead (an attempt, a death recorded before a last attempt, a replay's
// claim) and the counter's move are one transaction: both happen or
// neither, so the counter cannot drift from the dead index. Each move also
// counts itself (moves) and stamps the counter (moved_at), which the
// reconciliation uses to tell a counter that is wrong from an index that
// has not caught up yet. Counters written by earlier versions, which moved
// the counter in a second write, may be off: ReconcileDLQDepth recounts.

const depthIndexKey = "DLQDEPTH"

// DefaultDepthSettle is a new Store's DepthSettle: one minute.
const DefaultDepthSettle = time.Minute

// depthMove is the counter's half of a transition: it moves tenantID's
// depth by delta.
func (s *Store) depthMove(tenantID string, delta int, now time.Time) *types.Update {
	return &types.Update{
		TableName:                &s.table,
		Key:                      depthCounterKey(tenantID),
		UpdateExpression:         aws.String("ADD #depth :d, moves :one SET tenant_id = :t, gsi1pk = :g, gsi1sk = :t, moved_at = :now"),
		ExpressionAttributeNames: map[string]string{"#depth": "depth"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d":   &types.AttributeValueMemberN{Value: strconv.Itoa(delta)},
			":one": &types.AttributeValueMemberN{Value: "1"},
			":t":   &types.AttributeValueMemberS{Value: tenantID},
			":g":   &types.AttributeValueMemberS{Value: depthIndexKey},
			":now": timeValue(now),
		},
	}
}

// maxConflictTries bounds how often a write that collided with another
// transaction on the same item (TransactionConflict) is tried again.
const maxConflictTries = 8

// transition writes a delivery's conditional update u and, when delta is not
// 0, the move of tenantID's DLQ depth by delta, in one transaction (a
// single UpdateItem when delta is 0). A failed condition is a
// *changedError carrying the item as it is; a collision with another
// transaction on either item is tried again after a jittered backoff (a
// burst of deaths of one tenant contends on its counter).
func (s *Store) transition(ctx context.Context, u *types.Update, tenantID string, delta int, now time.Time) error {
	u.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	for try := 1; ; try++ {
		var err error
		if delta == 0 {
			_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
				ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
				ReturnValuesOnConditionCheckFailure: u.ReturnValuesOnConditionCheckFailure,
			})
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
				{Update: u}, {Update: s.depthMove(tenantID, delta, now)},
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

// DLQDepths returns every tenant's dead-delivery count that has ever moved.
func (s *Store) DLQDepths(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression:    aws.String("gsi1pk = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: depthIndexKey}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list DLQ depths: %w", err)
		}
		for _, item := range page.Items {
			t, _ := item["tenant_id"].(*types.AttributeValueMemberS)
			d, _ := item["depth"].(*types.AttributeValueMemberN)
			if t == nil || d == nil {
				continue
			}
			n, _ := strconv.Atoi(d.Value)
			out[t.Value] = n
		}
	}
	return out, nil
}

// DepthCheck is what ReconcileDLQDepth found for one tenant, and did.
type DepthCheck struct {
	TenantID string
	// Counter is the tenant's DLQ depth counter as read (0 if it has none);
	// Indexed, its dead deliveries as the dead index lists them (when they
	// were counted).
	Counter, Indexed int
	// Corrected says the counter was set to Indexed.
	Corrected bool
	// Deferred says nothing was concluded: the counter moved less than
	// DepthSettle before (the index may not show that move yet) or while
	// the index was counted. The next reconciliation looks again.
	Deferred bool
}

// depthCounter is a tenant's DLQ depth counter item.
type depthCounter struct {
	Depth   int    `dynamodbav:"depth"`
	Moves   *int   `dynamodbav:"moves"`
	MovedAt string `dynamodbav:"moved_at"`
}

// ReconcileDLQDepth recounts a tenant's dead deliveries from the dead index
// and, if the counter says otherwise, sets the counter to the count. The
// index is eventually consistent, so it is trusted only once the counter
// has stood still for DepthSettle, and the correction is conditional on the
// counter not having moved since it was read (else Deferred). The count
// reads the tenant's whole dead index (eventually consistent reads of every
// dead delivery's item), so it is run on a schedule, not per delivery.
func (s *Store) ReconcileDLQDepth(ctx context.Context, tenantID string) (DepthCheck, error) {
	check := DepthCheck{TenantID: tenantID}
	now := s.Now().UTC()
	c, found, err := s.readDepthCounter(ctx, tenantID)
	if err != nil {
		return check, err
	}
	check.Counter = c.Depth
	if moved, err := time.Parse(time.RFC3339Nano, c.MovedAt); err == nil && now.Sub(moved) < s.DepthSettle {
		check.Deferred = true
		return check, nil
	}
	if check.Indexed, err = s.countDead(ctx, tenantID); err != nil {
		return check, err
	}
	if check.Indexed == check.Counter {
		return check, nil
	}
	err = s.correctDepth(ctx, tenantID, c, found, check.Indexed, now)
	if isConditionFailed(err) {
		check.Deferred = true
		return check, nil
	}
	if err != nil {
		return check, fmt.Errorf("correct DLQ depth of tenant %s: %w", tenantID, err)
	}
	check.Corrected = true
	return check, nil
}

// readDepthCounter reads a tenant's DLQ depth counter, strongly consistent, and
// whether it has one (if not, the zero counter).
func (s *Store) readDepthCounter(ctx context.Context, tenantID string) (depthCounter, bool, error) {
	var c depthCounter
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: depthCounterKey(tenantID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return c, false, fmt.Errorf("read DLQ depth of tenant %s: %w", tenantID, err)
	}
	if err := attributevalue.UnmarshalMap(out.Item, &c); err != nil {
		return c, false, fmt.Errorf("decode DLQ depth of tenant %s: %w", tenantID, err)
	}
	return c, out.Item != nil, nil
}

// correctDepth sets a tenant's DLQ depth counter to n, on the condition
// that it has not moved since it was read as was (found: it existed): the
// same depth after the same moves. A counter that moved fails the
// condition.
func (s *Store) correctDepth(ctx context.Context, tenantID string, was depthCounter, found bool, n int, now time.Time) error {
	values := map[string]types.AttributeValue{
		":n":   &types.AttributeValueMemberN{Value: strconv.Itoa(n)},
		":t":   &types.AttributeValueMemberS{Value: tenantID},
		":g":   &types.AttributeValueMemberS{Value: depthIndexKey},
		":now": timeValue(now),
	}
	cond := "attribute_not_exists(pk)"
	if found {
		values[":was"] = &types.AttributeValueMemberN{Value: strconv.Itoa(was.Depth)}
		cond = "#depth = :was AND attribute_not_exists(moves)"
		if was.Moves != nil {
			values[":moves"] = &types.AttributeValueMemberN{Value: strconv.Itoa(*was.Moves)}
			cond = "#depth = :was AND moves = :moves"
		}
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: depthCounterKey(tenantID),
		UpdateExpression:          aws.String("SET #depth = :n, tenant_id = :t, gsi1pk = :g, gsi1sk = :t, corrected_at = :now"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#depth": "depth"},
		ExpressionAttributeValues: values,
	})
	return err
}

// countDead counts a tenant's deliveries in the dead index.
func (s *Store) countDead(ctx context.Context, tenantID string) (int, error) {
	n := 0
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant), Select: types.SelectCount,
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: keys.TenantIndex(tenantID, "DEAD")}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("count dead deliveries of tenant %s: %w", tenantID, err)
		}
		n += int(page.Count)
	}
	return n, nil
}
