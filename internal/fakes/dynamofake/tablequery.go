package dynamofake

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// index is a global secondary index of a Table: sparse (an item without
// both keys is not in it), projecting the keys and the included attributes.
type index struct {
	partition, sort string
	include         []string
	all             bool // projects every attribute (DB's gsi1)
	// creating is an index DynamoDB is still backfilling (IndexStatus
	// CREATING): a Query of it is refused (SetIndexCreating).
	creating bool
}

// errBackfilling is DynamoDB's answer to a Query of an index whose
// IndexStatus is CREATING: a ValidationException (the SDK's generic API
// error; the service models no type for it) with DynamoDB's own text.
// CloudFormation does not wait for a backfill: an index added by a stack
// update is queried while it is CREATING, for minutes to hours.
func errBackfilling(name string) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: "Cannot read from backfilling global secondary index: " + name}
}

// SetIndexCreating marks the index name as still being created
// (IndexStatus CREATING, its backfill running), creating true, or ACTIVE,
// false: a Query of a CREATING index is refused as DynamoDB refuses it;
// writes go on and fill it.
func (t *Table) SetIndexCreating(name string, creating bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ix := t.indexes[name]
	ix.creating = creating
	t.indexes[name] = ix
}

// AddIndex adds the global index name, keyed by the string attributes
// partition and sort, projecting the table's and the index's keys and the
// attributes include (INCLUDE; none is KEYS_ONLY).
func (t *Table) AddIndex(name, partition, sort string, include ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.indexes == nil {
		t.indexes = map[string]index{}
	}
	t.indexes[name] = index{partition: partition, sort: sort, include: include}
}

// GetItem answers the item of the key (the table's key attribute).
func (t *Table) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin("GetItem", in.TableName); err != nil {
		return nil, err
	}
	if len(in.Key) != 1 || t.keyOf(in.Key) == "" {
		return nil, errValidation("The provided key element does not match the schema")
	}
	k := t.keyOf(in.Key)
	var item Item
	if i := slices.IndexFunc(t.items, func(it Item) bool { return t.keyOf(it) == k }); i >= 0 {
		item = t.items[i]
	}
	if over := t.meter.take(t.Limits, clock(t.Now), []charge{{part: part{key: k}, r: readUnits(itemSize(item), aws.ToBool(in.ConsistentRead))}}); over != nil {
		return nil, throttled(over)
	}
	return &dynamodb.GetItemOutput{Item: cloneItem(item)}, nil
}

// Query reads a global index as DynamoDB does: the items in it that match
// the key condition, in its sort key's order (ScanIndexForward), after
// ExclusiveStartKey; at most Limit items and 1 MB are read, then the
// filter drops some of them; LastEvaluatedKey names the last item read
// while more remain. A strongly consistent read of a global index is
// refused, as are names and values the expressions do not use.
func (t *Table) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin("Query", in.TableName); err != nil {
		return nil, err
	}
	ix, ok := t.indexes[aws.ToString(in.IndexName)]
	if !ok {
		return nil, errValidation("The table does not have the specified index: %s", aws.ToString(in.IndexName))
	}
	if ix.creating {
		return nil, errBackfilling(aws.ToString(in.IndexName))
	}
	if aws.ToBool(in.ConsistentRead) {
		return nil, errValidation("Consistent reads are not supported on global secondary indexes")
	}
	match, filter, err := queryConditions(in)
	if err != nil {
		return nil, err
	}
	part, err := t.matching(ix, match, aws.ToBool(in.ScanIndexForward) || in.ScanIndexForward == nil)
	if err != nil {
		return nil, err
	}
	if err := t.checkStart(ix, match, in.ExclusiveStartKey); err != nil {
		return nil, err
	}
	part = t.after(part, in.ExclusiveStartKey)
	n, size := 0, 0
	for n < len(part) && (in.Limit == nil || n < int(*in.Limit)) && (n == 0 || size+itemSize(part[n]) <= MaxPageBytes) {
		size += itemSize(part[n])
		n++
	}
	if err := t.admitQuery(in, ix, part[:n]); err != nil {
		return nil, err
	}
	out := &dynamodb.QueryOutput{ScannedCount: int32(n)}
	for _, it := range part[:n] {
		if keep, err := filter(it); err != nil {
			return nil, err
		} else if keep {
			out.Items = append(out.Items, t.project(ix, it))
		}
	}
	out.Count = int32(len(out.Items))
	if n < len(part) {
		last := part[n-1]
		out.LastEvaluatedKey = Item{t.key: last[t.key], ix.partition: last[ix.partition], ix.sort: last[ix.sort]}
	}
	return out, nil
}

