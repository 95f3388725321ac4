package dynamofake

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// t0 is the start of the partition tests' second.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// limitedDB is a DB with DynamoDB's limits on, whose clock is *now.
func limitedDB() (*DB, *time.Time) {
	now := t0
	db := NewDB(testIndex)
	db.Limits = DynamoDBLimits()
	db.Now = func() time.Time { return now }
	db.PageSize = 1000
	return db, &now
}

// sized is the item pk, sk of exactly size bytes (as DynamoDB counts
// them), with more attributes if given.
func sized(pk, sk string, size int, more ...string) map[string]types.AttributeValue {
	it := key(pk, sk)
	for i := 0; i+1 < len(more); i += 2 {
		it[more[i]] = &types.AttributeValueMemberS{Value: more[i+1]}
	}
	it["pad"] = &types.AttributeValueMemberS{}
	it["pad"] = &types.AttributeValueMemberS{Value: strings.Repeat("x", size-itemSize(it))}
	return it
}

// consumed is what the key value (of the table, or of index) consumed.
func consumed(t *testing.T, hot []Consumed, index, key string) Consumed {
	t.Helper()
	for _, c := range hot {
		if c.Index == index && c.Key == key {
			return c
		}
	}
	return Consumed{Index: index, Key: key}
}

// fill makes n requests, each of which must succeed.
func fill(t *testing.T, n int, do func(i int) error) {
	t.Helper()
	for i := range n {
		require.NoError(t, do(i), "request %d", i)
	}
}

func put(db *DB, item map[string]types.AttributeValue) error {
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{Item: item})
	return err
}

// A write consumes a unit per started KB of the item, the larger of before
// and after; a key value takes 1,000 a second, and the request that would
// go over is refused as the SDK answers it after its retries.
func TestPartitionWriteUnitsByItemSize(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	require.NoError(t, put(db, sized("A", "1", 1024)))
	require.NoError(t, put(db, sized("B", "1", 1025)))
	require.NoError(t, put(db, sized("C", "1", 20)))
	require.NoError(t, put(db, sized("C", "1", 3000))) // replacing a small item: its new size
	hot := db.Hottest()
	require.Equal(t, 1.0, consumed(t, hot, "", "A").WCU, "1 KB: one unit")
	require.Equal(t, 2.0, consumed(t, hot, "", "B").WCU, "a byte more: two")
	require.Equal(t, 4.0, consumed(t, hot, "", "C").WCU, "1 + 3")
	require.Equal(t, "C", hot[0].Key, "the hottest first")

	fill(t, 999, func(i int) error { return put(db, sized("A", "x", 100)) })
	err := put(db, sized("A", "x", 100))
	var pt *types.ProvisionedThroughputExceededException
	require.ErrorAs(t, err, &pt)
	require.True(t, Throttled(err))
	require.Contains(t, err.Error(), `"A"`, "names the key value")
	require.Equal(t, Consumed{Key: "A", WCU: 1000, Refused: 1}, consumed(t, db.Hottest(), "", "A"))

	// A failed condition consumes too; an unknown item's delete one unit.
	_, err = db.PutItem(context.Background(), &dynamodb.PutItemInput{Item: sized("D", "1", 20), ConditionExpression: aws.String("attribute_exists(pk)")})
	require.ErrorAs(t, err, new(*types.ConditionalCheckFailedException))
	_, err = db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{Key: key("D", "2")})
	require.NoError(t, err)
	require.Equal(t, 2.0, consumed(t, db.Hottest(), "", "D").WCU)
}

