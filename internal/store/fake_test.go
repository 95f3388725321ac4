package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeDB is an in-memory state table with just what the store's unit tests
// need: items by pk/sk, conditional puts on attribute_not_exists(pk), batch
// reads, and queries of a partition by sort key prefix (a tenant's
// endpoints), in sort key order, a page of pageSize items at a time.
// Updates are recorded, not applied: the store's update expressions are
// checked against the local cloud (e2e), not re-implemented here.
type fakeDB struct {
	mu       sync.Mutex
	items    map[string]map[string]types.AttributeValue
	pageSize int
	calls    map[string]int
	batchMax int // the most keys one BatchGetItem asked for
	// consistent says, for each BatchGetItem, whether it read strongly
	// consistent.
	consistent []bool
	updates    []*dynamodb.UpdateItemInput
}

func newFakeDB() *fakeDB {
	return &fakeDB{items: map[string]map[string]types.AttributeValue{}, pageSize: 2, calls: map[string]int{}}
}

func str(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

func itemKey(item map[string]types.AttributeValue) string {
	return str(item, "pk") + "\x00" + str(item, "sk")
}

func (f *fakeDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetItem"]++
	return &dynamodb.GetItemOutput{Item: f.items[itemKey(in.Key)]}, nil
}

func (f *fakeDB) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["BatchGetItem"]++
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for table, ka := range in.RequestItems {
		if len(ka.Keys) > 100 {
			return nil, fmt.Errorf("ValidationException: %d keys, at most 100", len(ka.Keys))
		}
		f.consistent = append(f.consistent, aws.ToBool(ka.ConsistentRead))
		f.batchMax = max(f.batchMax, len(ka.Keys))
		for _, k := range ka.Keys {
			if item, ok := f.items[itemKey(k)]; ok {
				out.Responses[table] = append(out.Responses[table], item)
			}
		}
	}
	return out, nil
}

func (f *fakeDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["PutItem"]++
	k := itemKey(in.Item)
	switch c := aws.ToString(in.ConditionExpression); c {
	case "":
	case "attribute_not_exists(pk)":
		if _, ok := f.items[k]; ok {
			return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
		}
	default:
		return nil, fmt.Errorf("fakeDB: condition %q not supported", c)
	}
	f.items[k] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeDB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["UpdateItem"]++
	f.updates = append(f.updates, in)
	return &dynamodb.UpdateItemOutput{}, nil
}

func (f *fakeDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["Query"]++
	if in.IndexName != nil || aws.ToString(in.KeyConditionExpression) != "pk = :pk AND begins_with(sk, :sk)" {
		return nil, fmt.Errorf("fakeDB: only a partition's items by sort key prefix can be queried")
	}
	pk, prefix := str(in.ExpressionAttributeValues, ":pk"), str(in.ExpressionAttributeValues, ":sk")
	var items []map[string]types.AttributeValue
	for _, item := range f.items {
		if str(item, "pk") == pk && strings.HasPrefix(str(item, "sk"), prefix) {
			items = append(items, item)
		}
	}
	sort.Slice(items, func(i, j int) bool { return str(items[i], "sk") < str(items[j], "sk") })
	start := 0
	if in.ExclusiveStartKey != nil {
		start = sort.Search(len(items), func(i int) bool { return str(items[i], "sk") > str(in.ExclusiveStartKey, "sk") })
	}
	end := min(len(items), start+f.pageSize)
	out := &dynamodb.QueryOutput{Items: items[start:end]}
	if end < len(items) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": items[end-1]["pk"], "sk": items[end-1]["sk"]}
	}
	return out, nil
}

// TransactWriteItems applies a transaction's puts (with the conditions
// PutItem knows) all or none, and records its updates, as UpdateItem does.
func (f *fakeDB) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["TransactWriteItems"]++
	for _, op := range in.TransactItems {
		if op.Put == nil {
			continue
		}
		switch c := aws.ToString(op.Put.ConditionExpression); c {
		case "":
		case "attribute_not_exists(pk)":
			if _, ok := f.items[itemKey(op.Put.Item)]; ok {
				return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled")}
			}
		default:
			return nil, fmt.Errorf("fakeDB: condition %q not supported", c)
		}
	}
	for _, op := range in.TransactItems {
		switch {
		case op.Put != nil:
			f.items[itemKey(op.Put.Item)] = op.Put.Item
		case op.Update != nil:
			f.updates = append(f.updates, &dynamodb.UpdateItemInput{TableName: op.Update.TableName, Key: op.Update.Key,
				UpdateExpression: op.Update.UpdateExpression, ConditionExpression: op.Update.ConditionExpression,
				ExpressionAttributeNames: op.Update.ExpressionAttributeNames, ExpressionAttributeValues: op.Update.ExpressionAttributeValues})
		}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (f *fakeDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DeleteItem"]++
	delete(f.items, itemKey(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}
