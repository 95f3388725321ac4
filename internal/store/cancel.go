package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// CancelDelivery marks a pending delivery cancelled by job at, or one that
// has no record yet (d's ids alone: its message is still queued, never
// attempted): one UpdateItem conditional on the record being absent or
// pending, so an attempt that records it delivered or dead first wins, and
// one that records after the cancel finds it cancelled (RecordAttempt). It
// reports whether it cancelled it, and the record as it is when it did
// not: delivered, dead, or cancelled already (by job itself, when a
// stopped step runs again). A record it creates gets the ids, creation
// time and expiry an attempt's would.
func (s *Store) CancelDelivery(ctx context.Context, d domain.Delivery, job string, at time.Time) (domain.Delivery, bool, error) {
	now := s.Now().UTC()
	values := map[string]types.AttributeValue{
		":cancelled": &types.AttributeValueMemberS{Value: string(domain.StateCancelled)},
		":pending":   &types.AttributeValueMemberS{Value: string(domain.StatePending)},
		":at":        timeValue(at),
		":job":       &types.AttributeValueMemberS{Value: job},
	}
	set := "SET #state = :cancelled, cancelled_at = :at, cancelled_by = :job"
	created := s.creationAttributes(d, now)
	for _, n := range slices.Sorted(maps.Keys(created)) {
		set += fmt.Sprintf(", %s = if_not_exists(%s, :c_%s)", n, n, n)
		values[":c_"+n] = created[n]
	}
	err := s.transition(ctx, &types.Update{
		TableName: &s.table, Key: deliveryKey(d.DeliveryID),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #state = :pending"),
		ExpressionAttributeNames:  map[string]string{"#state": "state"},
		ExpressionAttributeValues: values,
	}, d.TenantID, d.DeliveryID, 0, now)
	var changed *changedError
	if errors.As(err, &changed) {
		cur, rerr := s.reread(ctx, d, changed.item)
		return cur, false, rerr
	}
	if err != nil {
		return domain.Delivery{}, false, fmt.Errorf("cancel delivery %s: %w", d.DeliveryID, err)
	}
	return domain.Delivery{}, true, nil
}