// A transaction's writes cost twice; a ConditionCheck is one of them.
func TestPartitionTransactionalWritesCountTwice(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	db.SetItem(sized("A", "check", 2000))
	tx := func(sk string) error {
		_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{Item: sized("A", sk, 1500)}},
		}})
		return err
	}
	require.NoError(t, tx("1"))
	require.Equal(t, 4.0, consumed(t, db.Hottest(), "", "A").WCU, "2 KB, twice")
	_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{Key: key("A", "check"), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Put: &types.Put{Item: sized("B", "1", 20)}},
	}})
	require.NoError(t, err)
	require.Equal(t, 8.0, consumed(t, db.Hottest(), "", "A").WCU, "the check: 2 KB, twice")
	require.Equal(t, 2.0, consumed(t, db.Hottest(), "", "B").WCU)

	fill(t, 248, func(i int) error { return tx("x") }) // 8 + 248×4 = 1,000
	err = tx("x")
	require.True(t, Throttled(err), "%v", err)
	var tce *types.TransactionCanceledException
	require.ErrorAs(t, err, &tce)
	require.Equal(t, "ThrottlingError", aws.ToString(tce.CancellationReasons[0].Code))
}

// An item in the index is written there too, on its index key value: a
// put, a change, a removal one write each (of the index entry's size), a
// move to another index key value two; the index's key value refuses the
// table's write when it is exhausted.
func TestPartitionIndexWritesCountOnTheIndexKey(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	ctx := context.Background()
	require.NoError(t, put(db, sized("A", "1", 1500, "gsi1pk", "HOT", "gsi1sk", "1")))
	require.NoError(t, put(db, sized("B", "1", 100)), "not in the index")
	hot := db.Hottest()
	require.Equal(t, 2.0, consumed(t, hot, testIndex, "HOT").WCU)
	require.Equal(t, 2.0, consumed(t, hot, "", "A").WCU)

	upd := func(k map[string]types.AttributeValue, expr string, values map[string]types.AttributeValue) error {
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{Key: k, UpdateExpression: aws.String(expr), ExpressionAttributeValues: values})
		return err
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	require.NoError(t, upd(key("A", "1"), "SET v = :v", map[string]types.AttributeValue{":v": s("1")}))
	require.Equal(t, 4.0, consumed(t, db.Hottest(), testIndex, "HOT").WCU, "a change")
	require.NoError(t, upd(key("A", "1"), "SET gsi1pk = :g", map[string]types.AttributeValue{":g": s("COLD")}))
	require.Equal(t, 6.0, consumed(t, db.Hottest(), testIndex, "HOT").WCU, "the removal from HOT")
	require.Equal(t, 2.0, consumed(t, db.Hottest(), testIndex, "COLD").WCU, "and the put under COLD")
	require.NoError(t, upd(key("A", "1"), "REMOVE gsi1pk", nil))
	require.Equal(t, 4.0, consumed(t, db.Hottest(), testIndex, "COLD").WCU, "out of the index")
	require.NoError(t, upd(key("B", "1"), "SET v = :v", map[string]types.AttributeValue{":v": s("1")}))
	require.Equal(t, 4.0, consumed(t, db.Hottest(), testIndex, "COLD").WCU, "an item out of the index writes none")

	// Many table key values, one index key value: the index throttles.
	fill(t, 994, func(i int) error {
		return put(db, sized("K"+string(rune(i)), "1", 100, "gsi1pk", "HOT", "gsi1sk", "1"))
	})
	err := put(db, sized("K-last", "1", 100, "gsi1pk", "HOT", "gsi1sk", "1"))
	require.True(t, Throttled(err))
	require.Contains(t, err.Error(), `index gsi1 partition key value "HOT"`)
	require.Nil(t, db.Item(key("K-last", "1")), "not written")
	require.Equal(t, Consumed{Index: testIndex, Key: "HOT", WCU: 1000, Refused: 1}, db.Hottest()[0])
}

