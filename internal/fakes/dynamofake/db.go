package dynamofake

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DB is an in-memory table of hookline's state-table shape (key pk/sk, a
// global index gsi1pk/gsi1sk projecting all attributes, named when it is
// built, and further sparse indexes projecting some, AddIndex) that behaves as
// DynamoDB does for what the store asks of it: items by pk/sk; condition,
// update and filter expressions evaluated (expr.go), with DynamoDB's
// validation rules; UpdateItem's return values and
// ReturnValuesOnConditionCheckFailure; TransactWriteItems, atomic (every
// condition checked before anything is written; a failed member, condition
// or injected fault, cancels them all), at most 100 members and one per
// item; batch reads; batch writes (BatchWriteItem: 25 unconditional puts
// or deletes, the throttled ones unprocessed); queries of a partition by sort key prefix, in sort key
// order, and of the index (sparse, eventually consistent: with LagIndex
// set, it shows the table as it was at the last Propagate), a page of
// PageSize items at a time. Set its exported fields before the code under
// test runs, or between its calls.
type DB struct {
	mu       sync.Mutex
	indexes  map[string]index // gsi1's projects all attributes
	items    map[string]map[string]types.AttributeValue
	calls    map[string]int
	batchMax int // the most keys one BatchGetItem asked for
	// consistent says, for each BatchGetItem, whether it read strongly
	// consistent.
	consistent []bool
	// updates lists every update asked for, alone or in a transaction,
	// applied or refused.
	updates []*dynamodb.UpdateItemInput
	// transactions lists every TransactWriteItems asked for.
	transactions []*dynamodb.TransactWriteItemsInput
	indexed      map[string]map[string]types.AttributeValue

	// PageSize is the most items a Query page holds (2 from NewDB).
	PageSize int
	// LagIndex makes the index show the table as it was at the last
	// Propagate: the index is eventually consistent.
	LagIndex bool
	// Fault, when set, is asked about every item a write (op: PutItem,
	// UpdateItem, DeleteItem, or TransactWriteItems and BatchWriteItem for
	// each member) is
	// about to change; an error fails that write, before anything is
	// written (a transaction is cancelled whole).
	Fault func(op string, key map[string]types.AttributeValue) error
	// BeforeWrite, when set, runs (without the lock) at the start of every
	// write, with the keys it writes: a test interleaves other work there.
	BeforeWrite func(op string, keys []map[string]types.AttributeValue)
	// Limits, when set, holds every partition key value of the table and
	// of its index to DynamoDB's throughput per second (partitions.go):
	// a request that would take one over is refused. Nil: no accounting.
	Limits *Limits
	// Now is the clock of the accounting's seconds. Default time.Now.
	Now   func() time.Time
	meter meter
}

// ErrTransactionConflict, returned by a fault, makes the fake answer as
// DynamoDB does when a write meets another transaction on the same item.
var ErrTransactionConflict = errors.New("transaction conflict")

// NewDB returns an empty table whose global index gsi1 is named name.
func NewDB(name string) *DB {
	return &DB{indexes: map[string]index{name: {partition: "gsi1pk", sort: "gsi1sk", all: true}}, items: map[string]map[string]types.AttributeValue{}, PageSize: 2, calls: map[string]int{}}
}

// String is the string attribute name of item, "" if it has none.
func String(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// ItemKey names the item (or key) in the table: its pk and sk.
func ItemKey(item map[string]types.AttributeValue) string {
	return String(item, "pk") + "\x00" + String(item, "sk")
}

func keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}
}

// Item returns a copy of the item with key's pk and sk, nil if none.
func (f *DB) Item(key map[string]types.AttributeValue) map[string]types.AttributeValue {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cloneItem(f.items[ItemKey(key)])
}

// Items returns a copy of every item, in no order.
func (f *DB) Items() []map[string]types.AttributeValue {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]types.AttributeValue
	for _, it := range f.items {
		out = append(out, cloneItem(it))
	}
	return out
}

// SetItem writes item as it is, under its pk and sk, with no rule or
// record: a test's setup.
func (f *DB) SetItem(item map[string]types.AttributeValue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items[ItemKey(item)] = cloneItem(item)
}

