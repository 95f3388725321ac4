package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Tenant DLQ depth counters: one item per tenant (pk TENANT#<t>, sk
// DLQDEPTH), moved by one when a delivery dies and when a replay takes it
// out of the dead index, and listed through gsi1 (gsi1pk DLQDEPTH) for the
// per-tenant depth metric and the operator's stats.

const depthIndexKey = "DLQDEPTH"

// ErrDepthNotCounted wraps a failure to move a tenant's DLQ depth after the
// delivery itself was written: the caller goes on (the delivery is right)
// and logs it (the depth is one off until reconciled).
var ErrDepthNotCounted = errors.New("tenant DLQ depth not counted")

// AdjustDLQDepth moves a tenant's dead-delivery count by delta and returns
// the new count.
func (s *Store) AdjustDLQDepth(ctx context.Context, tenantID string, delta int) (int, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.table,
		Key:                      key("TENANT#"+tenantID, depthIndexKey),
		UpdateExpression:         aws.String("ADD #depth :d SET tenant_id = :t, gsi1pk = :g, gsi1sk = :t"),
		ExpressionAttributeNames: map[string]string{"#depth": "depth"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d": &types.AttributeValueMemberN{Value: strconv.Itoa(delta)},
			":t": &types.AttributeValueMemberS{Value: tenantID},
			":g": &types.AttributeValueMemberS{Value: depthIndexKey},
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("adjust DLQ depth of tenant %s: %w", tenantID, err)
	}
	n := 0
	if v, ok := out.Attributes["depth"].(*types.AttributeValueMemberN); ok {
		n, _ = strconv.Atoi(v.Value)
	}
	return n, nil
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
