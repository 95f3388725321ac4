package dynamofake

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// testIndex is the name of the tests' global index.
const testIndex = "gsi1"

// key is the key of the item pk, sk.
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

// The fake refuses what DynamoDB refuses, so that a store test cannot pass
// on a request the service would reject (the local cloud forgives some).
func TestFakeDBEnforcesDynamoDBsRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	k := key("A", "B")
	cases := []struct {
		name string
		in   *dynamodb.UpdateItemInput
	}{
		{"a value given and not used", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("SET a = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": n("1"), ":b": n("2")}}},
		{"a value used and not given", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("SET a = :a")}},
		{"an empty value map", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("REMOVE a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{}}},
		{"a reserved word", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("SET state = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("x")}}},
		{"overlapping paths", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("SET a = :a REMOVE a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": n("1")}}},
		{"a key attribute", &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String("SET pk = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("x")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := NewDB(testIndex)
			_, err := db.UpdateItem(ctx, c.in)
			require.ErrorContains(t, err, "ValidationException")
			require.Empty(t, db.items, "nothing written")
		})
	}

	t.Run("a transaction is all or nothing", func(t *testing.T) {
		db := NewDB(testIndex)
		upd := func(k map[string]types.AttributeValue, cond string) types.TransactWriteItem {
			u := &types.Update{Key: k, UpdateExpression: aws.String("ADD v :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")},
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
			if cond != "" {
				u.ConditionExpression = aws.String(cond)
			}
			return types.TransactWriteItem{Update: u}
		}
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			upd(key("A", "1"), ""), upd(key("A", "2"), "attribute_exists(pk)"),
		}})
		var tce *types.TransactionCanceledException
		require.ErrorAs(t, err, &tce)
		require.Equal(t, []string{"None", "ConditionalCheckFailed"}, []string{aws.ToString(tce.CancellationReasons[0].Code), aws.ToString(tce.CancellationReasons[1].Code)})
		require.Empty(t, db.items, "the first member is not written either")

		_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			upd(key("A", "1"), ""), upd(key("A", "1"), ""),
		}})
		require.ErrorContains(t, err, "multiple operations on one item")
		many := make([]types.TransactWriteItem, maxTransactItems+1)
		for i := range many {
			many[i] = upd(key("A", string(rune('a'+i%26))+string(rune('a'+i/26))), "")
		}
		_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: many})
		require.ErrorContains(t, err, "ValidationException")
		require.Empty(t, db.items)

		_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			upd(key("A", "1"), ""), upd(key("A", "2"), "attribute_not_exists(pk)"),
		}})
		require.NoError(t, err)
		require.Len(t, db.items, 2)
	})

	t.Run("a consistent read of the index is refused", func(t *testing.T) {
		_, err := NewDB(testIndex).Query(ctx, &dynamodb.QueryInput{IndexName: aws.String(testIndex), ConsistentRead: aws.Bool(true),
			KeyConditionExpression: aws.String("gsi1pk = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("x")}})
		require.ErrorContains(t, err, "ValidationException")
	})
}

// A Query's ProjectionExpression answers the named top-level attributes
// only, names by placeholder too; an undefined placeholder is refused as
// DynamoDB refuses it, and a document path is refused rather than
// answered wrong.
func TestQueryProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := NewDB("t")
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "p"}, "sk": &types.AttributeValueMemberS{Value: "s"},
		"filter": &types.AttributeValueMemberS{Value: "f"}, "secret": &types.AttributeValueMemberS{Value: "x"},
	}})
	require.NoError(t, err)
	q := func(expr string, names map[string]string) (*dynamodb.QueryOutput, error) {
		return db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "p"}},
			ProjectionExpression:      aws.String(expr), ExpressionAttributeNames: names})
	}
	out, err := q("pk, #f", map[string]string{"#f": "filter"})
	require.NoError(t, err)
	require.Len(t, out.Items, 1)
	require.Equal(t, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}, "filter": &types.AttributeValueMemberS{Value: "f"}}, out.Items[0])
	_, err = q("pk, #nope", map[string]string{"#f": "filter"})
	require.ErrorContains(t, err, "ValidationException")
	_, err = q("a.b", nil)
	require.ErrorContains(t, err, "unsupported projection path")
}