// RemoveItem deletes the item with key's pk and sk, with no rule or
// record: a test's setup.
func (f *DB) RemoveItem(key map[string]types.AttributeValue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.items, ItemKey(key))
}

// Calls is how many requests of op ("Query", "PutItem") were made since
// NewDB or the last ResetCalls.
func (f *DB) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// ResetCalls forgets the requests counted so far.
func (f *DB) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[string]int{}
}

// BatchMax is the most keys one BatchGetItem asked for.
func (f *DB) BatchMax() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batchMax
}

// Consistent says, for each BatchGetItem, whether it read strongly
// consistent.
func (f *DB) Consistent() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.consistent...)
}

// Updates lists every update asked for, alone or in a transaction, applied
// or refused.
func (f *DB) Updates() []*dynamodb.UpdateItemInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*dynamodb.UpdateItemInput(nil), f.updates...)
}

// Propagate brings the lagging index up to date with the table.
func (f *DB) Propagate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexed = map[string]map[string]types.AttributeValue{}
	for k, v := range f.items {
		f.indexed[k] = cloneItem(v)
	}
}

func (f *DB) hook(op string, keys ...map[string]types.AttributeValue) {
	f.mu.Lock()
	h := f.BeforeWrite
	f.mu.Unlock()
	if h != nil {
		h(op, keys)
	}
}

func (f *DB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["GetItem"]++
	item := f.items[ItemKey(in.Key)]
	if err := f.admitRead(part{key: String(in.Key, "pk")}, []int{itemSize(item)}, aws.ToBool(in.ConsistentRead), false); err != nil {
		return nil, err
	}
	return &dynamodb.GetItemOutput{Item: cloneItem(item)}, nil
}

func (f *DB) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
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
		if err := f.admitBatch(ka); err != nil {
			return nil, err
		}
		for _, k := range ka.Keys {
			if item, ok := f.items[ItemKey(k)]; ok {
				out.Responses[table] = append(out.Responses[table], cloneItem(item))
			}
		}
	}
	return out, nil
}

// condition checks a write's condition on old (nil: no item). A condition
// that fails is a ConditionalCheckFailedException, carrying the item when
// asked for.
func condition(expr *string, env *exprEnv, old map[string]types.AttributeValue, returnOld types.ReturnValuesOnConditionCheckFailure) error {
	if expr == nil {
		return nil
	}
	c, err := parseCondition(*expr, env)
	if err != nil {
		return err
	}
	ok, err := c(old)
	if err != nil {
		return err
	}
	if !ok {
		ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
		if returnOld == types.ReturnValuesOnConditionCheckFailureAllOld {
			ccf.Item = cloneItem(old)
		}
		return ccf
	}
	return nil
}

