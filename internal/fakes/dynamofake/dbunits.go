package dynamofake

import (
	"errors"
	"maps"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The units DB's requests consume (partitions.go has the rules).

// Hottest lists the key values of the table and of its index that consumed
// units (or refused requests) since NewDB, with their peak units of one
// second, the one nearest its limits first. Empty while Limits is nil.
func (f *DB) Hottest() []Consumed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.meter.hottest(f.Limits)
}

// Billed is the units DB's requests consumed since NewDB, by DynamoDB's
// rules (partitions.go): the table's under "", each global index's under
// its name. A refused request consumed nothing.
func (f *DB) Billed() map[string]Units {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.meter.billedCopy()
}

// take consumes charges, or answers the key values over. The lock is held.
func (f *DB) take(charges []charge) []part {
	return f.meter.take(f.Limits, clock(f.Now), charges)
}

// writeCharges are the charges of a write that turns old into item (nil:
// none) at key, factor 1 standard or 2 transactional: the table's, and each
// index's for an index entry put, changed or removed, by its size as the
// index projects it.
func (f *DB) writeCharges(key, old, item map[string]av, factor float64) []charge {
	cs := []charge{{part: part{key: String(key, "pk")}, w: factor * writeUnits(max(itemSize(old), itemSize(item)))}}
	for _, name := range slices.Sorted(maps.Keys(f.indexes)) {
		cs = append(cs, indexCharges(name, f.indexes[name], old, item)...)
	}
	return cs
}

// indexCharges are index ix's (named name) charges of a write that turns
// old into item.
func indexCharges(name string, ix index, old, item map[string]av) []charge {
	in := func(it map[string]av) bool { return it[ix.partition] != nil && it[ix.sort] != nil }
	was, is := in(old), in(item)
	before, after := dbProject(ix, old), dbProject(ix, item)
	sameKey := was && is && String(old, ix.partition) == String(item, ix.partition) && String(old, ix.sort) == String(item, ix.sort)
	var cs []charge
	switch {
	case sameKey && reflect.DeepEqual(before, after):
		// Unchanged: nothing to write to the index.
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
	return cs
}

// admit charges a single write of key from old to item whose working out
// answered err: the write's units when it succeeds, the table's for the
// item as it is when its condition fails, nothing when it is malformed. It
// returns the error to answer: a refusal for throughput first.
func (f *DB) admit(key, old, item map[string]av, err error) error {
	var ccf *types.ConditionalCheckFailedException
	var cs []charge
	switch {
	case err == nil:
		cs = f.writeCharges(key, old, item, 1)
	case errors.As(err, &ccf):
		cs = []charge{{part: part{key: String(key, "pk")}, w: writeUnits(itemSize(old))}}
	default:
		return err
	}
	if over := f.take(cs); over != nil {
		return throttled(over)
	}
	return err
}

// admitTransaction charges a transaction about to be written (members
// keyed keys, the items they leave results; none cancelled) at twice the
// units of standard writes on the table, standard ones on the index. When
// a key value would go over, it answers the cancellation: ThrottlingError
// for each member on one, None for the others.
func (f *DB) admitTransaction(in []types.TransactWriteItem, keys, results []map[string]av) error {
	var cs []charge
	members := make([][]charge, len(in))
	for i, m := range in {
		old := f.items[ItemKey(keys[i])]
		switch {
		case m.ConditionCheck != nil:
			members[i] = []charge{{part: part{key: String(keys[i], "pk")}, w: 2 * writeUnits(itemSize(old))}}
		case m.Delete != nil:
			members[i] = f.writeCharges(keys[i], old, nil, 2)
		default:
			members[i] = f.writeCharges(keys[i], old, results[i], 2)
		}
		cs = append(cs, members[i]...)
	}
	over := f.take(cs)
	if over == nil {
		return nil
	}
	reasons := make([]types.CancellationReason, len(in))
	for i := range in {
		reasons[i] = types.CancellationReason{Code: aws.String("None")}
		for _, c := range members[i] {
			for _, p := range over {
				if c.part == p {
					reasons[i] = types.CancellationReason{Code: aws.String("ThrottlingError"), Message: aws.String(overMessage([]part{p}))}
				}
			}
		}
	}
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled: ThrottlingError"), CancellationReasons: reasons}
}

// admitRead charges reading items (their sizes, each rounded alone, or
// all together for a query) of key value p.
func (f *DB) admitRead(p part, sizes []int, strong, query bool) error {
	var cs []charge
	if query {
		total := 0
		for _, n := range sizes {
			total += n
		}
		cs = []charge{{part: p, r: readUnits(total, strong)}}
	} else {
		for _, n := range sizes {
			cs = append(cs, charge{part: p, r: readUnits(n, strong)})
		}
	}
	if over := f.take(cs); over != nil {
		return throttled(over)
	}
	return nil
}

// admitBatch charges a BatchGetItem's reads, each item alone on its key
// value, and refuses the request whole when one would go over (DynamoDB
// answers the keys of such a value as UnprocessedKeys, and refuses the
// request only when it processed none: the fake does not model that).
func (f *DB) admitBatch(ka types.KeysAndAttributes) error {
	var cs []charge
	for _, k := range ka.Keys {
		cs = append(cs, charge{part: part{key: String(k, "pk")}, r: readUnits(itemSize(f.items[ItemKey(k)]), aws.ToBool(ka.ConsistentRead))})
	}
	if over := f.take(cs); over != nil {
		return throttled(over)
	}
	return nil
}

// sizes are the items' sizes.
func sizes(items []map[string]av) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = itemSize(it)
	}
	return out
}
