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
	require.Equal(t, 7, tb.Scans())
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