// put works out a PutItem: the item it writes.
func (f *DB) put(in *dynamodb.PutItemInput) (map[string]types.AttributeValue, error) {
	env, err := newExprEnv(in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	old := f.items[ItemKey(in.Item)]
	if err := condition(in.ConditionExpression, env, old, in.ReturnValuesOnConditionCheckFailure); err != nil {
		return nil, err
	}
	if err := env.checkUnused(); err != nil {
		return nil, err
	}
	if itemSize(in.Item) > maxItemBytes {
		return nil, errValidation("Item size has exceeded the maximum allowed size")
	}
	return cloneItem(in.Item), nil
}

func (f *DB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.hook("PutItem", keyOf(in.Item))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["PutItem"]++
	if f.Fault != nil {
		if err := f.Fault("PutItem", keyOf(in.Item)); err != nil {
			return nil, err
		}
	}
	item, err := f.put(in)
	if err := f.admit(in.Item, f.items[ItemKey(in.Item)], item, err); err != nil {
		return nil, err
	}
	f.items[ItemKey(item)] = item
	return &dynamodb.PutItemOutput{}, nil
}

// updateItem works out an update: the item it leaves (the old one if the
// update is refused) and its return values.
func (f *DB) update(key map[string]types.AttributeValue, expr, cond *string, names map[string]string, values map[string]types.AttributeValue,
	returnOld types.ReturnValuesOnConditionCheckFailure) (old, item map[string]types.AttributeValue, u *update, err error) {
	env, err := newExprEnv(names, values)
	if err != nil {
		return nil, nil, nil, err
	}
	if expr == nil {
		return nil, nil, nil, errValidation("DB: an update without an update expression")
	}
	u, err = parseUpdate(*expr, env)
	if err != nil {
		return nil, nil, nil, err
	}
	old = f.items[ItemKey(key)]
	if err := condition(cond, env, old, returnOld); err != nil {
		return old, old, u, err
	}
	if err := env.checkUnused(); err != nil {
		return old, old, u, err
	}
	item, err = u.apply(old)
	if err != nil {
		return old, old, u, err
	}
	for n, v := range key {
		item[n] = v
	}
	if itemSize(item) > maxItemBytes {
		return old, old, u, errValidation("Item size to update has exceeded the maximum allowed size")
	}
	return old, item, u, nil
}

func (f *DB) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.hook("UpdateItem", in.Key)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["UpdateItem"]++
	if in.ExpressionAttributeNames != nil && len(in.ExpressionAttributeNames) == 0 {
		return nil, fmt.Errorf("ValidationException: ExpressionAttributeNames must not be empty")
	}
	if in.ExpressionAttributeValues != nil && len(in.ExpressionAttributeValues) == 0 {
		return nil, fmt.Errorf("ValidationException: ExpressionAttributeValues must not be empty")
	}
	f.updates = append(f.updates, in)
	if f.Fault != nil {
		if err := f.Fault("UpdateItem", in.Key); err != nil {
			if errors.Is(err, ErrTransactionConflict) {
				return nil, &types.TransactionConflictException{Message: aws.String(err.Error())}
			}
			return nil, err
		}
	}
	old, item, u, err := f.update(in.Key, in.UpdateExpression, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.ReturnValuesOnConditionCheckFailure)
	if err := f.admit(in.Key, old, item, err); err != nil {
		return nil, err
	}
	f.items[ItemKey(in.Key)] = item
	out := &dynamodb.UpdateItemOutput{}
	pick := func(from map[string]types.AttributeValue) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for _, n := range u.updatedNames() {
			if v, ok := from[n]; ok {
				m[n] = cloneAV(v)
			}
		}
		return m
	}
	switch in.ReturnValues {
	case types.ReturnValueAllOld:
		out.Attributes = cloneItem(old)
	case types.ReturnValueAllNew:
		out.Attributes = cloneItem(item)
	case types.ReturnValueUpdatedOld:
		out.Attributes = pick(old)
	case types.ReturnValueUpdatedNew:
		out.Attributes = pick(item)
	}
	return out, nil
}

