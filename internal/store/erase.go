package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// A tenant being erased has a tombstone (TENANT#<tenant> / ERASED, with an
// expires_at): its keys no longer authenticate, enqueue drops its new
// outbox items (TenantEndpoints), and deliver drops its messages (Load's
// Snapshot.Erased). The erasure deletes every other item of the tenant and
// leaves the tombstone to its TTL, so that stragglers are dropped. Its sort
// key is keys.TombstoneSK.

// TombstoneTTL is how long a tenant's tombstone outlives the start of its
// erasure: longer than any message of the tenant can stay in flight (the
// delivery queue keeps a message 14 days at most).
const TombstoneTTL = 15 * 24 * time.Hour

// Tombstone marks a tenant as being erased (ErrNotFound if it does not
// exist) and revokes every API key and portal link of it, so that they stop
// authenticating now, before the erasure deletes them. Marking twice is
// harmless.
func (s *Store) Tombstone(ctx context.Context, tenantID string) error {
	if _, err := s.Tenant(ctx, tenantID); err != nil {
		return err
	}
	now := s.Now().UTC()
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(map[string]types.AttributeValue{
		"tenant_id":  &types.AttributeValueMemberS{Value: tenantID},
		"erased_at":  timeValue(now),
		"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(TombstoneTTL).Unix(), 10)},
	}, tombstoneKey(tenantID))})
	if err != nil {
		return fmt.Errorf("tombstone tenant %s: %w", tenantID, err)
	}
	apiKeys, err := s.indexKeys(ctx, tenantID, tenantIndex, keys.KeysIndex(tenantID), 0)
	if err != nil {
		return err
	}
	refs, err := s.keyRefs(ctx, tenantID)
	if err != nil {
		return err
	}
	apiKeys = append(apiKeys, refs...)
	links, err := s.indexKeys(ctx, tenantID, tenantIndex, portalPartition(tenantID), 0)
	if err != nil {
		return err
	}
	for _, k := range append(apiKeys, links...) {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.table, Key: k,
			UpdateExpression:          aws.String("SET revoked_at = if_not_exists(revoked_at, :now)"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": timeValue(now)},
		})
		if err != nil && !isConditionFailed(err) {
			return fmt.Errorf("revoke a key of tenant %s: %w", tenantID, err)
		}
	}
	return nil
}

