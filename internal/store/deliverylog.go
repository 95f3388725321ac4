package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

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
	if d.TenantID == "" || d.DeliveryID == "" {
		return
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
// newest first (by creation, then id), at most limit, after cursor ("" for
// the first page), as LogListed has them. It queries the delivery log's
// LogShards shards of the tenant (IndexLog), newest first, at most
// deadParallel at once, and merges them (mergeShards, descending): the time
// range is the key condition, every other filter a FilterExpression, and a filtered
// shard's query reads at most maxScanPerPage entries, so a page may be
// short and carry a cursor. Its cursor (a DeadCursor) names a position and
// the query, never a tenant. Errors as ListDead's.
func (s *Store) ListDeliveries(ctx context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := LogKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	query := LogFingerprint(f)
	var after *DeadCursor
	if cursor != "" {
		if after, err = checkDeadCursor(cursor, query, lo, hi); err != nil {
			return nil, "", err
		}
	}
	reads := make([]*deadRead, LogShards)
	err = fanout.Each(LogShards, deadParallel, func(n int) error {
		if after != nil && after.X&(1<<n) != 0 {
			return nil // read to its end
		}
		in := s.logQuery(keys.LogShard(tenantID, n), f, lo, hi, after)
		r, err := s.queryListing(ctx, AttrLogSK, in, limit, func(d domain.Delivery, sk string, item map[string]types.AttributeValue) domain.Delivery {
			d.TenantID, d.DeliveryID = tenantID, strings.TrimPrefix(stringAttr(item, "pk"), keys.DeliveryPrefix)
			if at, _, ok := cutTime(sk); ok {
				d.CreatedAt = at
			}
			return LogListed(d)
		})
		reads[n] = &r
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries of tenant %s: %w", tenantID, err)
	}
	out, next := mergeShards(reads, limit, query, descending)
	return out, next, nil
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
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			AttrLogPK: &types.AttributeValueMemberS{Value: pk}, AttrLogSK: &types.AttributeValueMemberS{Value: c.SK},
			"pk": &types.AttributeValueMemberS{Value: keys.Delivery(c.ID)}, "sk": &types.AttributeValueMemberS{Value: keys.DeliverySK},
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