func (f *DB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.hook("DeleteItem", in.Key)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["DeleteItem"]++
	if f.Fault != nil {
		if err := f.Fault("DeleteItem", in.Key); err != nil {
			return nil, err
		}
	}
	env, err := newExprEnv(in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	old := f.items[ItemKey(in.Key)]
	err = condition(in.ConditionExpression, env, old, in.ReturnValuesOnConditionCheckFailure)
	if err == nil {
		err = env.checkUnused()
	}
	if err := f.admit(in.Key, old, nil, err); err != nil {
		return nil, err
	}
	delete(f.items, ItemKey(in.Key))
	return &dynamodb.DeleteItemOutput{}, nil
}

// maxTransactItems is DynamoDB's limit on the members of a transaction.
const maxTransactItems = 100

func (f *DB) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	var keys []map[string]types.AttributeValue
	for _, m := range in.TransactItems {
		switch {
		case m.Update != nil:
			keys = append(keys, m.Update.Key)
		case m.Put != nil:
			keys = append(keys, keyOf(m.Put.Item))
		case m.Delete != nil:
			keys = append(keys, m.Delete.Key)
		case m.ConditionCheck != nil:
			keys = append(keys, m.ConditionCheck.Key)
		default:
			return nil, errValidation("a transaction member with no action")
		}
	}
	f.hook("TransactWriteItems", keys...)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["TransactWriteItems"]++
	f.transactions = append(f.transactions, in)
	if n := len(in.TransactItems); n == 0 || n > maxTransactItems {
		return nil, errValidation("transactItems has %d members: 1 to %d", n, maxTransactItems)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[ItemKey(k)] {
			return nil, errValidation("Transaction request cannot include multiple operations on one item")
		}
		seen[ItemKey(k)] = true
	}
	// Every member is worked out on the table as it is, before any is
	// written: all or nothing.
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	results := make([]map[string]types.AttributeValue, len(in.TransactItems))
	cancelled := false
	for i, m := range in.TransactItems {
		reasons[i] = types.CancellationReason{Code: aws.String("None")}
		if f.Fault != nil {
			if err := f.Fault("TransactWriteItems", keys[i]); err != nil {
				code := "ThrottlingError"
				if errors.Is(err, ErrTransactionConflict) {
					code = "TransactionConflict"
				}
				reasons[i] = types.CancellationReason{Code: aws.String(code), Message: aws.String(err.Error())}
				cancelled = true
				continue
			}
		}
		var err error
		switch {
		case m.Update != nil:
			u := m.Update
			f.updates = append(f.updates, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
				ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues})
			_, results[i], _, err = f.update(u.Key, u.UpdateExpression, u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues, u.ReturnValuesOnConditionCheckFailure)
		case m.Put != nil:
			p := m.Put
			results[i], err = f.put(&dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
				ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues, ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure})
		case m.Delete != nil:
			d := m.Delete
			var env *exprEnv
			if env, err = newExprEnv(d.ExpressionAttributeNames, d.ExpressionAttributeValues); err == nil {
				if err = condition(d.ConditionExpression, env, f.items[ItemKey(d.Key)], d.ReturnValuesOnConditionCheckFailure); err == nil {
					err = env.checkUnused()
				}
			}
		case m.ConditionCheck != nil:
			c := m.ConditionCheck
			var env *exprEnv
			if env, err = newExprEnv(c.ExpressionAttributeNames, c.ExpressionAttributeValues); err == nil {
				if err = condition(c.ConditionExpression, env, f.items[ItemKey(c.Key)], c.ReturnValuesOnConditionCheckFailure); err == nil {
					err = env.checkUnused()
				}
			}
			results[i] = f.items[ItemKey(c.Key)]
		}
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf):
			reasons[i] = types.CancellationReason{Code: aws.String("ConditionalCheckFailed"), Message: ccf.Message, Item: ccf.Item}
			cancelled = true
		case err != nil:
			return nil, err // a malformed request fails whole
		}
	}
	if cancelled {
		return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
	}
	if err := f.admitTransaction(in.TransactItems, keys, results); err != nil {
		return nil, err
	}
	for i, m := range in.TransactItems {
		switch {
		case m.Delete != nil:
			delete(f.items, ItemKey(keys[i]))
		case m.ConditionCheck != nil:
		default:
			f.items[ItemKey(keys[i])] = results[i]
		}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (f *DB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["Query"]++
	if in.IndexName != nil {
		return f.queryIndex(in)
	}
	match, err := tableKeyCondition(in)
	if err != nil {
		return nil, err
	}
	pk := String(in.ExpressionAttributeValues, ":pk")
	var items []map[string]types.AttributeValue
	for _, item := range f.items {
		if String(item, "pk") == pk && match(String(item, "sk")) {
			items = append(items, cloneItem(item))
		}
	}
	forward := in.ScanIndexForward == nil || *in.ScanIndexForward
	sort.Slice(items, func(i, j int) bool { return (String(items[i], "sk") < String(items[j], "sk")) == forward })
	start := 0
	if in.ExclusiveStartKey != nil {
		after := String(in.ExclusiveStartKey, "sk")
		start = sort.Search(len(items), func(i int) bool {
			return (String(items[i], "sk") > after) == forward && String(items[i], "sk") != after
		})
	}
	size := f.PageSize
	if in.Limit != nil {
		size = min(size, int(*in.Limit))
	}
	end := min(len(items), start+size)
	if err := f.admitRead(part{key: pk}, sizes(items[start:end]), aws.ToBool(in.ConsistentRead), true); err != nil {
		return nil, err
	}
	// ScannedCount is the page's items; Count those the filter keeps (all
	// without one), as DynamoDB's are; Select COUNT answers them without
	// the items. The filter is applied after the page is read, and billed.
	page := items[start:end]
	if in.FilterExpression != nil {
		env, err := newExprEnv(in.ExpressionAttributeNames, in.ExpressionAttributeValues)
		if err != nil {
			return nil, err
		}
		filter, err := parseCondition(*in.FilterExpression, env)
		if err != nil {
			return nil, err
		}
		var kept []map[string]types.AttributeValue
		for _, item := range page {
			ok, err := filter(item)
			if err != nil {
				return nil, err
			}
			if ok {
				kept = append(kept, item)
			}
		}
		page = kept
	}
	out := &dynamodb.QueryOutput{Count: int32(len(page)), ScannedCount: int32(end - start)}
	if in.Select != types.SelectCount {
		if out.Items, err = projected(page, in.ProjectionExpression, in.ExpressionAttributeNames); err != nil {
			return nil, err
		}
	}
	if end < len(items) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": items[end-1]["pk"], "sk": items[end-1]["sk"]}
	}
	return out, nil
}

