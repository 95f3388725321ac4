// Package dynamofake is the one in-memory DynamoDB of the tests, held to
// the service's rules that hookline's callers meet (which the local cloud
// may forgive):
//
//   - DB (db.go, expr.go) is a table of the state table's shape (pk/sk,
//     one global index), for package store: expressions evaluated and
//     validated as DynamoDB does, atomic transactions of at most 100
//     members, batch reads, paged queries, an eventually consistent index,
//     injected faults;
//   - Table is a table keyed by one string attribute, as the outbox table
//     is: read by Scan (the outbox fallback of package streamreprocess), by
//     GetItem and by Query of its global indexes (AddIndex; the message
//     log of package messagelog, tablequery.go), written by PutItem
//     (package opevent). An unknown table is a ResourceNotFoundException; a
//     page holds at most Limit items (1 or more) and at most 1 MB
//     (MaxPageBytes, by the items' sizes as DB counts them), and answers
//     LastEvaluatedKey, the key of its last item, while more remain;
//     ExclusiveStartKey continues after the item it names; a put's
//     condition, a query's key condition and filter are evaluated as DB
//     evaluates them; a query reads Limit items and 1 MB at most before
//     its filter, and a global index is sparse, projected and never read
//     strongly consistent.
//
// Both, with Limits set, hold every partition key value of the table and
// of each index to DynamoDB's 1,000 write and 3,000 read units a second,
// counted by DynamoDB's rules and refused as the SDK answers a throttled
// request; Hottest reports what each key value consumed (partitions.go).
package dynamofake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxPageBytes is the most a Scan or Query page holds: 1 MB.
const MaxPageBytes = 1 << 20

// Item is a table item.
type Item = map[string]types.AttributeValue

// Table is one fake table whose key is the string attribute Key. Safe for
// concurrent use; set PageSize and Fail before use.
type Table struct {
	name, key string
	mu        sync.Mutex
	items     []Item
	calls     map[string]int
	indexes   map[string]index
	// PageSize, when set, ends a page after that many items, as 1 MB of
	// larger items would.
	PageSize int
	// Fail, if set, fails each request it answers an error for (named by
	// its operation, "Scan"), as an unavailable or refusing service does.
	Fail func(op string) error
	// Limits, when set, holds every key value of the table and of its
	// indexes to DynamoDB's throughput per second, as DB's Limits does
	// (partitions.go). Nil: no accounting.
	Limits *Limits
	// Now is the clock of the accounting's seconds. Default time.Now.
	Now   func() time.Time
	meter meter
}

// New returns the empty table name, keyed by the string attribute key.
func New(name, key string) *Table { return &Table{name: name, key: key, calls: map[string]int{}} }

// Put adds items, in scan order.
func (t *Table) Put(items ...Item) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items = append(t.items, items...)
}

// Truncate keeps the first n items.
func (t *Table) Truncate(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items = t.items[:n]
}

// Calls is how many requests of op ("Scan", "Query") were made since New
// or the last ResetCalls.
func (t *Table) Calls(op string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.calls[op]
}

// ResetCalls forgets the requests counted so far.
func (t *Table) ResetCalls() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = map[string]int{}
}

func (t *Table) keyOf(it Item) string {
	if s, ok := it[t.key].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// Scan answers a page of the table's items (see the package's rules).
func (t *Table) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin("Scan", in.TableName); err != nil {
		return nil, err
	}
	if in.Limit != nil && *in.Limit < 1 {
		return nil, fmt.Errorf("ValidationException: Limit %d is less than 1", *in.Limit)
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		after := t.keyOf(in.ExclusiveStartKey)
		for i, it := range t.items {
			if t.keyOf(it) == after {
				start = i + 1
			}
		}
	}
	end, size := start, 0
	for end < len(t.items) && !t.full(in.Limit, end-start, size+itemSize(t.items[end])) {
		size += itemSize(t.items[end])
		end++
	}
	if end == start && end < len(t.items) {
		end++ // a page holds at least one item
	}
	out := &dynamodb.ScanOutput{Items: t.items[start:end], Count: int32(end - start), ScannedCount: int32(end - start)}
	if end < len(t.items) {
		out.LastEvaluatedKey = Item{t.key: t.items[end-1][t.key]}
	}
	return out, nil
}

