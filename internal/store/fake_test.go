package store

import (
	"context"
	"fmt"
	"regexp"
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
// endpoints), in sort key order, a page of pageSize items at a time; and
// queries of the tenant index by a sort key range (a tenant's dead
// deliveries), with DynamoDB's ValidationExceptions for a range whose upper
// bound is below its lower one and for a start key outside the range.
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
		if old, ok := f.items[k]; ok {
			ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
			if in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
				ccf.Item = old
			}
			return nil, ccf
		}
	default:
		return nil, fmt.Errorf("fakeDB: condition %q not supported", c)
	}
	f.items[k] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

// reservedNames are the words among this store's attribute names that
// DynamoDB reserves (of the 573 in the developer guide's "Reserved words in
// DynamoDB"): an expression must name them by an alias (#url), or DynamoDB
// refuses it with a ValidationException.
var reservedNames = map[string]bool{
	"at": true, "cursor": true, "error": true, "filter": true, "hash": true, "key": true, "name": true,
	"state": true, "status": true, "until": true, "url": true,
}

var exprIdentRE = regexp.MustCompile(`[#:]?[A-Za-z_][A-Za-z0-9_]*`)

// checkReserved refuses an expression naming a reserved word bare, as
// DynamoDB does.
func checkReserved(exprs ...*string) error {
	for _, e := range exprs {
		for _, word := range exprIdentRE.FindAllString(aws.ToString(e), -1) {
			if reservedNames[strings.ToLower(word)] {
				return fmt.Errorf("ValidationException: Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: %s", word)
			}
		}
	}
	return nil
}

func (f *fakeDB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["UpdateItem"]++
	if err := checkReserved(in.UpdateExpression, in.ConditionExpression); err != nil {
		return nil, err
	}
	if in.ExpressionAttributeNames != nil && len(in.ExpressionAttributeNames) == 0 {
		return nil, fmt.Errorf("ValidationException: ExpressionAttributeNames must not be empty")
	}
	if in.ExpressionAttributeValues != nil && len(in.ExpressionAttributeValues) == 0 {
		return nil, fmt.Errorf("ValidationException: ExpressionAttributeValues must not be empty")
	}
	f.updates = append(f.updates, in)
	return &dynamodb.UpdateItemOutput{}, nil
}

func (f *fakeDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["Query"]++
	if in.IndexName != nil {
		return f.queryIndex(in)
	}
	if aws.ToString(in.KeyConditionExpression) != "pk = :pk AND begins_with(sk, :sk)" {
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

func (f *fakeDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DeleteItem"]++
	delete(f.items, itemKey(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}

// queryIndex answers "gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi" on the
// tenant index as DynamoDB does: in (gsi1sk, pk) order, Limit items read
// (pageSize without one), the filter (equalities joined by AND) applied to
// those, and a ValidationException for what DynamoDB refuses.
func (f *fakeDB) queryIndex(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	if aws.ToString(in.IndexName) != IndexTenant || aws.ToString(in.KeyConditionExpression) != "gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi" {
		return nil, fmt.Errorf("fakeDB: only the tenant index by a sort key range can be queried")
	}
	pk := str(in.ExpressionAttributeValues, ":pk")
	lo, hi := str(in.ExpressionAttributeValues, ":lo"), str(in.ExpressionAttributeValues, ":hi")
	if lo > hi {
		return nil, fmt.Errorf("ValidationException: Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lowerBound: %s, upperBound: %s", lo, hi)
	}
	var items []map[string]types.AttributeValue
	for _, item := range f.items {
		if sk := str(item, "gsi1sk"); str(item, "gsi1pk") == pk && sk >= lo && sk <= hi {
			items = append(items, item)
		}
	}
	less := func(a, b map[string]types.AttributeValue) bool {
		return str(a, "gsi1sk") < str(b, "gsi1sk") || str(a, "gsi1sk") == str(b, "gsi1sk") && str(a, "pk") < str(b, "pk")
	}
	sort.Slice(items, func(i, j int) bool { return less(items[i], items[j]) })
	start := 0
	if esk := in.ExclusiveStartKey; esk != nil {
		if sk := str(esk, "gsi1sk"); str(esk, "gsi1pk") != pk || sk < lo || sk > hi {
			return nil, fmt.Errorf("ValidationException: The provided starting key is outside query boundaries based on provided conditions")
		}
		start = sort.Search(len(items), func(i int) bool { return less(esk, items[i]) })
	}
	n := f.pageSize
	if in.Limit != nil {
		n = int(*in.Limit)
	}
	end := min(len(items), start+n)
	out := &dynamodb.QueryOutput{ScannedCount: int32(end - start)}
	for _, item := range items[start:end] {
		if matches(item, aws.ToString(in.FilterExpression), in.ExpressionAttributeValues) {
			out.Items = append(out.Items, item)
		}
	}
	if end < len(items) {
		last := items[end-1]
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": last["pk"], "sk": last["sk"], "gsi1pk": last["gsi1pk"], "gsi1sk": last["gsi1sk"]}
	}
	return out, nil
}

// matches evaluates a filter of "attribute = :value" terms joined by AND.
func matches(item map[string]types.AttributeValue, filter string, values map[string]types.AttributeValue) bool {
	if filter == "" {
		return true
	}
	for term := range strings.SplitSeq(filter, " AND ") {
		name, value, ok := strings.Cut(term, " = ")
		if !ok || str(item, name) != str(values, value) {
			return false
		}
	}
	return true
}
