package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/store/keys"
)

// EndpointRef names an endpoint.
type EndpointRef struct{ TenantID, EndpointID string }

// Snapshot is what Load read: every delivery and endpoint asked for that
// exists. One that is absent from its map does not exist.
type Snapshot struct {
	Deliveries map[string]domain.Delivery
	Endpoints  map[EndpointRef]domain.Endpoint
	// Erased holds the tenants (of the endpoints asked for) that are being
	// erased (Tombstone): their messages are to be dropped.
	Erased map[string]bool
	// FastUntil holds, for the endpoints asked for whose gate shows them
	// fast, until when it does (GateAsk, ReleaseGate, MarkGate).
	FastUntil map[EndpointRef]time.Time
}

// maxBatchGet is BatchGetItem's limit of keys per request.
const maxBatchGet = 100

// LoadOptions change how LoadWith reads.
type LoadOptions struct {
	// Eventual reads with eventually consistent reads: half the read units
	// of a strongly consistent read, but a write of the last moment (about
	// a second, usually less) may not be seen yet. Default false: strongly
	// consistent, every write acknowledged before the read is seen.
	Eventual bool
	// NoRecords leaves the endpoints' records and their tenants'
	// tombstones out of the read; NoGates their gates (FastUntil). The
	// deliver function reads its deliveries and gates strongly consistent
	// for every batch, and the endpoints and tombstones, which it keeps a
	// moment, eventually consistent when it has no fresh copy.
	NoRecords, NoGates bool
	// Packed reads also the deliveries packed in outcome pages (delivered
	// at their first attempt, without a record of their own), as Delivery
	// does: a Query per tenant hash and second of the ids
	// (packedDeliveries), side by side with the records' read (no round
	// trip more); a record wins over a row but where rowMayWin. Enqueue's
	// read does (a stream batch tried again sends no delivered delivery
	// again); deliver's batch read does not (a clean batch is two DynamoDB
	// calls), and reads again with it only the deliveries without a record
	// of messages received before and of resends.
	Packed bool
}

// Load reads deliveries (packed ones too: LoadOptions.Packed) and endpoints
// with strongly consistent reads, as
// few requests as BatchGetItem allows (one per 100 keys): the deliver
// function reads a whole batch's records with one request instead of two
// per message. Keys the service leaves unprocessed are asked for again,
// with a short backoff; Load fails rather than report a partial snapshot.
func (s *Store) Load(ctx context.Context, deliveryIDs []string, endpoints []EndpointRef) (Snapshot, error) {
	return s.LoadWith(ctx, LoadOptions{Packed: true}, deliveryIDs, endpoints)
}

// LoadWith is Load with options: LoadOptions{Packed: true} reads as Load
// does.
func (s *Store) LoadWith(ctx context.Context, opts LoadOptions, deliveryIDs []string, endpoints []EndpointRef) (Snapshot, error) {
	snap := Snapshot{Deliveries: map[string]domain.Delivery{}, Endpoints: map[EndpointRef]domain.Endpoint{}, Erased: map[string]bool{}, FastUntil: map[EndpointRef]time.Time{}}
	var ks []map[string]types.AttributeValue
	seen := map[string]bool{}
	add := func(k map[string]types.AttributeValue) {
		id := k["pk"].(*types.AttributeValueMemberS).Value + "\x00" + k["sk"].(*types.AttributeValueMemberS).Value
		if !seen[id] {
			seen[id] = true
			ks = append(ks, k)
		}
	}
	for _, id := range deliveryIDs {
		add(deliveryKey(id))
	}
	for _, e := range endpoints {
		// The tenant's tombstone and the endpoint's gate, in the same
		// request.
		if !opts.NoRecords {
			add(endpointKey(e.TenantID, e.EndpointID))
			add(tombstoneKey(e.TenantID))
		}
		if !opts.NoGates {
			add(gateKey(e.TenantID, e.EndpointID))
		}
	}
	var packed map[string]domain.Delivery
	err := fanout.Each(2, 0, func(i int) (err error) {
		if i == 1 {
			if opts.Packed {
				packed, err = s.packedDeliveries(ctx, deliveryIDs, !opts.Eventual)
			}
			return err
		}
		for start := 0; start < len(ks); start += maxBatchGet {
			items, err := s.batchGet(ctx, ks[start:min(len(ks), start+maxBatchGet)], !opts.Eventual)
			if err != nil {
				return err
			}
			for _, item := range items {
				if err := snap.add(item); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Snapshot{}, err
	}
	for id, p := range packed {
		if d, ok := snap.Deliveries[id]; !ok || rowMayWin(d) {
			snap.Deliveries[id] = p
		}
	}
	return snap, nil
}

func (snap Snapshot) add(item map[string]types.AttributeValue) error {
	sk, _ := item["sk"].(*types.AttributeValueMemberS)
	if sk == nil {
		return fmt.Errorf("batch get: item without a sort key")
	}
	if sk.Value == keys.TombstoneSK {
		t, _ := item["tenant_id"].(*types.AttributeValueMemberS)
		if t != nil {
			snap.Erased[t.Value] = true
		}
		return nil
	}
	if sk.Value == keys.GateSK {
		pk, _ := item["pk"].(*types.AttributeValueMemberS)
		fast := int64(numberAttr(item, "fast_until"))
		if pk != nil && fast > 0 {
			if ref, ok := gateRef(pk.Value); ok {
				snap.FastUntil[ref] = time.UnixMilli(fast).UTC()
			}
		}
		return nil
	}
	if isDeliveryItem(item) {
		var d domain.Delivery
		if err := attributevalue.UnmarshalMap(item, &d); err != nil {
			return fmt.Errorf("decode delivery: %w", err)
		}
		d.DeliveryID = deliveryIDOf(item) // a record of before attempts wrote the id has it in its key
		snap.Deliveries[d.DeliveryID] = d
		return nil
	}
	var e domain.Endpoint
	if err := attributevalue.UnmarshalMap(item, &e); err != nil {
		return fmt.Errorf("decode endpoint: %w", err)
	}
	snap.Endpoints[EndpointRef{e.TenantID, e.EndpointID}] = e
	return nil
}

// batchGet reads up to 100 keys, asking again for unprocessed ones.
func (s *Store) batchGet(ctx context.Context, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}
	for try := 0; ; try++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, fmt.Errorf("batch get %d items: %w", len(keys), err)
		}
		items = append(items, out.Responses[s.table]...)
		left, ok := out.UnprocessedKeys[s.table]
		if !ok || len(left.Keys) == 0 {
			return items, nil
		}
		if try == 4 {
			return nil, fmt.Errorf("batch get: %d of %d keys still unprocessed after %d tries", len(left.Keys), len(keys), try+1)
		}
		req = map[string]types.KeysAndAttributes{s.table: left}
		select {
		case <-time.After(time.Duration(25<<try) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