// A read consumes a unit per started 4 KB strongly consistent, half that
// eventually consistent, at least that for an item that is not there; a
// key value takes 3,000 a second.
func TestPartitionReadUnits(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	ctx := context.Background()
	db.SetItem(sized("A", "1", 4097))
	get := func(pk string, strong bool) error {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{Key: key(pk, "1"), ConsistentRead: aws.Bool(strong)})
		return err
	}
	require.NoError(t, get("A", true))
	require.NoError(t, get("A", false))
	require.NoError(t, get("none", false))
	hot := db.Hottest()
	require.Equal(t, 3.0, consumed(t, hot, "", "A").RCU, "8 KB: 2 strong, 1 eventual")
	require.Equal(t, 0.5, consumed(t, hot, "", "none").RCU, "an item not there: half a unit")

	_, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"T": {
		Keys: []map[string]types.AttributeValue{key("A", "1"), key("B", "1")}, ConsistentRead: aws.Bool(true)}}})
	require.NoError(t, err)
	require.Equal(t, 5.0, consumed(t, db.Hottest(), "", "A").RCU, "each item of a batch alone")
	require.Equal(t, 1.0, consumed(t, db.Hottest(), "", "B").RCU)

	fill(t, 3000-5, func(int) error { return get("A", false) }) // 8 KB eventual: 1 each
	err = get("A", false)
	var pt *types.ProvisionedThroughputExceededException
	require.ErrorAs(t, err, &pt)
	require.Equal(t, Consumed{Key: "A", RCU: 3000, Refused: 1}, consumed(t, db.Hottest(), "", "A"))
}

// A query consumes by the total size of the items it read, rounded up to
// 4 KB, halved when eventually consistent (an index always is).
func TestPartitionQueryUnitsBySize(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	ctx := context.Background()
	for i := range 10 {
		db.SetItem(sized("P", string(rune('a'+i)), 1000, "gsi1pk", "IX", "gsi1sk", "1"))
	}
	q := func(strong bool) {
		_, err := db.Query(ctx, &dynamodb.QueryInput{KeyConditionExpression: aws.String("pk = :pk"), ConsistentRead: aws.Bool(strong),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "P"}}})
		require.NoError(t, err)
	}
	q(true)
	require.Equal(t, 3.0, consumed(t, db.Hottest(), "", "P").RCU, "10,000 bytes: 3 units, not 10")
	q(false)
	require.Equal(t, 4.5, consumed(t, db.Hottest(), "", "P").RCU)
	_, err := db.Query(ctx, &dynamodb.QueryInput{IndexName: aws.String(testIndex), KeyConditionExpression: aws.String("gsi1pk = :g"),
		Limit: aws.Int32(5), ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "IX"}}})
	require.NoError(t, err)
	require.Equal(t, 1.0, consumed(t, db.Hottest(), testIndex, "IX").RCU, "5,000 bytes read of the index: 2 units, halved")
	_, err = db.Query(ctx, &dynamodb.QueryInput{IndexName: aws.String(testIndex), KeyConditionExpression: aws.String("gsi1pk = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "EMPTY"}}})
	require.NoError(t, err)
	require.Equal(t, 0.5, consumed(t, db.Hottest(), testIndex, "EMPTY").RCU, "a query that reads nothing: half a unit")
}

// The limit is per second of the clock: the next second starts afresh, and
// Hottest keeps the peak of any one second.
func TestPartitionSecondRollsOver(t *testing.T) {
	t.Parallel()
	db, now := limitedDB()
	*now = t0.Add(500 * time.Millisecond)
	fill(t, 1000, func(int) error { return put(db, sized("A", "1", 20)) })
	*now = t0.Add(999 * time.Millisecond)
	require.True(t, Throttled(put(db, sized("A", "1", 20))), "the same second")
	*now = t0.Add(time.Second)
	fill(t, 10, func(int) error { return put(db, sized("A", "1", 20)) })
	require.Equal(t, Consumed{Key: "A", WCU: 1000, Refused: 1}, consumed(t, db.Hottest(), "", "A"), "the peak second")
	*now = t0.Add(2 * time.Second)
	fill(t, 1000, func(int) error { return put(db, sized("A", "1", 20)) })
}

// A transaction one of whose key values is exhausted is refused whole:
// none of its members is written, and none consumes.
func TestPartitionTransactionRefusedWhole(t *testing.T) {
	t.Parallel()
	db, _ := limitedDB()
	fill(t, 1000, func(int) error { return put(db, sized("HOT", "1", 20)) })
	_, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{Item: sized("COLD", "1", 20)}}, {Put: &types.Put{Item: sized("HOT", "2", 20)}},
	}})
	var tce *types.TransactionCanceledException
	require.ErrorAs(t, err, &tce)
	require.Equal(t, []string{"None", "ThrottlingError"}, []string{aws.ToString(tce.CancellationReasons[0].Code), aws.ToString(tce.CancellationReasons[1].Code)})
	require.Nil(t, db.Item(key("COLD", "1")), "the cold member is not written")
	require.Equal(t, Consumed{Key: "COLD", Refused: 0}, consumed(t, db.Hottest(), "", "COLD"), "nor counted")
}