// full reports whether a page of n items already can take no item that
// would bring it to size bytes.
func (t *Table) full(limit *int32, n, size int) bool {
	return (limit != nil && n >= int(*limit)) || (t.PageSize > 0 && n >= t.PageSize) || size > MaxPageBytes
}

// PutItem writes an item under its key, replacing the one there, after its
// condition (evaluated by DB's expression engine, with DynamoDB's
// validation rules: a ConditionalCheckFailedException when it fails) and
// the 400 KB item limit. Fail is asked first, as "PutItem".
func (t *Table) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin("PutItem", in.TableName); err != nil {
		return nil, err
	}
	k := t.keyOf(in.Item)
	if k == "" {
		return nil, errValidation("One of the required keys was not given a value")
	}
	at, old, err := t.conditioned(k, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.ReturnValuesOnConditionCheckFailure)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if over := t.meter.take(t.Limits, clock(t.Now), []charge{{part: part{key: k}, w: writeUnits(itemSize(old))}}); over != nil {
			return nil, throttled(over)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if itemSize(in.Item) > maxItemBytes {
		return nil, errValidation("Item size has exceeded the maximum allowed size")
	}
	if over := t.meter.take(t.Limits, clock(t.Now), t.putCharges(old, in.Item)); over != nil {
		return nil, throttled(over)
	}
	if at >= 0 {
		t.items[at] = cloneItem(in.Item)
	} else {
		t.items = append(t.items, cloneItem(in.Item))
	}
	return &dynamodb.PutItemOutput{}, nil
}

// DeleteItem deletes the item of the key (the table's key attribute),
// under its ConditionExpression (a ConditionalCheckFailedException when it
// fails, the item kept), as DynamoDB does; deleting no item is no error.
// Fail is asked first, as "DeleteItem".
func (t *Table) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin("DeleteItem", in.TableName); err != nil {
		return nil, err
	}
	if len(in.Key) != 1 || t.keyOf(in.Key) == "" {
		return nil, errValidation("The provided key element does not match the schema")
	}
	k := t.keyOf(in.Key)
	at, old, err := t.conditioned(k, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.ReturnValuesOnConditionCheckFailure)
	if err != nil {
		return nil, err
	}
	charges := t.putCharges(old, nil) // the item's units and its index entries'
	charges[0].part = part{key: k}
	if over := t.meter.take(t.Limits, clock(t.Now), charges); over != nil {
		return nil, throttled(over)
	}
	if at >= 0 {
		t.items = slices.Delete(t.items, at, at+1)
	}
	return &dynamodb.DeleteItemOutput{}, nil
}

// conditioned finds the item of key k (at its index, -1 when there is
// none) and evaluates a request's condition on it, as DynamoDB does: a
// ConditionalCheckFailedException when it fails, a ValidationException for
// an expression that is malformed or leaves a name or value unused.
func (t *Table) conditioned(k string, cond *string, names map[string]string, values map[string]types.AttributeValue,
	rv types.ReturnValuesOnConditionCheckFailure) (int, Item, error) {
	env, err := newExprEnv(names, values)
	if err != nil {
		return -1, nil, err
	}
	at := slices.IndexFunc(t.items, func(it Item) bool { return t.keyOf(it) == k })
	var old Item
	if at >= 0 {
		old = t.items[at]
	}
	if err := condition(cond, env, old, rv); err != nil {
		return at, old, err
	}
	return at, old, env.checkUnused()
}

// Items returns a copy of the table's items, in scan order.
func (t *Table) Items() []Item {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Item, len(t.items))
	for i, it := range t.items {
		out[i] = cloneItem(it)
	}
	return out
}
