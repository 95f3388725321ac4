// Package keys builds every partition, sort and index key of hookline's
// single table. The store and storefake's readers of the fake table use
// it, so a key is spelled in one place only; a test fails when a key prefix,
// sort key or index-partition suffix literal appears in another file of the
// store packages, or when keys.TenantIndex is called with a literal suffix.
package keys

import (
	"strconv"
	"time"
)

// TimeFormat is how a time is written into a key: RFC 3339 with a fixed
// nine-digit fraction, so that times compare as strings in time order
// (RFC3339Nano drops trailing zeros, and "05Z" sorts after "05.1Z").
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Time is t as a key holds it: in UTC, in TimeFormat.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }

// TimeID is the sort key "<time>#<id>" of an index that lists records in
// time order, ties by id: the dead-letter index (dead_at, delivery id), the
// open jobs (updated_at, job id), the rejections (the time rejected,
// key).
func TimeID(t time.Time, id string) string { return Time(t) + "#" + id }

// Tenant is the partition of a tenant and everything it owns.
func Tenant(tenantID string) string { return "TENANT#" + tenantID }

// TenantIndex is a tenant's index partition for a kind of record (KEYS,
// PORTAL, DEAD, REJECTED, JOBS, DEADWINDOWS). Outside this package, use
// the builder of the kind (KeysIndex, PortalIndex, ...).
func TenantIndex(tenantID, suffix string) string { return Tenant(tenantID) + "#" + suffix }

// KeysIndex is the gsi1 partition of a tenant's API keys.
func KeysIndex(tenantID string) string { return TenantIndex(tenantID, "KEYS") }

// PortalIndex is the gsi1 partition of a tenant's portal links.
func PortalIndex(tenantID string) string { return TenantIndex(tenantID, "PORTAL") }

// DeadIndex is the gsi1 partition of a tenant's dead deliveries as the
// versions before the dead shards listed them (still read and erased).
func DeadIndex(tenantID string) string { return TenantIndex(tenantID, "DEAD") }

// RejectedIndex is the gsi1 partition of a tenant's rejection records.
func RejectedIndex(tenantID string) string { return TenantIndex(tenantID, "REJECTED") }

// JobsIndex is the gsi1 partition of a tenant's completed jobs.
func JobsIndex(tenantID string) string { return TenantIndex(tenantID, "JOBS") }

// DeadWindowsIndex is the gsi1 partition of a tenant's dead windows.
func DeadWindowsIndex(tenantID string) string { return TenantIndex(tenantID, "DEADWINDOWS") }

// The sort keys of the items whose partition key names them.
const (
	// TenantSK is the sort key of a tenant's own item in its partition.
	TenantSK = "TENANT"
	// TombstoneSK is the sort key of an erased tenant's tombstone in its
	// partition.
	TombstoneSK = "ERASED"
	// OpenJobsSK is the sort key of the item, in its tenant's partition,
	// naming the tenant's open jobs. It keeps its earlier value (from when
	// every job was a replay), so that stored items stay readable.
	OpenJobsSK = "REPLAYJOBS"
	// DeliverySK is the sort key of a delivery's record.
	DeliverySK = "DELIVERY"
	// APIKeySK is the sort key of an API key's item.
	APIKeySK = "APIKEY"
	// PortalSK is the sort key of a portal link's item.
	PortalSK = "PORTAL"
	// RejectedSK is the sort key of a rejection record.
	RejectedSK = "REJECTED"
	// JobSK is the sort key of a job's item. It keeps its earlier value
	// (from when every job was a replay), so that stored jobs stay readable.
	JobSK = "REPLAYJOB"
	// GateSK is the sort key of an endpoint's gate.
	GateSK = "GATE"
	// DeadWindowSK is the sort key of an endpoint's dead window.
	DeadWindowSK = "DEADWINDOW"
	// DepthSK is the sort key of every shard of a tenant's DLQ depth
	// counter and of the counter of the versions before the shards (in
	// the tenant's partition); it is also that old counter's gsi1
	// partition (DepthIndex, the shards' ones).
	DepthSK = "DLQDEPTH"
)