// projected is items with only the top-level attributes a
// ProjectionExpression names (each a name or a #placeholder of names),
// as DynamoDB answers them; the read is billed whole all the same
// (admitRead before). Nil expression: the items whole. A document path
// (a.b, a[0]) is not something the store asks, and is refused rather than
// answered wrong.
func projected(items []map[string]types.AttributeValue, expr *string, names map[string]string) ([]map[string]types.AttributeValue, error) {
	if expr == nil {
		return items, nil
	}
	var attrs []string
	for _, p := range strings.Split(*expr, ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.ContainsAny(p, ".[]") {
			return nil, fmt.Errorf("DB: unsupported projection path %q", p)
		}
		if strings.HasPrefix(p, "#") {
			n, ok := names[p]
			if !ok {
				return nil, fmt.Errorf("ValidationException: An expression attribute name used in the document path is not defined; attribute name: %s", p)
			}
			p = n
		}
		attrs = append(attrs, p)
	}
	out := make([]map[string]types.AttributeValue, len(items))
	for i, item := range items {
		out[i] = map[string]types.AttributeValue{}
		for _, a := range attrs {
			if v, ok := item[a]; ok {
				out[i][a] = v
			}
		}
	}
	return out, nil
}

// tableKeyCondition is the sort key test of the key conditions the store
// uses on the table: a partition whole, by sort key prefix, or a sort key
// range (BETWEEN, both ends included).
func tableKeyCondition(in *dynamodb.QueryInput) (func(sk string) bool, error) {
	v := func(name string) string { return String(in.ExpressionAttributeValues, name) }
	switch aws.ToString(in.KeyConditionExpression) {
	case "pk = :pk":
		return func(string) bool { return true }, nil
	case "pk = :pk AND begins_with(sk, :sk)":
		return func(sk string) bool { return strings.HasPrefix(sk, v(":sk")) }, nil
	case "pk = :pk AND sk BETWEEN :from AND :to":
		from, to := v(":from"), v(":to")
		if from > to {
			return nil, fmt.Errorf("ValidationException: BETWEEN %s AND %s: the upper bound must not be below the lower", from, to)
		}
		return func(sk string) bool { return sk >= from && sk <= to }, nil
	}
	return nil, fmt.Errorf("DB: no such key condition: %s", aws.ToString(in.KeyConditionExpression))
}

// AddIndex adds the sparse global index name, keyed by the string
// attributes partition and sort, projecting the table's and the index's
// keys and the attributes include (INCLUDE): a query of it answers those
// only, and its writes are charged by their size.
func (f *DB) AddIndex(name, partition, sort string, include ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexes[name] = index{partition: partition, sort: sort, include: include}
}

// SetIndexCreating marks the index name as still being created
// (IndexStatus CREATING), creating true, or ACTIVE, false: a Query of a
// CREATING index is refused as DynamoDB refuses it (errBackfilling).
func (f *DB) SetIndexCreating(name string, creating bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ix := f.indexes[name]
	ix.creating = creating
	f.indexes[name] = ix
}

// dbProject is item as index ix holds it: whole, or its keys (the table's
// and the index's) and the included attributes.
func dbProject(ix index, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if ix.all || item == nil {
		return item
	}
	out := map[string]types.AttributeValue{}
	for _, a := range append([]string{"pk", "sk", ix.partition, ix.sort}, ix.include...) {
		if v, ok := item[a]; ok {
			out[a] = v
		}
	}
	return out
}

