package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/store/keys"
)

// IndexLog is the state table's sparse index of every delivery that has a
// record, the delivery log: partition AttrLogPK (TENANT#<t>#DLOG#<n>,
// LogPK: n one of LogShards, of the delivery id), sort key AttrLogSK
// (<creation time>#<delivery id>), projecting LogIndexAttributes only. A
// delivery's record is created by its first attempt (RecordAttempt,
// MarkDeadBeforeLastAttempt), which writes both keys where absent, with
// its created_at: the keys never change after, so each later write of the
// record (an attempt, a death, a replay's claim) is one index write unit
// (TestLogIndexEntryIsOneWriteUnit), and a listing's positions do not move
// under it. A delivery sent and not yet attempted has no record, and is in
// no listing; a record of an earlier version enters the index at its next
// attempt, under that attempt's time.
const IndexLog = "by_log"

// The delivery log's key attributes.
const (
	AttrLogPK = "log_pk"
	AttrLogSK = "log_sk"
)

// LogIndexAttributes are the attributes the delivery log projects besides
// the table's and its own keys: what the listing shows (api
// DeliveryListView) and its filters read. Not message nor attempt_log, nor
// the times of the record's moves (delivered_at, dead_at, replayed_at: a
// delivery's own view has them): an entry stays within one write unit at
// its largest (TestLogIndexEntryIsOneWriteUnit). Not delivery_id,
// tenant_id nor created_at, which the keys hold.
var LogIndexAttributes = []string{"endpoint_id", "event_id", "event_type", "state", "attempts", "last_status", "last_error", "dead_reason"}

// LogShards is how many partition key values a tenant's delivery log is
// spread over: 16, so one tenant's attempts take 16,000 index write units
// a second (one an attempt), as its deaths do on the dead index. A listing
// queries every shard, at most deadParallel at once.
const LogShards = 16

// LogPK is the delivery log's partition key of a tenant's delivery: the
// shard of its id (FNV, as the dead index's).
func LogPK(tenantID, deliveryID string) string {
	return keys.LogShard(tenantID, int(fnv32(deliveryID)%LogShards))
}

// logAttributes are the delivery log's keys of a new record of d created
// at now, as attributes; none when d lacks its tenant or id.
func logAttributes(d domain.Delivery, attrs map[string]types.AttributeValue, now string) {
	if _, ok := RecordsPK(d.DeliveryID); ok || d.TenantID == "" || d.DeliveryID == "" {
		return // a record the tenant's shards of records list by its own key
	}
	attrs[AttrLogPK] = &types.AttributeValueMemberS{Value: LogPK(d.TenantID, d.DeliveryID)}
	attrs[AttrLogSK] = &types.AttributeValueMemberS{Value: now + "#" + d.DeliveryID}
}

// LogListed is a delivery as the delivery log lists it: the attributes the
// index projects, and those its keys hold (CreatedAt the time of its sort
// key, which is the record's creation but for a record of an earlier
// version, logged at its next attempt).
func LogListed(d domain.Delivery) domain.Delivery {
	return domain.Delivery{
		DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		State: d.State, CreatedAt: d.CreatedAt, DeadReason: d.DeadReason, Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError,
	}
}

// LogKeyRange is the sort key range of the delivery log that f's times
// select, by DeadKeyRange's rules (ErrBadFilter for a time no key holds).
func LogKeyRange(f domain.DeliveryFilter) (lo, hi string, err error) {
	return DeadKeyRange(domain.DeadFilter{Since: f.Since, Until: f.Until})
}

