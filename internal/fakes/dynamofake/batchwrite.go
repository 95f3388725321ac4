package dynamofake

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's limits on one BatchWriteItem.
const (
	maxBatchWrites     = 25
	maxBatchWriteBytes = 16 << 20
)

// BatchWriteItem puts and deletes items as DynamoDB does: at most 25
// requests and 16 MB, each item at most 400 KB, no key twice (each a
// ValidationException, nothing written), no condition; each request
// written alone, at a standard write's units, or, when its key value is
// over its throughput (Limits), left in UnprocessedItems for the caller to
// send again, the request refused as throttled only when none was written.
// Fault is asked about each item (op BatchWriteItem): an error fails the
// request whole, before anything is written.
func (f *DB) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	var keys []map[string]types.AttributeValue
	n, size := 0, 0
	seen := map[string]bool{}
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			n++
			switch {
			case r.PutRequest != nil && r.DeleteRequest == nil:
				if itemSize(r.PutRequest.Item) > maxItemBytes {
					return nil, errValidation("Item size has exceeded the maximum allowed size")
				}
				size += itemSize(r.PutRequest.Item)
				keys = append(keys, keyOf(r.PutRequest.Item))
			case r.DeleteRequest != nil && r.PutRequest == nil:
				keys = append(keys, keyOf(r.DeleteRequest.Key))
			default:
				return nil, errValidation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			k := ItemKey(keys[len(keys)-1])
			if seen[k] {
				return nil, errValidation("Provided list of item keys contains duplicates")
			}
			seen[k] = true
		}
	}
	switch {
	case n == 0:
		return nil, errValidation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case n > maxBatchWrites:
		return nil, errValidation("Too many items requested for the BatchWriteItem call")
	case size > maxBatchWriteBytes:
		return nil, errValidation("Request size exceeded the 16 MB limit")
	}
	f.hook("BatchWriteItem", keys...)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["BatchWriteItem"]++
	if f.Fault != nil {
		for _, k := range keys {
			if err := f.Fault("BatchWriteItem", k); err != nil {
				return nil, err
			}
		}
	}
	out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}
	written := 0
	var over []part
	for table, reqs := range in.RequestItems {
		for _, r := range reqs {
			key, item := (map[string]types.AttributeValue)(nil), (map[string]types.AttributeValue)(nil)
			if r.PutRequest != nil {
				item = cloneItem(r.PutRequest.Item)
				key = keyOf(item)
			} else {
				key = keyOf(r.DeleteRequest.Key)
			}
			if o := f.take(f.writeCharges(key, f.items[ItemKey(key)], item, 1)); o != nil {
				out.UnprocessedItems[table] = append(out.UnprocessedItems[table], r)
				over = append(over, o...)
				continue
			}
			written++
			if item == nil {
				delete(f.items, ItemKey(key))
			} else {
				f.items[ItemKey(key)] = item
			}
		}
	}
	if written == 0 {
		return nil, throttled(over)
	}
	return out, nil
}