// Without Limits nothing is counted or refused: the other tests' fake.
func TestPartitionLimitsOffByDefault(t *testing.T) {
	t.Parallel()
	db := NewDB(testIndex)
	fill(t, 2000, func(int) error { return put(db, sized("A", "1", 20)) })
	require.Empty(t, db.Hottest())
}

// Table counts as DB does: its key, and each index's key value with the
// entry as projected; a query of an index by the size of the entries read.
func TestPartitionTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tb := New("T", "id")
	tb.AddIndex("byLog", "log", "seq") // keys only
	tb.Limits = DynamoDBLimits()
	tb.Now = func() time.Time { return t0 }
	row := func(id string) Item {
		return Item{"id": &types.AttributeValueMemberS{Value: id}, "log": &types.AttributeValueMemberS{Value: "L"},
			"seq": &types.AttributeValueMemberS{Value: id}, "body": &types.AttributeValueMemberS{Value: strings.Repeat("b", 3000)}}
	}
	_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: row("1")})
	require.NoError(t, err)
	hot := tb.Hottest()
	require.Equal(t, 3.0, consumed(t, hot, "", "1").WCU)
	require.Equal(t, 1.0, consumed(t, hot, "byLog", "L").WCU, "the projection is small")
	_, err = tb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("T"), Key: Item{"id": &types.AttributeValueMemberS{Value: "1"}}})
	require.NoError(t, err)
	require.Equal(t, 0.5, consumed(t, tb.Hottest(), "", "1").RCU)
	_, err = tb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("byLog"), KeyConditionExpression: aws.String("#l = :l"),
		ExpressionAttributeNames: map[string]string{"#l": "log"}, ExpressionAttributeValues: map[string]types.AttributeValue{":l": &types.AttributeValueMemberS{Value: "L"}}})
	require.NoError(t, err)
	require.Equal(t, 0.5, consumed(t, tb.Hottest(), "byLog", "L").RCU)

	for i := range 999 {
		_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: row(string(rune('a' + i)))})
		require.NoError(t, err, i)
	}
	_, err = tb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("T"), Item: row("last")})
	require.True(t, Throttled(err), "the index's key value L is exhausted")
	require.Len(t, tb.Items(), 1000)
}

// Every request's units are billed, with or without limits: the table's
// and each index's apart, a refused request not at all.
func TestBilledUnits(t *testing.T) {
	t.Parallel()
	for _, limited := range []bool{false, true} {
		db, _ := limitedDB()
		if !limited {
			db.Limits = nil
		}
		require.Empty(t, db.Billed())
		require.NoError(t, put(db, sized("A", "1", 1500, "gsi1pk", "P", "gsi1sk", "1"))) // 2 on the table, 2 on the index (it projects all)
		require.NoError(t, put(db, sized("B", "1", 20)))                                 // 1, no index entry
		_, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{Key: key("A", "1"), ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		_, err = db.GetItem(context.Background(), &dynamodb.GetItemInput{Key: key("B", "1")})
		require.NoError(t, err)
		_, err = db.PutItem(context.Background(), &dynamodb.PutItemInput{Item: sized("C", "1", 20), ConditionExpression: aws.String("attribute_exists(pk)")})
		require.ErrorAs(t, err, new(*types.ConditionalCheckFailedException)) // a failed condition: 1 on the table
		require.Equal(t, map[string]Units{"": {W: 4, R: 1.5}, testIndex: {W: 2}}, db.Billed(), "limited: %v", limited)
	}
	db, _ := limitedDB()
	fill(t, 1000, func(i int) error { return put(db, sized("A", "x", 100)) })
	require.Error(t, put(db, sized("A", "x", 100)))
	require.Equal(t, map[string]Units{"": {W: 1000}}, db.Billed(), "the refused write is not billed")
}