// byKey sorts items by their order keys, ascending or not.
type byKey struct {
	items   []map[string]types.AttributeValue
	keys    []string
	forward bool
}

func (b byKey) Len() int           { return len(b.items) }
func (b byKey) Less(i, j int) bool { return (b.keys[i] < b.keys[j]) == b.forward }
func (b byKey) Swap(i, j int) {
	b.items[i], b.items[j] = b.items[j], b.items[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

// queryIndex reads an index: the items that have its keys, in sort key
// order (then table key order; reversed when ScanIndexForward is false), matching the key condition, as the index
// projects them; Limit items are read at most (pageSize at most per page),
// the filter applied after.
func (f *DB) queryIndex(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	ix, ok := f.indexes[aws.ToString(in.IndexName)]
	if !ok {
		return nil, errValidation("The table does not have the specified index: %s", aws.ToString(in.IndexName))
	}
	if ix.creating {
		return nil, errBackfilling(aws.ToString(in.IndexName))
	}
	if aws.ToBool(in.ConsistentRead) {
		return nil, errValidation("Consistent reads are not supported on global secondary indexes")
	}
	env, err := newExprEnv(in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	kc, err := parseCondition(aws.ToString(in.KeyConditionExpression), env)
	if err != nil {
		return nil, err
	}
	filter := func(map[string]types.AttributeValue) (bool, error) { return true, nil }
	if in.FilterExpression != nil {
		if filter, err = parseCondition(*in.FilterExpression, env); err != nil {
			return nil, err
		}
	}
	if err := env.checkUnused(); err != nil {
		return nil, err
	}
	source := f.items
	if f.LagIndex {
		source = f.indexed
	}
	order := func(it map[string]types.AttributeValue) string {
		return String(it, ix.sort) + "\x00" + String(it, "pk") + "\x00" + String(it, "sk")
	}
	var items []map[string]types.AttributeValue
	var keys []string // items' order keys
	for _, item := range source {
		if item[ix.partition] == nil || item[ix.sort] == nil {
			continue // a sparse index: only items with its keys
		}
		// The key condition names the index's keys alone, which every
		// projection keeps: test it before projecting, so that only the
		// items it matches are copied.
		ok, err := kc(item)
		if err != nil {
			return nil, err
		}
		if ok {
			item = cloneItem(dbProject(ix, item))
			items = append(items, item)
			keys = append(keys, order(item))
		}
	}
	forward := in.ScanIndexForward == nil || *in.ScanIndexForward
	sort.Sort(byKey{items, keys, forward})
	start := 0
	if in.ExclusiveStartKey != nil {
		if ok, err := kc(in.ExclusiveStartKey); err != nil || !ok {
			return nil, errValidation("The provided starting key is outside query boundaries based on provided conditions")
		}
		after := order(in.ExclusiveStartKey)
		start = sort.Search(len(items), func(i int) bool { return order(items[i]) != after && (order(items[i]) > after) == forward })
	}
	n := f.PageSize
	if in.Limit != nil {
		n = min(n, int(*in.Limit))
	}
	end := min(len(items), start+n)
	pk := keyValue(in.KeyConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, ix.partition)
	if err := f.admitRead(part{aws.ToString(in.IndexName), pk}, sizes(items[start:end]), false, true); err != nil {
		return nil, err
	}
	out := &dynamodb.QueryOutput{ScannedCount: int32(end - start)}
	for _, item := range items[start:end] {
		ok, err := filter(item)
		if err != nil {
			return nil, err
		}
		if ok {
			out.Count++
			if in.Select != types.SelectCount {
				out.Items = append(out.Items, item)
			}
		}
	}
	// A page stopped by the Limit carries a key, even at the end, as
	// DynamoDB's does.
	if end < len(items) || (in.Limit != nil && end > start && end-start == int(*in.Limit)) {
		last := items[end-1]
		out.LastEvaluatedKey = map[string]types.AttributeValue{"pk": last["pk"], "sk": last["sk"], ix.partition: last[ix.partition], ix.sort: last[ix.sort]}
	}
	return out, nil
}
