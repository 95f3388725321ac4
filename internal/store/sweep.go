package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// ClaimSweep reports whether the caller may sweep the DLQ now: true for at
// most one caller per gap (a conditional write of the last sweep's time),
// so that however many jobs complete, the DLQ is swept once per gap.
func (s *Store) ClaimSweep(ctx context.Context, gap time.Duration) (bool, error) {
	now := s.Now().UTC()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(keys.SweepPK, keys.SweepSK),
		UpdateExpression:    aws.String("SET swept_at = :now"),
		ConditionExpression: aws.String("attribute_not_exists(swept_at) OR swept_at <= :since"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": timeValue(now), ":since": timeValue(now.Add(-gap)),
		},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim the DLQ sweep: %w", err)
	}
	return true, nil
}
