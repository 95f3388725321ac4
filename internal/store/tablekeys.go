package store

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// The table keys of every record, built here from the strings of package
// keys.

func deadWindowKey(tenantID, endpointID string, start time.Time) map[string]types.AttributeValue {
	return key(keys.DeadWindow(tenantID, endpointID, sortableTime(start)), keys.DeadWindowSK)
}

func gateKey(tenantID, endpointID string) map[string]types.AttributeValue {
	return key(keys.Gate(tenantID, endpointID), keys.GateSK)
}

func portalKey(hash string) map[string]types.AttributeValue {
	return key(keys.Portal(hash), keys.PortalSK)
}

// portalPartition is the gsi1 partition of a tenant's portal links.
func portalPartition(tenantID string) string { return keys.PortalIndex(tenantID) }

func jobKey(id string) map[string]types.AttributeValue {
	return key(keys.Job(id), keys.JobSK)
}

// jobSlotsKey is the item holding a tenant's open jobs: the string set
// open_jobs names each job not yet completed.
func jobSlotsKey(tenantID string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.OpenJobsSK)
}

// statsPK is the partition of an endpoint's hour items of before the
// shards (read and erased, no longer written).
func statsPK(tenantID, endpointID string) string { return keys.Stats(tenantID, endpointID) }

// statsPartitions are every partition an endpoint's hour items are in:
// its StatsShards shards, then the one of before the shards.
func statsPartitions(tenantID, endpointID string) []string {
	out := make([]string, 0, StatsShards+1)
	for n := range StatsShards {
		out = append(out, keys.StatsShard(tenantID, endpointID, n))
	}
	return append(out, statsPK(tenantID, endpointID))
}

func endpointKey(tenantID, endpointID string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.Endpoint(endpointID))
}

// deliveryKey is the table key of delivery id's record: for an id that
// carries its tenant's hash and its event's time (domain.DeliveryID), in
// one of its tenant's shards of records (RecordsPK), under the id, so that
// the shards list the tenant's deliveries in time order with no index; for
// a legacy id, a partition of its own (DELIVERY#<id>), listed through the
// delivery log's index (IndexLog).
func deliveryKey(id string) map[string]types.AttributeValue {
	if pk, ok := RecordsPK(id); ok {
		return key(pk, id)
	}
	return key(keys.Delivery(id), keys.DeliverySK)
}

// RecordsPK is the partition key of the record of delivery id: shard
// fnv32(id) mod LogShards of its tenant's records (keys.Records); false
// for a legacy id.
func RecordsPK(id string) (string, bool) {
	p, ok := domain.ParseDeliveryID(id)
	if !ok {
		return "", false
	}
	return keys.Records(p.TenantHash, int(fnv32(id)%LogShards)), true
}

// recordPartitions are the partitions of the records of tenantID's
// deliveries of time-carrying ids (RecordsPK), shard n at n.
func recordPartitions(tenantID string) []string {
	return hashPartitions(tenantID, LogShards, keys.Records)
}

// hashPartitions are the shards 0 to n-1 of tenantID's hash that key
// names.
func hashPartitions(tenantID string, n int, key func(tenantHash string, n int) string) []string {
	th := domain.TenantHash(tenantID)
	out := make([]string, n)
	for i := range out {
		out[i] = key(th, i)
	}
	return out
}

// isDeliveryItem reports whether a table item (or an index entry, which
// carries the table's keys) is a delivery record.
func isDeliveryItem(item map[string]types.AttributeValue) bool {
	sk := stringAttr(item, "sk")
	return sk == keys.DeliverySK || strings.HasPrefix(stringAttr(item, "pk"), keys.RecordsPrefix)
}

// deliveryIDOf is the id of the delivery record item (or index entry): its
// delivery_id, or, where it has none (an entry of an index that does not
// project it, a record of a version before attempts wrote the id), its
// key's.
func deliveryIDOf(item map[string]types.AttributeValue) string {
	if id := stringAttr(item, "delivery_id"); id != "" {
		return id
	}
	if pk := stringAttr(item, "pk"); strings.HasPrefix(pk, keys.DeliveryPrefix) {
		return pk[len(keys.DeliveryPrefix):]
	}
	return stringAttr(item, "sk")
}

// key is the table key of the item at pk and sk.
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// withKey sets the key k in item and returns item.
func withKey(item map[string]types.AttributeValue, k map[string]types.AttributeValue) map[string]types.AttributeValue {
	for n, v := range k {
		item[n] = v
	}
	return item
}

func tenantKey(id string) map[string]types.AttributeValue { return key(keys.Tenant(id), keys.TenantSK) }

func apiKeyKey(hash string) map[string]types.AttributeValue {
	return key(keys.APIKey(hash), keys.APIKeySK)
}

// keyRefKey is the key of an API key's reference in its tenant's partition.
func keyRefKey(tenantID, keyID string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.KeyRef(keyID))
}

// tombstoneKey is the key of an erased tenant's tombstone.
func tombstoneKey(tenantID string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.TombstoneSK)
}

// legacyDepthKey is the key of a tenant's DLQ depth counter as versions
// before the sharded counter kept it: one item in the tenant's partition.
func legacyDepthKey(tenantID string) map[string]types.AttributeValue {
	return key(keys.Tenant(tenantID), keys.DepthSK)
}

// depthShardKey is the key of shard n of a tenant's DLQ depth counter: a
// partition of its own (TENANT#<t>#DLQDEPTH#<n>), so that the shards do
// not share one partition's throughput.
func depthShardKey(tenantID string, n int) map[string]types.AttributeValue {
	return key(keys.DepthShard(tenantID, n), keys.DepthSK)
}

// typeStatsPartitions are every partition an endpoint's counters by event
// type are in: its StatsShards shards (no unsharded partition: they were
// sharded from the first).
func typeStatsPartitions(tenantID, endpointID string) []string {
	out := make([]string, 0, StatsShards)
	for n := range StatsShards {
		out = append(out, keys.TypeStatsShard(tenantID, endpointID, n))
	}
	return out
}