// DepthShard is the partition key of shard n of a tenant's DLQ depth
// counter: TENANT#<t>#DLQDEPTH#<n>.
func DepthShard(tenantID string, n int) string {
	return TenantIndex(tenantID, DepthSK+"#"+strconv.Itoa(n))
}

// DepthIndex is gsi1 partition m of the DLQ depth counters' shards:
// DLQDEPTH#<m>.
func DepthIndex(m int) string { return DepthSK + "#" + strconv.Itoa(m) }

// The one item of the DLQ sweep's claim (ClaimSweep): its partition and
// sort keys.
const (
	// SweepPK is the partition key of the DLQ sweep's claim.
	SweepPK = "REPLAY"
	// SweepSK is the sort key of the DLQ sweep's claim.
	SweepSK = "SWEEP"
)

// EndpointPrefix begins the sort key of every endpoint in a tenant's partition.
const EndpointPrefix = "ENDPOINT#"

// Endpoint is the sort key of an endpoint in its tenant's partition.
func Endpoint(endpointID string) string { return EndpointPrefix + endpointID }

// DeliveryPrefix begins the partition key of a delivery whose id is a
// legacy one (domain.LegacyDeliveryID): its record is alone in it.
const DeliveryPrefix = "DELIVERY#"

// Delivery is the partition key of a delivery of a legacy id.
func Delivery(id string) string { return DeliveryPrefix + id }

// RecordsPrefix begins the partition key of a delivery whose id carries its
// tenant's hash (domain.DeliveryID): RECORDS#<tenant hash>#<n>, one of the
// tenant's shards of records, whose sort key is the delivery id.
const RecordsPrefix = "RECORDS#"

// Records is the partition key of shard n of the records of the tenants
// whose hash is tenantHash (domain.TenantHash).
func Records(tenantHash string, n int) string {
	return RecordsPrefix + tenantHash + "#" + strconv.Itoa(n)
}

// OutcomesPrefix begins the partition key of a page of deliveries
// delivered at their first attempt (store.RecordFirstAttempts):
// OUTCOMES#<tenant hash>#<n>, one of the tenant's shards of outcome pages.
const OutcomesPrefix = "OUTCOMES#"

// Outcomes is the partition key of shard n of the outcome pages of the
// tenants whose hash is tenantHash (domain.TenantHash).
func Outcomes(tenantHash string, n int) string {
	return OutcomesPrefix + tenantHash + "#" + strconv.Itoa(n)
}

// OutcomesLike is the IAM pattern (StringLike) of every outcome page's
// partition key: OUTCOMES#*.
func OutcomesLike() string { return OutcomesPrefix + "*" }

// APIKey is the partition key of an API key, by its hash.
func APIKey(hash string) string { return "APIKEY#" + hash }

// APIRate is the partition key of a tenant's windows of expensive API
// requests (the api function's per-tenant limit); the sort key is the
// window's second.
func APIRate(tenantID string) string { return "APIRATE#" + tenantID }

// KeyRefPrefix begins the sort key, in its tenant's partition, of an API
// key's reference: the key's id, holding its hash. Revocation and erasure
// find a tenant's keys through these with a strongly consistent read (the
// KEYS index is eventually consistent: a key made a moment before would
// be missed).
const KeyRefPrefix = "KEYREF#"

// KeyRef is the sort key of an API key's reference in its tenant's
// partition.
func KeyRef(keyID string) string { return KeyRefPrefix + keyID }

// NotifyEmailPrefix begins the sort key of a tenant's notification
// address in its partition.
const NotifyEmailPrefix = "NOTIFYEMAIL#"

// NotifyEmail is the sort key of a notification address in its tenant's
// partition.
func NotifyEmail(id string) string { return NotifyEmailPrefix + id }