// LogFingerprint names the query f makes, for its cursors: never that of a
// dead-letter listing's.
func LogFingerprint(f domain.DeliveryFilter) string {
	lo, hi, _ := LogKeyRange(f)
	sum := sha256.Sum256([]byte(strings.Join([]string{"log", f.EndpointID, f.EventType, string(f.State), strconv.Itoa(f.Status), string(f.Class), lo, hi}, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// ListDeliveries returns a page of a tenant's deliveries that f selects,
// newest first, at most limit, after cursor ("" for the first page), as
// LogListed has them. A delivery whose id carries its event's time
// (domain.DeliveryID) is listed by that time, from its record in the
// tenant's shards of records (recordPartitions, by id); one of a legacy id
// by its record's creation, from the delivery log's index (IndexLog, its
// LogShards shards of the tenant). Both are queried, newest first, at most
// deadParallel at once, and merged on "<time>#<id>" (mergeShards,
// descending): the time range is the key condition, every other filter a
// FilterExpression, and a filtered query reads at most maxScanPerPage
// items, so a page may be short and carry a cursor. Its cursor (a
// DeadCursor) names a position and the query, never a tenant. Errors as
// ListDead's.
func (s *Store) ListDeliveries(ctx context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := LogKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	query := LogFingerprint(f)
	var after *DeadCursor
	if cursor != "" {
		from := lo // the shards of records are read from Since's whole millisecond
		if !f.Since.IsZero() {
			from = sortableTime(f.Since.Truncate(time.Millisecond))
		}
		if after, err = checkDeadCursor(cursor, query, from, hi); err != nil {
			return nil, "", err
		}
	}
	records, pages := recordPartitions(tenantID), outcomePartitions(tenantID)
	reads := make([]*deadRead, LogShards+len(records)+len(pages))
	err = fanout.Each(len(reads), deadParallel, func(n int) error {
		if after != nil && after.X&(1<<n) != 0 {
			return nil // read to its end
		}
		var r deadRead
		var err error
		switch {
		case n >= LogShards+len(records):
			r, err = s.queryOutcomes(ctx, pages[n-LogShards-len(records)], tenantID, f, after, limit)
		case n < LogShards:
			r, err = s.queryListing(ctx, attrKey(AttrLogSK), s.logQuery(keys.LogShard(tenantID, n), f, lo, hi, after), limit,
				func(d domain.Delivery, sk string, item map[string]types.AttributeValue) domain.Delivery {
					d.TenantID, d.DeliveryID = tenantID, deliveryIDOf(item)
					if at, _, ok := cutTime(sk); ok {
						d.CreatedAt = at
					}
					return LogListed(d)
				}, nil)
		default:
			var keep func(string) bool
			if after != nil {
				keep = func(sk string) bool { return sk < after.SK } // the query's bound includes the cursor's own
			}
			r, err = s.queryListing(ctx, recordKey, s.recordsQuery(records[n-LogShards], tenantID, f, after), limit,
				func(d domain.Delivery, _ string, item map[string]types.AttributeValue) domain.Delivery {
					d.TenantID, d.DeliveryID = tenantID, deliveryIDOf(item)
					return LogListed(d)
				}, keep)
		}
		reads[n] = &r
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries of tenant %s: %w", tenantID, err)
	}
	out, next := mergeShards(reads, limit, query, descending)
	return out, next, nil
}

// attrKey is the listing key of an index entry: its sort key attribute.
func attrKey(name string) func(map[string]types.AttributeValue) string {
	return func(item map[string]types.AttributeValue) string { return stringAttr(item, name) }
}

// recordKey is the listing key of a record in its tenant's shards of
// records: "<its event's time>#<id>", as the delivery log's index keys a
// legacy record ("<creation>#<id>"), so that the two merge.
func recordKey(item map[string]types.AttributeValue) string {
	id := stringAttr(item, "sk")
	p, ok := domain.ParseDeliveryID(id)
	if !ok {
		return ""
	}
	return sortableTime(p.At) + "#" + id
}

// recordsProjection is the projection of a listed record, its names added
// to names: the attributes by_log projects (LogIndexAttributes), the keys,
// the ids and the creation time, never the message (a dead record keeps
// up to 256 KB of it) nor the attempt log, so that a page's answer stays
// small whatever the records hold (DynamoDB still reads, and bills, each
// record whole: at most 1 MB a call).
func recordsProjection(names map[string]string) string {
	attrs := append([]string{"pk", "sk", "tenant_id", "delivery_id", "created_at"}, LogIndexAttributes...)
	out := make([]string, len(attrs))
	for i, a := range attrs {
		out[i] = "#p_" + a
		names[out[i]] = a
	}
	return strings.Join(out, ", ")
}

// recordsQuery is the query of pk, one of tenantID's shards of records,
// newest first, for f's time range (by the ids' times, to the
// millisecond: Since's and Until's included whole), up to cursor c (nil: from
// the newest): its delivery id when that is a record's (which the query
// then reads again: ListDeliveries reads past it), else the whole of its
// millisecond; filtered on the rest of f and on the tenant (its hash
// places the records; two tenants may share one).
func (s *Store) recordsQuery(pk, tenantID string, f domain.DeliveryFilter, c *DeadCursor) *dynamodb.QueryInput {
	lo, hi := "msg_", "msg_~"
	if !f.Since.IsZero() {
		lo = domain.DeliveryIDPrefix(f.Since)
	}
	if !f.Until.IsZero() {
		hi = domain.DeliveryIDPrefix(f.Until) + "~"
	}
	if c != nil {
		at, id, _ := cutTime(c.SK)
		bound := domain.DeliveryIDPrefix(at) + "~"
		if p, ok := domain.ParseDeliveryID(id); ok && p.At.Equal(at) {
			bound = id
		}
		hi = min(hi, bound)
	}
	if hi < lo {
		hi = lo // nothing: DynamoDB refuses reversed bounds
	}
	names := map[string]string{"#tenant": "tenant_id"}
	values := map[string]types.AttributeValue{
		":pk": &types.AttributeValueMemberS{Value: pk}, ":from": &types.AttributeValueMemberS{Value: lo},
		":to": &types.AttributeValueMemberS{Value: hi}, ":tenant": &types.AttributeValueMemberS{Value: tenantID},
	}
	cond := "#tenant = :tenant"
	if more := LogFilterExpression(f, names, values); more != "" {
		cond += " AND " + more
	}
	return &dynamodb.QueryInput{
		TableName: &s.table, ScanIndexForward: aws.Bool(false),
		KeyConditionExpression:    aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		FilterExpression:          aws.String(cond),
		ProjectionExpression:      aws.String(recordsProjection(names)),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// logQuery is the query of shard pk of the delivery log between sort keys
// lo and hi, newest first, before cursor c (nil: from the newest), filtered
// on the rest of f.
func (s *Store) logQuery(pk string, f domain.DeliveryFilter, lo, hi string, c *DeadCursor) *dynamodb.QueryInput {
	values := map[string]types.AttributeValue{
		":pk": &types.AttributeValueMemberS{Value: pk},
		":lo": &types.AttributeValueMemberS{Value: lo},
		":hi": &types.AttributeValueMemberS{Value: hi},
	}
	names := map[string]string{}
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexLog), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression:    aws.String(AttrLogPK + " = :pk AND " + AttrLogSK + " BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: values,
	}
	if cond := LogFilterExpression(f, names, values); cond != "" {
		in.FilterExpression = aws.String(cond)
	}
	if len(names) > 0 {
		in.ExpressionAttributeNames = names
	}
	if c != nil {
		// Rebuilt with this tenant's shard: a cursor cannot reach another.
		k := deliveryKey(c.ID)
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			AttrLogPK: &types.AttributeValueMemberS{Value: pk}, AttrLogSK: &types.AttributeValueMemberS{Value: c.SK}, "pk": k["pk"], "sk": k["sk"],
		}
	}
	return in
}

// LogFilterExpression is the FilterExpression of f's filters but its time
// range ("" for none), its names and values added to names and values.
func LogFilterExpression(f domain.DeliveryFilter, names map[string]string, values map[string]types.AttributeValue) string {
	var conds []string
	eq := func(attr, v string) {
		names["#"+attr] = attr
		values[":"+attr] = &types.AttributeValueMemberS{Value: v}
		conds = append(conds, "#"+attr+" = :"+attr)
	}
	if f.EndpointID != "" {
		eq("endpoint_id", f.EndpointID)
	}
	if f.EventType != "" {
		eq("event_type", f.EventType)
	}
	if f.State != "" {
		eq("state", string(f.State))
	}
	if f.Status != 0 {
		names["#last_status"] = "last_status"
		values[":status"] = &types.AttributeValueMemberN{Value: strconv.Itoa(f.Status)}
		conds = append(conds, "#last_status = :status")
	}
	if f.Class != "" {
		conds = append(conds, classCondition(f.Class, names, values))
	}
	return strings.Join(conds, " AND ")
}

// classCondition is the condition that a delivery's last answer is of
// class c (domain.StatusClass.Matches).
func classCondition(c domain.StatusClass, names map[string]string, values map[string]types.AttributeValue) string {
	names["#last_status"] = "last_status"
	if lo, hi, ok := c.StatusRange(); ok {
		values[":status_lo"] = &types.AttributeValueMemberN{Value: strconv.Itoa(lo)}
		values[":status_hi"] = &types.AttributeValueMemberN{Value: strconv.Itoa(hi)}
		return "#last_status BETWEEN :status_lo AND :status_hi"
	}
	names["#last_error"] = "last_error"
	values[":no_status"] = &types.AttributeValueMemberN{Value: "0"}
	noAnswer := "(attribute_not_exists(#last_status) OR #last_status = :no_status)"
	switch c {
	case domain.StatusTimeout:
		values[":err_timeout"] = &types.AttributeValueMemberS{Value: domain.ErrorTimeout}
		return noAnswer + " AND #last_error = :err_timeout"
	case domain.StatusRefused:
		values[":err_refused"] = &types.AttributeValueMemberS{Value: domain.ErrorForbiddenAddress}
		return noAnswer + " AND #last_error = :err_refused"
	}
	values[":err_timeout"] = &types.AttributeValueMemberS{Value: domain.ErrorTimeout}
	values[":err_refused"] = &types.AttributeValueMemberS{Value: domain.ErrorForbiddenAddress}
	values[":err_none"] = &types.AttributeValueMemberS{Value: ""}
	return noAnswer + " AND attribute_exists(#last_error) AND #last_error <> :err_none AND #last_error <> :err_timeout AND #last_error <> :err_refused"
}
