// Package outboxwrite puts items into the outbox table on their own, one
// PutItem each, for hookline's own writers: the API's POST /v1/events and
// the operational events (package opevent). The condition of the put is
// the producers' library's (outbox.PutIfNew), so that an event id is
// written once however it is written; the put itself is here, not there,
// because the library links only the SDK's DynamoDB types, never its
// client.
package outboxwrite

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/outbox"
)

// PutItemAPI is what PutNew needs of DynamoDB.
type PutItemAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ PutItemAPI = (*dynamodb.Client)(nil)

// PutNew writes an outbox item into table unless an event with its id is
// there already (outbox.PutIfNew): written is false then, and err nil.
func PutNew(ctx context.Context, db PutItemAPI, table string, item map[string]types.AttributeValue) (written bool, err error) {
	put := outbox.PutIfNew(table, item)
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                put.TableName,
		Item:                     put.Item,
		ConditionExpression:      put.ConditionExpression,
		ExpressionAttributeNames: put.ExpressionAttributeNames,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	return err == nil, err
}
