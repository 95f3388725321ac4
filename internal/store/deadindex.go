package store

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// IndexDead is the state table's sparse index of dead deliveries: partition
// AttrDeadPK (TENANT#<t>#DEAD#<n>, DeadPK: n one of DeadShards, of the
// delivery id), sort key AttrDeadSK (<dead time>#<delivery id>), projecting
// DeadIndexAttributes only. Deaths recorded by earlier
// versions are in gsi1 (IndexTenant) under the same keys, whole: the
// readers read both (legacyDead).
const IndexDead = "by_dead"

// The dead index's key attributes.
const (
	AttrDeadPK = "dead_pk"
	AttrDeadSK = "dead_sk"
)

// DeadIndexAttributes are the attributes the dead index projects besides
// the table's and its own keys: what the DLQ listing shows (api
// DeadLetterView) and its filter reads. Not message (the payload, read from
// the table by the replay's claim) nor attempt_log (up to 1 KB an attempt):
// a death is one index write unit whatever its event's size
// (TestDeadIndexEntryIsOneWriteUnit). Not delivery_id, tenant_id nor
// dead_at either, which the keys hold (deadListed).
var DeadIndexAttributes = []string{"endpoint_id", "event_id", "event_type", "state", "dead_reason", "attempts", "last_status", "last_error", "replayed_at"}

// The readers of the dead list (ListDead, countDead, EraseIndexed) read
// gsi1's TENANT#<t>#DEAD partitions too (legacyDeadIndex), where earlier
// versions listed deaths with their whole record, message and attempt log
// included. No version writes there since the dead index came, and a
// replay, a retry or a delivery takes a record out of both; a dead record's
// retention (Retention, counted from its death) ends the rest. One
// Retention after every function runs a version with the dead index, the
// partitions are empty and the legacy read can go (docs/deploying.md).
//
// The dead index itself is sharded (DeadShards): by_dead was added in the
// same unreleased change as its keys' shards, so no deployment holds an
// entry under the unsharded TENANT#<t>#DEAD of by_dead, and no reader
// reads it.

// DeadShards is how many partition key values of the dead index a tenant's
// deaths are spread over: 16, so one tenant's deaths take 16,000 index
// write units a second (one a death) where one key value took 1,000. The
// readers query every shard (at most deadParallel at once) and the legacy
// partition.
const DeadShards = 16

// deadParallel bounds the dead index queries a listing runs at once.
const deadParallel = 4

// DeadPK is the dead index's partition key of a tenant's delivery: the
// shard of its id, with the FNV hash the DLQ depth's shards use.
func DeadPK(tenantID, deliveryID string) string {
	return deadShardPK(tenantID, int(fnv32(deliveryID)%DeadShards))
}

// deadShardPK is the partition key of shard n of a tenant's dead index.
func deadShardPK(tenantID string, n int) string {
	return keys.DeadShard(tenantID, n)
}

// A deadPartition is one partition the readers of a tenant's dead list
// read: shards 0 to DeadShards-1 of the dead index, then gsi1's legacy one.
type deadPartition struct {
	src deadSource
	pk  string
}

// deadPartitions are the partitions of a tenant's dead list, the legacy
// one last (index DeadShards).
func deadPartitions(tenantID string) []deadPartition {
	out := make([]deadPartition, 0, DeadShards+1)
	for n := range DeadShards {
		out = append(out, deadPartition{deadIndex, deadShardPK(tenantID, n)})
	}
	return append(out, deadPartition{legacyDeadIndex, keys.DeadIndex(tenantID)})
}

// A deadSource is an index the readers read, and its key attributes.
type deadSource struct{ index, pkAttr, skAttr string }

var (
	deadIndex       = deadSource{IndexDead, AttrDeadPK, AttrDeadSK}
	tenantIndex     = deadSource{IndexTenant, "gsi1pk", "gsi1sk"}
	legacyDeadIndex = tenantIndex
	logIndex        = deadSource{IndexLog, AttrLogPK, AttrLogSK}
	// recordsSource is the table itself: a tenant's shards of records
	// (recordPartitions).
	recordsSource = deadSource{"", "pk", "sk"}
)

// DeadListed is a dead delivery as the dead-letter listing returns it, of
// either index: the attributes the dead index projects, and those its keys
// hold.
func DeadListed(d domain.Delivery) domain.Delivery {
	return domain.Delivery{
		DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		State: d.State, DeadAt: d.DeadAt, DeadReason: d.DeadReason, Attempts: d.Attempts, LastStatus: d.LastStatus,
		LastError: d.LastError, ReplayedAt: d.ReplayedAt,
	}
}

// fromKeys completes d, read from the index entry item of tenantID's dead
// list, with what the entry's keys hold.
func fromKeys(d domain.Delivery, tenantID, sk string, item map[string]types.AttributeValue) domain.Delivery {
	d.TenantID = tenantID
	d.DeliveryID = deliveryIDOf(item)
	if at, _, ok := cutTime(sk); ok {
		d.DeadAt = &at
	}
	return DeadListed(d)
}

// cutTime splits a "<time>#<id>" sort key.
func cutTime(sk string) (time.Time, string, bool) {
	for i := 0; i < len(sk); i++ {
		if sk[i] == '#' {
			t, err := time.Parse(sortableFormat, sk[:i])
			return t, sk[i+1:], err == nil
		}
	}
	return time.Time{}, "", false
}
