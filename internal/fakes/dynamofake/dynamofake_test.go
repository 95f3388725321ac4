package dynamofake_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

func item(id string, pad int) dynamofake.Item {
	return dynamofake.Item{"id": &types.AttributeValueMemberS{Value: id}, "pad": &types.AttributeValueMemberS{Value: strings.Repeat("a", pad)}}
}

// scanAll scans the table to its end, returning the ids page by page.
func scanAll(t *testing.T, tb *dynamofake.Table, limit *int32) [][]string {
	t.Helper()
	var pages [][]string
	var start map[string]types.AttributeValue
	for {
		out, err := tb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("T"), ExclusiveStartKey: start, Limit: limit})
		require.NoError(t, err)
		var ids []string
		for _, it := range out.Items {
			ids = append(ids, it["id"].(*types.AttributeValueMemberS).Value)
		}
		pages = append(pages, ids)
		if out.LastEvaluatedKey == nil {
			return pages
		}
		start = out.LastEvaluatedKey
	}
}

func TestScanPages(t *testing.T) {
	t.Parallel()
	tb := dynamofake.New("T", "id")
	for i := range 5 {
		tb.Put(item(strconv.Itoa(i), 300<<10))
	}
	require.Equal(t, [][]string{{"0", "1", "2"}, {"3", "4"}}, scanAll(t, tb, nil), "a page stops at 1 MB")
	require.Equal(t, [][]string{{"0", "1"}, {"2", "3"}, {"4"}}, scanAll(t, tb, aws.Int32(2)), "and at Limit")
	tb.PageSize = 4
	require.Equal(t, [][]string{{"0", "1", "2"}, {"3", "4"}}, scanAll(t, tb, nil))
	require.Equal(t, 7, tb.Calls("Scan"))
}

func TestScanRefusals(t *testing.T) {
	t.Parallel()
	tb := dynamofake.New("T", "id")
	var notFound *types.ResourceNotFoundException
	_, err := tb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("U")})
	require.True(t, errors.As(err, &notFound), "unknown table: %v", err)
	_, err = tb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("T"), Limit: aws.Int32(0)})
	require.ErrorContains(t, err, "ValidationException")
	denied := errors.New("AccessDeniedException")
	tb.Fail = func(string) error { return denied }
	_, err = tb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("T")})
	require.ErrorIs(t, err, denied)
}

// PutItem evaluates its condition as DynamoDB does and holds an item to the
// table's key.
func TestTablePutItem(t *testing.T) {
	t.Parallel()
	tb := dynamofake.New("T", "id")
	ctx := context.Background()
	put := func(it dynamofake.Item) error {
		_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: it,
			ConditionExpression: aws.String("attribute_not_exists(#id)"), ExpressionAttributeNames: map[string]string{"#id": "id"}})
		return err
	}
	require.NoError(t, put(item("a", 1)))
	var ccf *types.ConditionalCheckFailedException
	require.True(t, errors.As(put(item("a", 2)), &ccf), "the item exists")
	require.Equal(t, []dynamofake.Item{item("a", 1)}, tb.Items(), "not replaced")
	require.Error(t, put(dynamofake.Item{"x": &types.AttributeValueMemberS{Value: "y"}}), "no key")
	_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: item("b", 1),
		ConditionExpression: aws.String("attribute_not_exists(id)"), ExpressionAttributeNames: map[string]string{"#id": "id"}})
	require.Error(t, err, "a name given and not used")
	_, err = tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: item("b", 400<<10)})
	require.Error(t, err, "over 400 KB")
}

// A query of a global index: sparse, in sort key order either way, Limit
// read before the filter, projected, continued by LastEvaluatedKey; a
// strongly consistent read, an unknown index and an unused value are
// refused. GetItem reads by the table's key.
func TestTableQueryAndGetItem(t *testing.T) {
	t.Parallel()
	tb := dynamofake.New("T", "id")
	tb.AddIndex("by_g", "g", "s", "kind")
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	for i, kind := range []string{"a", "b", "a", "b", "a"} {
		tb.Put(dynamofake.Item{"id": s("i" + strconv.Itoa(i)), "g": s("G"), "s": s(strconv.Itoa(i)), "kind": s(kind), "body": s("x")})
	}
	tb.Put(dynamofake.Item{"id": s("unindexed"), "g": s("G")})
	ctx := context.Background()
	q := func(limit int32, forward bool, filter string, start map[string]types.AttributeValue) (*dynamodb.QueryOutput, error) {
		in := &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("by_g"), KeyConditionExpression: aws.String("g = :g AND s >= :lo"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G"), ":lo": s("1")}, ScanIndexForward: aws.Bool(forward),
			Limit: aws.Int32(limit), ExclusiveStartKey: start}
		if filter != "" {
			in.FilterExpression = aws.String("kind = :k")
			in.ExpressionAttributeValues[":k"] = s(filter)
		}
		return tb.Query(ctx, in)
	}
	ids := func(out *dynamodb.QueryOutput) []string {
		var r []string
		for _, it := range out.Items {
			require.NotContains(t, it, "body", "not projected")
			r = append(r, dynamofake.String(it, "id"))
		}
		return r
	}
	out, err := q(2, false, "", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"i4", "i3"}, ids(out), "newest first")
	out, err = q(2, false, "", out.LastEvaluatedKey)
	require.NoError(t, err)
	require.Equal(t, []string{"i2", "i1"}, ids(out))
	require.Nil(t, out.LastEvaluatedKey, "the end")
	out, err = q(2, true, "a", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"i2"}, ids(out), "two read, the filter after")
	require.NotNil(t, out.LastEvaluatedKey)

	_, err = tb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("by_g"), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G")}})
	require.ErrorContains(t, err, "ValidationException", "a consistent read of a global index")
	_, err = tb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("other"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G")}})
	require.ErrorContains(t, err, "ValidationException", "no such index")
	_, err = tb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("by_g"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G"), ":x": s("x")}})
	require.ErrorContains(t, err, "ValidationException", "a value given and not used")
	require.Equal(t, 6, tb.Calls("Query"))

	got, err := tb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("T"), Key: dynamofake.Item{"id": s("i1")}})
	require.NoError(t, err)
	require.Equal(t, "x", dynamofake.String(got.Item, "body"), "the whole item")
	got, err = tb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("T"), Key: dynamofake.Item{"id": s("none")}})
	require.NoError(t, err)
	require.Nil(t, got.Item)
}
