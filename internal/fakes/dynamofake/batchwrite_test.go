package dynamofake

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

func batchWrite(db *DB, reqs ...types.WriteRequest) (*dynamodb.BatchWriteItemOutput, error) {
	return db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": reqs}})
}

func putReq(item map[string]types.AttributeValue) types.WriteRequest {
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
}

// BatchWriteItem holds DynamoDB's limits: 25 requests, no key twice, 400
// KB an item, exactly one of put or delete; a refused request writes
// nothing. Within them, each item is written as a PutItem or DeleteItem
// would write it, billed as one.
func TestBatchWriteItemRules(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	var reqs []types.WriteRequest
	for i := range 26 {
		reqs = append(reqs, putReq(sized("A", fmt.Sprint(i), 100)))
	}
	for _, bad := range [][]types.WriteRequest{
		reqs, // 26
		{putReq(key("A", "1")), putReq(key("A", "1"))}, // the same key twice
		{putReq(sized("A", "big", 400*1024+1))},        // over 400 KB
		{{PutRequest: &types.PutRequest{Item: key("A", "1")}, DeleteRequest: &types.DeleteRequest{Key: key("A", "2")}}},
		nil,
	} {
		_, err := batchWrite(db, bad...)
		require.ErrorContains(t, err, "ValidationException")
	}
	require.Empty(t, db.Items(), "nothing written by a refused request")
	require.Zero(t, db.Calls("BatchWriteItem"), "refused before it is a call")

	db.SetItem(sized("B", "gone", 20))
	out, err := batchWrite(db, append(reqs[:25:25], types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key("B", "gone")}})[1:]...)
	require.NoError(t, err)
	require.Empty(t, out.UnprocessedItems)
	require.Len(t, db.Items(), 24)
	require.Nil(t, db.Item(key("B", "gone")))
	require.Equal(t, 1, db.Calls("BatchWriteItem"))
	require.Equal(t, map[string]Units{"": {W: 25}}, db.Billed(), "one unit an item under 1 KB, the delete one")
}

// An item whose key value is over its throughput is left unprocessed, the
// others written; a request none of whose items could be written is
// refused as throttled.
func TestBatchWriteItemLeavesTheThrottledUnprocessed(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	fill(t, 1000, func(i int) error { return put(db, sized("HOT", "x", 100)) })
	out, err := batchWrite(db, putReq(sized("HOT", "1", 100)), putReq(sized("COLD", "1", 100)))
	require.NoError(t, err)
	require.Len(t, out.UnprocessedItems["t"], 1)
	require.Equal(t, "HOT", String(out.UnprocessedItems["t"][0].PutRequest.Item, "pk"))
	require.NotNil(t, db.Item(key("COLD", "1")))
	require.Nil(t, db.Item(key("HOT", "1")))

	_, err = batchWrite(db, putReq(sized("HOT", "2", 100)))
	require.True(t, Throttled(err), "%v", err)
	require.Contains(t, err.Error(), `"HOT"`, "names the key value")
}
