package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/store/keys"
)

// TakeAPIRequest takes one of the limit expensive API requests of
// tenantID's one-second window holding at (APIRATE#<tenant> / <second>):
// one conditional UpdateItem (1 write unit) that adds one to the window's
// count unless it has reached limit; false, and nothing written, when it
// has. Concurrent callers across every api execution environment never
// take more than limit of one window between them. The item expires
// RateWindowTTL after its second (DynamoDB's TTL deletes it).
func (s *Store) TakeAPIRequest(ctx context.Context, tenantID string, at time.Time, limit int) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	window := at.UTC().Truncate(time.Second)
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       key(keys.APIRate(tenantID), window.Format(hourFormat)),
		UpdateExpression:          aws.String("SET #taken = if_not_exists(#taken, :zero) + :one, expires_at = :exp"),
		ConditionExpression:       aws.String("attribute_not_exists(#taken) OR #taken < :limit"),
		ExpressionAttributeNames:  map[string]string{"#taken": attrTaken},
		ExpressionAttributeValues: map[string]types.AttributeValue{":zero": n(0), ":one": n(1), ":limit": n(int64(limit)), ":exp": n(window.Add(RateWindowTTL).Unix())},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take an API request of tenant %s: %w", tenantID, err)
	}
	return true, nil
}