// Notices is the sort key, in its tenant's partition, of the count of
// notice e-mails sent in the clock hour hour (a sortable time).
func Notices(hour string) string { return "NOTICES#" + hour }

// Portal is the partition key of a portal link, by its hash.
func Portal(hash string) string { return "PORTAL#" + hash }

// Rejected is the partition key of a rejection record.
func Rejected(k string) string { return "REJECTED#" + k }

// Job is the partition key of a job of any kind. Its prefix keeps its
// earlier value (from when every job was a replay), so that stored jobs
// stay readable.
func Job(id string) string { return "REPLAYJOB#" + id }

// Stats is the partition key of an endpoint's statistics as the versions
// before the shards wrote them (one hour item per hour), still read and
// erased.
func Stats(tenantID, endpointID string) string { return "STATS#" + tenantID + "#" + endpointID }

// DeadShard is the partition key of shard n of a tenant's dead index
// entries: TENANT#<t>#DEAD#<n>.
func DeadShard(tenantID string, n int) string { return TenantIndex(tenantID, "DEAD#"+strconv.Itoa(n)) }

// LogShard is the partition key of shard n of a tenant's delivery log
// (the index of every delivery with a record): TENANT#<t>#DLOG#<n>.
func LogShard(tenantID string, n int) string { return TenantIndex(tenantID, "DLOG#"+strconv.Itoa(n)) }

// StatsShard is the partition key of shard n of an endpoint's statistics:
// Stats, then "#<n>".
func StatsShard(tenantID, endpointID string, n int) string {
	return Stats(tenantID, endpointID) + "#" + strconv.Itoa(n)
}

// TypeStatsShard is the partition key of shard n of an endpoint's
// counters by event type: STATSTYPE#<t>#<e>#<n>. Apart from the Stats
// partitions, so that their readers (which read a partition newest first
// without a sort-key bound) never meet a type's item.
func TypeStatsShard(tenantID, endpointID string, n int) string {
	return "STATSTYPE#" + tenantID + "#" + endpointID + "#" + strconv.Itoa(n)
}

// Rate is the partition key of an endpoint's rate window of one shard (a
// small limit), as the versions before the shards kept every window.
func Rate(tenantID, endpointID string) string { return "RATE#" + tenantID + "#" + endpointID }

// RateShard is the partition key of shard j of an endpoint's rate windows:
// Rate, then "#<j>".
func RateShard(tenantID, endpointID string, j int) string {
	return Rate(tenantID, endpointID) + "#" + strconv.Itoa(j)
}

// GatePrefix begins the partition key of every gate.
const GatePrefix = "GATE#"

// Gate is the partition key of an endpoint's gate.
func Gate(tenantID, endpointID string) string { return GatePrefix + tenantID + "#" + endpointID }

// DeadWindow is the partition key of an endpoint's dead window starting at
// start (already formatted as a sortable time).
func DeadWindow(tenantID, endpointID, start string) string {
	return "DEADWINDOW#" + tenantID + "#" + endpointID + "#" + start
}

// OpenJobs is the index partition of every job not yet completed. It
// keeps its earlier value (from when every job was a replay), so that
// stored jobs stay listed.
const OpenJobs = "REPLAYJOBS#OPEN"

// eventPages is the suffix of the partition keys of a tenant's message
// log pages, before the shard.
const eventPages = "EVENTS#"

// EventPages is the partition key of shard n of a tenant's message log
// pages (package messagelog): TENANT#<t>#EVENTS#<n>.
func EventPages(tenantID string, n int) string {
	return TenantIndex(tenantID, eventPages+strconv.Itoa(n))
}

// EventPagesLike is the IAM pattern (StringLike) of every tenant's message
// log pages' partition keys: TENANT#*#EVENTS#*.
func EventPagesLike() string { return TenantIndex("*", eventPages+"*") }
