package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// PutDeliveryRecord writes d's record as given, replacing any: the state a
// test (package storefake) or a fixture starts from, which no sequence of
// attempts need build. A delivery with a CreatedAt is in the delivery log
// under it; a dead one with a DeadAt is in the dead index under it; a move
// into or out of dead moves its tenant's DLQ depth, in the same
// transaction, as the attempt that left it so would have. Not for the
// product's own paths, which record attempts (RecordAttempt): a function,
// not a Store method, so that no port nor IAM grant (Calls) includes it.
func PutDeliveryRecord(ctx context.Context, s *Store, d domain.Delivery) error {
	old, err := s.Delivery(ctx, d.DeliveryID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	item, err := attributevalue.MarshalMap(d)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", d.DeliveryID, err)
	}
	if d.Attempts == 0 {
		delete(item, "attempts") // as a record no attempt wrote: the counter versions the attempt log (expected)
	}
	if !d.CreatedAt.IsZero() {
		logAttributes(d, item, sortableTime(d.CreatedAt))
	}
	if d.State == domain.StateDead && d.DeadAt != nil {
		item[AttrDeadPK] = &types.AttributeValueMemberS{Value: DeadPK(d.TenantID, d.DeliveryID)}
		item[AttrDeadSK] = &types.AttributeValueMemberS{Value: keys.TimeID(*d.DeadAt, d.DeliveryID)}
	}
	put := &types.Put{TableName: &s.table, Item: withKey(item, deliveryKey(d.DeliveryID))}
	delta := domain.DLQDepthDelta(old.State, d.State)
	if delta == 0 {
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item})
	} else {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: put}, {Update: s.depthMove(d.TenantID, d.DeliveryID, delta, s.Now().UTC())},
		}})
	}
	if err != nil {
		return fmt.Errorf("put delivery %s: %w", d.DeliveryID, err)
	}
	return nil
}
