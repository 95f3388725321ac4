package dynamofake

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// An index added with AddIndex holds its keys, the table's and the
// included attributes only: a query answers nothing else, and a write is
// charged to it by the entry's projected size, not the item's.
func TestDBIncludeIndex(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	db.AddIndex("by_x", "x_pk", "x_sk", "small")
	item := sized("A", "B", 4000, "x_pk", "P", "x_sk", "1", "small", "s")
	require.NoError(t, put(db, item))

	out, err := db.Query(context.Background(), &dynamodb.QueryInput{IndexName: aws.String("by_x"),
		KeyConditionExpression:    aws.String("x_pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "P"}}})
	require.NoError(t, err)
	require.Len(t, out.Items, 1)
	require.ElementsMatch(t, []string{"pk", "sk", "x_pk", "x_sk", "small"}, keysOf(out.Items[0]), "pad is not projected")

	hot := db.Hottest()
	require.Equal(t, 4.0, consumed(t, hot, "", "A").WCU, "the table's write is the item's")
	require.Equal(t, 1.0, consumed(t, hot, "by_x", "P").WCU, "the index's is the entry's")
	require.Zero(t, consumed(t, hot, testIndex, "").WCU, "not in gsi1")
}

func keysOf(m map[string]types.AttributeValue) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// An index query with ScanIndexForward false reads newest first, and an
// ExclusiveStartKey (one of an item, or a position between items) resumes
// after it in that order, as DynamoDB's does.
func TestDBIndexBackward(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	db := NewDB(testIndex)
	db.AddIndex("by_x", "x_pk", "x_sk")
	for _, k := range []string{"1", "2", "4", "5"} {
		require.NoError(t, put(db, map[string]types.AttributeValue{"pk": s("I" + k), "sk": s("S"), "x_pk": s("P"), "x_sk": s(k)}))
	}
	read := func(start string) []string {
		in := &dynamodb.QueryInput{IndexName: aws.String("by_x"), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(2),
			KeyConditionExpression:    aws.String("x_pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("P")}}
		if start != "" {
			in.ExclusiveStartKey = map[string]types.AttributeValue{"pk": s("I" + start), "sk": s("S"), "x_pk": s("P"), "x_sk": s(start)}
		}
		out, err := db.Query(context.Background(), in)
		require.NoError(t, err)
		var got []string
		for _, it := range out.Items {
			got = append(got, String(it, "x_sk"))
		}
		return got
	}
	require.Equal(t, []string{"5", "4"}, read(""))
	require.Equal(t, []string{"2", "1"}, read("4"))
	require.Equal(t, []string{"2", "1"}, read("3"), "a position between items")
	require.Empty(t, read("1"))
}
