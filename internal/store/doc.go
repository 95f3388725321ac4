// Package store keeps hookline's state in one DynamoDB table. It persists
// the records of package domain (endpoints, deliveries, rejections, tenants,
// API keys, jobs) under the keys below, and owns nothing of their
// meaning: only their mapping to items, the queries, and the conditional
// writes that keep them consistent.
//
// Keys (pk / sk):
//
//	tenant             TENANT#<tenant> / TENANT
//	tenant tombstone   TENANT#<tenant> / ERASED (a tenant being erased; TTL)
//	endpoint           TENANT#<tenant> / ENDPOINT#<endpoint>
//	tenant DLQ depth   TENANT#<tenant>#DLQDEPTH#<n> / DLQDEPTH (32 shards, summed; TENANT#<tenant> / DLQDEPTH in earlier versions)
//	API key            APIKEY#<sha256 of the key> / APIKEY
//	portal link        PORTAL#<sha256 of the token> / PORTAL (TTL a day after it expires)
//	delivery           RECORDS#<tenant hash>#<n> / <delivery id> (16 shards, n of the id; the id carries the tenant's hash and the event's time, domain.DeliveryID)
//	delivery (legacy)  DELIVERY#<delivery id> / DELIVERY (an id without the time, made before 2026-12-07; log_pk TENANT#<tenant>#DLOG#<n>, 16 shards, log_sk <created>#<id>: IndexLog)
//	rejected item      REJECTED#<event id or seq:<stream sequence>> / REJECTED
//	job                REPLAYJOB#<job id> / REPLAYJOB (a job of any kind; the key words kept from when every job was a replay)
//	endpoint counters  STATS#<tenant>#<endpoint>#<n> / <hour start, 2006-01-02T15:00:00Z> (8 shards, merged on read; STATS#<tenant>#<endpoint> in earlier versions, still read)
//	counters by type   STATSTYPE#<tenant>#<endpoint>#<n> / <hour start>#<event type> (8 shards, merged on read)
//	dead window        DEADWINDOW#<tenant>#<endpoint>#<window start> / DEADWINDOW
//	rate window        RATE#<tenant>#<endpoint>#<j> / <second, 2006-01-02T15:04:05Z> (slots taken of shard j's part, min(8, limit/10) shards; a limit below 20 one item, RATE#<tenant>#<endpoint>, as in earlier versions; TTL an hour)
//
// Sparse index gsi1 (gsi1pk / gsi1sk) lists, per tenant: dead deliveries
// of earlier versions (TENANT#<t>#DEAD, <dead_at>#<id>), rejected items (TENANT#<t>#REJECTED),
// API keys (TENANT#<t>#KEYS, <key id>), portal links (TENANT#<t>#PORTAL,
// <link id>), completed jobs
// (TENANT#<t>#JOBS, <job id>), dead windows (TENANT#<t>#DEADWINDOWS,
// <endpoint>#<window start>); and every tenant's DLQ depth counter shards
// (DLQDEPTH#<m>, <tenant>#<n>: 32 index keys; DLQDEPTH, <tenant> for the
// one-item counters of earlier versions). With these, every item of a
// tenant is found without a scan, for its erasure (erase.go): the others
// are in the tenant's partition, its endpoints' STATS and STATSTYPE partitions, its DLQ
// depth shards (whose keys derive from the tenant), or derive from its
// outbox items (deliveries, all of which the delivery log lists too). gsi1 projects all attributes. Dead deliveries
// are listed in a sparse index of their own, IndexDead (dead_pk / dead_sk:
// TENANT#<t>#DEAD#<n>, one of DeadShards shards by the delivery id, and
// <dead_at>#<id>), which projects the listed attributes only
// (DeadIndexAttributes), not the message nor the attempt log: a death is
// one index write unit; the dead of earlier versions are in gsi1 until they
// age out, and the readers read both (deadindex.go). The delivery log is
// the tenant's 16 shards of records themselves (RecordsPK): a record's key
// is its id, which begins with its event's time, so a shard lists its
// deliveries in time order with no index and its writes write nothing
// else. Records of legacy ids are listed through IndexLog (log_pk /
// log_sk: TENANT#<t>#DLOG#<n>, one of LogShards shards by the delivery id,
// and <created>#<id>), which projects LogIndexAttributes only, until they
// expire; the listing (ListDeliveries, deliverylog.go) reads both, the
// time range by key and every other filter as a FilterExpression on a
// bounded page, and merges them on "<time>#<id>".
// DeliveriesOfEvent needs no index, as a delivery's id derives from its
// event's and endpoint's: it computes the ids from the tenant's endpoints
// and reads them (Load); a delivery to an endpoint deleted since is
// therefore not listed under its event (it is still read by id, and listed
// by the DLQ while dead). Times in keys are fixed-width RFC 3339, so they
// sort as strings.
//
// A delivery's record is created by its first attempt: RecordAttempt
// writes the ids, creation time and expiry where absent, so the record is
// complete and there is one per delivery (its key derives from the
// delivery id),
// however many times its message was sent. Every attempt's write is
// conditional on the record as the caller read it (absent, or the same
// state after the same number of attempts); on a conflict RecordAttempt
// reads it again and applies the attempt to it, so concurrent duplicate
// attempts are all logged, and RecordAttemptIfUnchanged reports the
// conflict (ErrConflict) to a caller whose decision rested on what it read.
// A delivered record changes by one write only: RecordResendAttempt, which
// appends a resend's attempt (marked resend) to its attempt log and counts
// it in resends, conditional on the record being delivered with the
// resends as read; state, attempts and last status stay the delivery's.
// Every move of a delivery into or out of dead and the move of its tenant's
// DLQ depth counter are one transaction (see depth.go). enqueue writes no
// record: a delivery that exists is one that was attempted, and enqueue
// sends only for deliveries that do not exist (LoadWith, eventually
// consistent). A delivery sent and not yet attempted exists nowhere but in
// its message, so a stream record processed again sends it again, with the
// same delivery id (webhook-id). A delivered delivery never moves back; a
// dead one keeps its message, so a replay needs nothing but this table, and
// leaves the dead index only through a conditional claim (ClaimForReplay).
//
// An endpoint's attempt counters are an item per hour in each of 8
// partitions of their own (shards; so no endpoint or tenant query reads
// them), written by one UpdateItem per deliver batch on one shard, each
// store's writes in turn (AddEndpointStats: ADD attempts, delivered,
// f_<class> per failure class and l00..l27 per latency histogram bucket;
// SET last_ok_at, last_fail_at, last_fail_status, last_fail_error and
// expires_at, StatsRetention (35 days) after the hour). The item stays
// under 1 KB, one write unit. EndpointStats and LastAttempts Query every
// shard and the one partition of earlier versions (STATS#<t>#<e>), and
// merge an hour's items (counts added, the newest success and failure
// kept); EraseStats deletes them all; nothing scans. Its counters by event
// type (AddEndpointTypeStats, one more UpdateItem per type a batch
// attempted; EndpointTypeStats) are items of the same counters per hour
// and type in 8 partitions of their own, STATSTYPE#<t>#<e>#<n>, which the
// hour reads never touch (typestats.go).
//
// An endpoint's health transitions are decided by its item's writes, so
// each is reported once: RecordEndpointHealth marks failing_since only
// where it is absent, and a reset returns the failing_since it removed
// (UPDATED_OLD); DisableEndpoint reports whether the endpoint was enabled
// (UPDATED_OLD). A dead window (delivery.dead coalescing) is counted with ADD,
// keeps its first domain.OpDeadSample deaths, and expires a day after it
// ends.
package store
