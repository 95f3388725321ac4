package erasure

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/outbox"
)

// OutboxDB is what OutboxTable needs of DynamoDB.
type OutboxDB interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ OutboxDB = (*dynamodb.Client)(nil)

// OutboxTable lists a tenant's outbox items through the outbox table's
// by_tenant index (outbox.IndexByTenant) and deletes them: the erasure's
// access to the outbox table, which it is granted Query on that index and
// DeleteItem for. Items a producer wrote without log_sk are not in the
// index: they expire by their TTL.
type OutboxTable struct {
	DB    OutboxDB
	Table string
	// NoIndex says the outbox has no by_tenant index (the message log is
	// off): no item can be found by its tenant, so TenantEvents lists none
	// and the items, with the deliveries that derive from them, expire by
	// their TTL. Default false.
	NoIndex bool
}

var _ Outbox = (*OutboxTable)(nil)

// TenantEvents returns up to limit of a tenant's outbox items (the index
// is eventually consistent: one deleted a moment ago may be listed again).
func (o *OutboxTable) TenantEvents(ctx context.Context, tenantID string, limit int) ([]OutboxEvent, error) {
	if o.NoIndex {
		return nil, nil
	}
	out, err := o.DB.Query(ctx, &dynamodb.QueryInput{
		TableName: &o.Table, IndexName: aws.String(outbox.IndexByTenant),
		KeyConditionExpression:    aws.String("#t = :t"),
		ExpressionAttributeNames:  map[string]string{"#t": outbox.AttrTenantID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: tenantID}},
		Limit:                     aws.Int32(int32(max(1, limit))),
	})
	if err != nil {
		return nil, fmt.Errorf("list the outbox items of tenant %s: %w", tenantID, err)
	}
	evs := make([]OutboxEvent, 0, len(out.Items))
	for _, item := range out.Items {
		id, _ := item[outbox.AttrID].(*types.AttributeValueMemberS)
		if id == nil {
			continue
		}
		ev := OutboxEvent{ID: id.Value}
		if ep, _ := item[outbox.AttrEndpointID].(*types.AttributeValueMemberS); ep != nil {
			ev.EndpointID = ep.Value
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// DeleteEvent deletes an outbox item and reports whether it existed.
func (o *OutboxTable) DeleteEvent(ctx context.Context, id string) (bool, error) {
	_, err := o.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                &o.Table,
		Key:                      map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: id}},
		ConditionExpression:      aws.String("attribute_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": outbox.AttrID},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete outbox item %s: %w", id, err)
	}
	return true, nil
}