// keyRefs are the keys of a tenant's API keys found by their references
// in its partition (KeyRef), read strongly consistent after the tombstone
// was written: a key PutAPIKey wrote before the tombstone is listed, even
// when the KEYS index does not show it yet.
func (s *Store) keyRefs(ctx context.Context, tenantID string) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keys.KeyRefPrefix},
		},
	}
	var out []map[string]types.AttributeValue
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list the API keys of tenant %s: %w", tenantID, err)
		}
		for _, it := range page.Items {
			if h, ok := it["hash"].(*types.AttributeValueMemberS); ok {
				out = append(out, apiKeyKey(h.Value))
			}
		}
		if page.LastEvaluatedKey == nil {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Erased reports whether a tenant is being erased (has a tombstone).
func (s *Store) Erased(ctx context.Context, tenantID string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: tombstoneKey(tenantID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("read the tombstone of tenant %s: %w", tenantID, err)
	}
	return out.Item != nil, nil
}

// indexPartition is the gsi1 partition of a tenant's items of an erasable
// kind: api_keys, portal_links, dead_deliveries, rejections, replay_jobs (completed ones;
// open ones are in the tenant's REPLAYJOBS item) and dead_windows.
func indexPartition(tenantID, kind string) (string, error) {
	partition, ok := map[string]func(string) string{
		domain.EraseAPIKeys: keys.KeysIndex, domain.ErasePortalLinks: keys.PortalIndex, domain.EraseDeadDeliveries: keys.DeadIndex,
		domain.EraseRejections: keys.RejectedIndex, domain.EraseJobs: keys.JobsIndex, domain.EraseDeadWindows: keys.DeadWindowsIndex,
	}[kind]
	if !ok {
		return "", fmt.Errorf("no index of a tenant's %q", kind)
	}
	return partition(tenantID), nil
}

// indexKeys returns the table keys of up to limit items (0: all) of
// tenantID's partition pk of index src (or, for recordsSource, of the
// table).
func (s *Store) indexKeys(ctx context.Context, tenantID string, src deadSource, pk string, limit int) ([]map[string]types.AttributeValue, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String(src.pkAttr + " = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      aws.String("pk, sk"),
	}
	if src.index != "" {
		in.IndexName = aws.String(src.index)
	}
	if src == logIndex || src == recordsSource {
		// The dead are left to their own phase, after the DLQ's
		// (domain.ErasePhases).
		in.FilterExpression = aws.String("#state <> :dead")
		in.ExpressionAttributeNames = map[string]string{"#state": "state"}
		in.ExpressionAttributeValues[":dead"] = &types.AttributeValueMemberS{Value: string(domain.StateDead)}
	}
	if src == recordsSource {
		// The tenant's hash places its records; another tenant may share it.
		in.FilterExpression = aws.String(*in.FilterExpression + " AND #tenant = :tenant")
		in.ExpressionAttributeNames["#tenant"] = "tenant_id"
		in.ExpressionAttributeValues[":tenant"] = &types.AttributeValueMemberS{Value: tenantID}
	}
	var out []map[string]types.AttributeValue
	for {
		if limit > 0 {
			in.Limit = aws.Int32(int32(limit - len(out)))
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", pk, err)
		}
		for _, item := range page.Items {
			out = append(out, map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
		}
		if page.LastEvaluatedKey == nil || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// deleteKeys deletes the items of keys that exist and counts them.
func (s *Store) deleteKeys(ctx context.Context, keys []map[string]types.AttributeValue) (int, error) {
	n := 0
	for _, k := range keys {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: k, ConditionExpression: aws.String("attribute_exists(pk)")})
		if isConditionFailed(err) {
			continue // deleted already (the index lags)
		}
		if err != nil {
			return n, fmt.Errorf("erase an item: %w", err)
		}
		n++
	}
	return n, nil
}

// EraseIndexed deletes up to limit of a tenant's items of kind (one listed
// by indexPartition, or deliveries: those in the delivery log but the
// dead; for jobs, its open jobs first, which its REPLAYJOBS item names and
// no index lists) and reports how many it deleted, and done when it found
// none left in the index. The index is eventually consistent: an item
// written a moment before may be found by a later call only.
func (s *Store) EraseIndexed(ctx context.Context, tenantID, kind string, limit int) (int, bool, error) {
	parts, err := erasePartitions(tenantID, kind)
	if err != nil {
		return 0, false, err
	}
	open := 0
	if kind == domain.EraseJobs {
		if open, err = s.eraseOpenJobs(ctx, tenantID); err != nil {
			return open, false, err
		}
	}
	var keys []map[string]types.AttributeValue
	for _, part := range parts {
		if len(keys) >= max(1, limit) {
			break
		}
		more, err := s.indexKeys(ctx, tenantID, part.src, part.pk, max(1, limit)-len(keys))
		if err != nil {
			return 0, false, err
		}
		keys = append(keys, more...)
	}
	n, err := s.deleteKeys(ctx, keys)
	return open + n, err == nil && len(keys) == 0, err
}

// erasePartitions are the index partitions of a tenant's items of kind:
// its deliveries but the dead in the delivery log's shards and in its
// shards of records (every delivery with a record, whatever its endpoint
// became) and of outcome pages (a page of the tenant's is deleted whole,
// counted one); dead deliveries in the dead
// index's shards, and those of earlier versions in gsi1 (deadPartitions);
// every other kind in gsi1.
func erasePartitions(tenantID, kind string) ([]deadPartition, error) {
	switch kind {
	case domain.EraseDeliveries:
		parts := make([]deadPartition, 0, 2*LogShards+OutcomeShards)
		for n := range LogShards {
			parts = append(parts, deadPartition{logIndex, keys.LogShard(tenantID, n)})
		}
		for _, pk := range append(recordPartitions(tenantID), outcomePartitions(tenantID)...) {
			parts = append(parts, deadPartition{recordsSource, pk})
		}
		return parts, nil
	case domain.EraseDeadDeliveries:
		return deadPartitions(tenantID), nil
	}
	pk, err := indexPartition(tenantID, kind)
	return []deadPartition{{tenantIndex, pk}}, err
}

// eraseOpenJobs deletes the records of a tenant's open jobs (those
// its REPLAYJOBS item names) and returns how many it deleted.
func (s *Store) eraseOpenJobs(ctx context.Context, tenantID string) (int, error) {
	ids, err := s.TenantJobs(ctx, tenantID)
	if err != nil {
		return 0, err
	}
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = jobKey(id)
	}
	return s.deleteKeys(ctx, keys)
}

// EraseDeliveries deletes those of the deliveries ids that exist and are
// the tenant's, and returns how many it deleted.
func (s *Store) EraseDeliveries(ctx context.Context, tenantID string, ids []string) (int, error) {
	n := 0
	for start := 0; start < len(ids); start += maxBatchGet {
		snap, err := s.LoadWith(ctx, LoadOptions{}, ids[start:min(len(ids), start+maxBatchGet)], nil) // records: pages go by their partitions
		if err != nil {
			return n, err
		}
		var keys []map[string]types.AttributeValue
		for id, d := range snap.Deliveries {
			if d.TenantID == tenantID {
				keys = append(keys, deliveryKey(id))
			}
		}
		m, err := s.deleteKeys(ctx, keys)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// partitionKeys returns the keys of up to limit items of table partition pk.
func (s *Store) partitionKeys(ctx context.Context, pk string, limit int) ([]map[string]types.AttributeValue, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ProjectionExpression:      aws.String("pk, sk"),
		Limit:                     aws.Int32(int32(max(1, limit))),
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", pk, err)
	}
	return out.Items, nil
}

// EraseStats deletes up to limit items of an endpoint's counters: the
// hour items of its shards and of the partition of before them
// (statsPartitions), then its items by event type (typeStatsPartitions),
// and reports how many it deleted, and done when none was left in any.
func (s *Store) EraseStats(ctx context.Context, tenantID, endpointID string, limit int) (int, bool, error) {
	limit = max(1, limit)
	var found []map[string]types.AttributeValue
	for _, pk := range append(statsPartitions(tenantID, endpointID), typeStatsPartitions(tenantID, endpointID)...) {
		if len(found) >= limit {
			break
		}
		ks, err := s.partitionKeys(ctx, pk, limit-len(found))
		if err != nil {
			return 0, false, err
		}
		found = append(found, ks...)
	}
	n, err := s.deleteKeys(ctx, found)
	return n, err == nil && len(found) == 0, err
}

// EraseTenantItems deletes up to limit items of the tenant's partition:
// its endpoints, DLQ depth counter (with its shards, each in a partition of
// its own) and open jobs' item first, the tenant's
// own item once nothing else is left, and never the tombstone. It returns
// how many it deleted by kind (endpoints, tenant), and done when only the
// tombstone is left.
func (s *Store) EraseTenantItems(ctx context.Context, tenantID string, limit int) (map[string]int, bool, error) {
	items, err := s.partitionKeys(ctx, keys.Tenant(tenantID), limit+2)
	if err != nil {
		return nil, false, err
	}
	var endpoints, others, last []map[string]types.AttributeValue
	for _, k := range items {
		switch sk := k["sk"].(*types.AttributeValueMemberS).Value; {
		case sk == keys.TombstoneSK:
		case sk == keys.TenantSK:
			last = append(last, k)
		case len(sk) > len(keys.EndpointPrefix) && sk[:len(keys.EndpointPrefix)] == keys.EndpointPrefix:
			endpoints = append(endpoints, k)
		default:
			others = append(others, k)
		}
	}
	shards, err := s.depthShardKeys(ctx, tenantID)
	if err != nil {
		return nil, false, err
	}
	others = append(others, shards...)
	counts := map[string]int{}
	if counts[domain.EraseEndpoints], err = s.deleteKeys(ctx, endpoints); err != nil {
		return counts, false, err
	}
	if counts[domain.EraseTenant], err = s.deleteKeys(ctx, others); err != nil {
		return counts, false, err
	}
	if len(endpoints)+len(others) > 0 {
		return counts, false, nil
	}
	n, err := s.deleteKeys(ctx, last)
	counts[domain.EraseTenant] += n
	return counts, err == nil && len(last) == 0, err
}

// depthShardKeys returns the keys of the shards of a tenant's DLQ depth
// counter that exist (read in one BatchGetItem, strongly consistent: a
// shard written a moment before is not left behind).
func (s *Store) depthShardKeys(ctx context.Context, tenantID string) ([]map[string]types.AttributeValue, error) {
	ks := make([]map[string]types.AttributeValue, 0, depthShards)
	for n := range depthShards {
		ks = append(ks, depthShardKey(tenantID, n))
	}
	items, err := s.batchGet(ctx, ks, true)
	if err != nil {
		return nil, fmt.Errorf("find the DLQ depth shards of tenant %s: %w", tenantID, err)
	}
	out := make([]map[string]types.AttributeValue, 0, len(items))
	for _, item := range items {
		out = append(out, map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
	}
	return out, nil
}