// begin counts a request of op and asks Fail about it, then checks the
// table's name. The lock is held.
func (t *Table) begin(op string, table *string) error {
	t.calls[op]++
	if t.Fail != nil {
		if err := t.Fail(op); err != nil {
			return err
		}
	}
	if aws.ToString(table) != t.name {
		return &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	return nil
}

// queryConditions compiles a query's key condition and filter (none keeps
// every item), refusing names or values neither uses.
func queryConditions(in *dynamodb.QueryInput) (match, filter condFn, err error) {
	if in.KeyConditionExpression == nil {
		return nil, nil, errors.New("ValidationException: KeyConditionExpression is required")
	}
	env, err := newExprEnv(in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, nil, err
	}
	if match, err = parseCondition(*in.KeyConditionExpression, env); err != nil {
		return nil, nil, err
	}
	filter = func(map[string]av) (bool, error) { return true, nil }
	if in.FilterExpression != nil {
		if filter, err = parseCondition(*in.FilterExpression, env); err != nil {
			return nil, nil, err
		}
	}
	return match, filter, env.checkUnused()
}

// matching returns the items in the index that match, in its order.
func (t *Table) matching(ix index, match condFn, forward bool) ([]Item, error) {
	var part []Item
	for _, it := range t.items {
		if String(it, ix.partition) == "" || String(it, ix.sort) == "" {
			continue
		}
		ok, err := match(it)
		if err != nil {
			return nil, err
		}
		if ok {
			part = append(part, it)
		}
	}
	slices.SortStableFunc(part, func(a, b Item) int {
		c := strings.Compare(String(a, ix.sort), String(b, ix.sort))
		if c == 0 {
			c = strings.Compare(t.keyOf(a), t.keyOf(b))
		}
		if !forward {
			c = -c
		}
		return c
	})
	return part, nil
}

// checkStart refuses an ExclusiveStartKey as DynamoDB does: a key
// attribute of the table or the index missing or empty ("The AttributeValue
// for a key attribute cannot contain an empty string value"), or a key
// outside the key condition's range ("The provided starting key is outside
// query boundaries based on provided conditions").
func (t *Table) checkStart(ix index, match condFn, start Item) error {
	if start == nil {
		return nil
	}
	for _, a := range []string{t.key, ix.partition, ix.sort} {
		if String(start, a) == "" {
			return errValidation("The provided starting key is invalid: The AttributeValue for a key attribute cannot contain an empty string value. Key: %s", a)
		}
	}
	if ok, err := match(start); err != nil || !ok {
		return errValidation("The provided starting key is outside query boundaries based on provided conditions")
	}
	return nil
}

// after drops the items up to and including the one start names.
func (t *Table) after(part []Item, start Item) []Item {
	if start == nil {
		return part
	}
	k := t.keyOf(start)
	if i := slices.IndexFunc(part, func(it Item) bool { return t.keyOf(it) == k }); i >= 0 {
		return part[i+1:]
	}
	return part
}

// project is the item as the index holds it.
func (t *Table) project(ix index, it Item) Item {
	out := Item{}
	for _, a := range append([]string{t.key, ix.partition, ix.sort}, ix.include...) {
		if v, ok := it[a]; ok {
			out[a] = cloneAV(v)
		}
	}
	return out
}

// Hottest lists the key values of the table and of its indexes that
// consumed units (or refused requests), as DB's Hottest does.
func (t *Table) Hottest() []Consumed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.meter.hottest(t.Limits)
}

// Billed is the units the table's requests consumed since it was made, as
// DB.Billed says.
func (t *Table) Billed() map[string]Units {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.meter.billedCopy()
}

// putCharges are the units of a put that replaces old (nil: none) with
// item: the table's write, and each index's writes of the entries it
// removes and puts (projected), as DB counts them.
func (t *Table) putCharges(old, item Item) []charge {
	cs := []charge{{part: part{key: t.keyOf(item)}, w: writeUnits(max(itemSize(old), itemSize(item)))}}
	for _, name := range slices.Sorted(maps.Keys(t.indexes)) {
		ix := t.indexes[name]
		in := func(it Item) bool { return it != nil && String(it, ix.partition) != "" && String(it, ix.sort) != "" }
		was, is := in(old), in(item)
		var before, after Item
		if was {
			before = t.project(ix, old)
		}
		if is {
			after = t.project(ix, item)
		}
		sameKey := was && is && String(old, ix.partition) == String(item, ix.partition) && String(old, ix.sort) == String(item, ix.sort)
		switch {
		case sameKey && reflect.DeepEqual(before, after):
		case sameKey:
			cs = append(cs, charge{part: part{name, String(item, ix.partition)}, w: writeUnits(itemSize(after))})
		default:
			if was {
				cs = append(cs, charge{part: part{name, String(old, ix.partition)}, w: writeUnits(itemSize(before))})
			}
			if is {
				cs = append(cs, charge{part: part{name, String(item, ix.partition)}, w: writeUnits(itemSize(after))})
			}
		}
	}
	return cs
}

// admitQuery charges a query of index ix that read items (as the index
// holds them), eventually consistent, on its partition key value.
func (t *Table) admitQuery(in *dynamodb.QueryInput, ix index, items []Item) error {
	total := 0
	for _, it := range items {
		total += itemSize(t.project(ix, it))
	}
	pk := keyValue(in.KeyConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, ix.partition)
	if over := t.meter.take(t.Limits, clock(t.Now), []charge{{part: part{aws.ToString(in.IndexName), pk}, r: readUnits(total, false)}}); over != nil {
		return throttled(over)
	}
	return nil
}
