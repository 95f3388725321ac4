package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// maxScanPerPage bounds the index items one ListDead call reads when a
// filter on endpoint or type skips most of them; the page is then short and
// carries a cursor.
const maxScanPerPage = 1000

// ListDead returns a page of a tenant's dead deliveries, oldest death first,
// at most limit, after cursor ("" for the first page). It reads the sparse
// dead-letter index, so its cost follows the page (and, with an endpoint or
// type filter, the tenant's dead deliveries in the time range), never the
// size of the DLQ or of other tenants' dead deliveries.
//
// A filter whose times the index cannot hold (see KeyTime) or whose Until is
// before its Since is ErrBadFilter; a cursor this store did not make is
// ErrBadCursor, and one made for another query (another filter, or a
// position outside this filter's time range) ErrCursorMismatch. DynamoDB
// refuses such a query (ValidationException); this store never sends it.
func (s *Store) ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	pk := keys.TenantIndex(tenantID, "DEAD")
	lo, hi, err := DeadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	in := s.deadQuery(pk, f, lo, hi)
	query := DeadFingerprint(f)
	if cursor != "" {
		if in.ExclusiveStartKey, err = deadStartKey(pk, cursor, query, lo, hi); err != nil {
			return nil, "", err
		}
	}
	return s.queryDead(ctx, tenantID, in, limit, query)
}

// deadQuery is the query of partition pk of the dead-letter index between
// sort keys lo and hi, filtered on f's endpoint and event type.
func (s *Store) deadQuery(pk string, f domain.DeadFilter, lo, hi string) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
	}
	var conds []string
	if f.EndpointID != "" {
		conds = append(conds, "endpoint_id = :ep")
		in.ExpressionAttributeValues[":ep"] = &types.AttributeValueMemberS{Value: f.EndpointID}
	}
	if f.EventType != "" {
		conds = append(conds, "event_type = :type")
		in.ExpressionAttributeValues[":type"] = &types.AttributeValueMemberS{Value: f.EventType}
	}
	if len(conds) > 0 {
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	return in
}

// deadStartKey is the start key a cursor of query names in partition pk. The
// start key must fall inside the key condition (lo to hi), or DynamoDB
// refuses the query: a cursor of another query is refused here.
func deadStartKey(pk, cursor, query, lo, hi string) (map[string]types.AttributeValue, error) {
	c, err := DecodeDeadCursor(cursor)
	if err != nil {
		return nil, err
	}
	if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
		return nil, fmt.Errorf("cursor: %w", ErrCursorMismatch)
	}
	// Rebuilt with this tenant's partition: a cursor cannot reach another.
	return map[string]types.AttributeValue{
		"gsi1pk": &types.AttributeValueMemberS{Value: pk}, "gsi1sk": &types.AttributeValueMemberS{Value: c.SK},
		"pk": &types.AttributeValueMemberS{Value: keys.Delivery(c.ID)}, "sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
	}, nil
}

// queryDead runs a dead-letter query page by page until it has limit
// deliveries, the index ends, or it has read maxScanPerPage items (with a
// filter), and returns them with the cursor of the rest.
func (s *Store) queryDead(ctx context.Context, tenantID string, in *dynamodb.QueryInput, limit int, query string) ([]domain.Delivery, string, error) {
	filtered := in.FilterExpression != nil
	var out []domain.Delivery
	scanned := 0
	for {
		in.Limit = aws.Int32(int32(limit - len(out)))
		if filtered {
			in.Limit = aws.Int32(int32(min(maxScanPerPage-scanned, max(limit*4, 50))))
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("list dead deliveries of tenant %s: %w", tenantID, err)
		}
		scanned += int(page.ScannedCount)
		var ds []domain.Delivery
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ds); err != nil {
			return nil, "", fmt.Errorf("decode dead deliveries: %w", err)
		}
		for _, d := range ds {
			if len(out) == limit {
				// Stop inside this page: the cursor is the last one returned.
				return out, deadCursor(out[len(out)-1], query), nil
			}
			out = append(out, d)
		}
		if page.LastEvaluatedKey == nil {
			return out, "", nil
		}
		if len(out) == limit || scanned >= maxScanPerPage {
			return out, pageCursor(page.LastEvaluatedKey, query), nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// pageCursor is the cursor that resumes a query of query after the index's
// last evaluated key.
func pageCursor(last map[string]types.AttributeValue, query string) string {
	sk := last["gsi1sk"].(*types.AttributeValueMemberS).Value
	id := last["pk"].(*types.AttributeValueMemberS).Value[len(keys.DeliveryPrefix):]
	return EncodeDeadCursor(DeadCursor{ID: id, SK: sk, Q: query})
}

// ErrBadFilter is returned for a dead-letter filter the index cannot be
// queried with.
var ErrBadFilter = errors.New("dead-letter filter is not valid")

// ErrCursorMismatch is returned for a pagination cursor this store made for
// another query.
var ErrCursorMismatch = errors.New("pagination cursor belongs to another query")

// The times a sort key can hold: sortableFormat compares as strings in time
// order only with a four-digit year.
var (
	minKeyTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxKeyTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// KeyTime reports whether t can bound a query of the store's time-ordered
// indexes: from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z, in
// UTC (RFC 3339 allows 9999-12-31T23:59:59-01:00, which is in year 10000).
func KeyTime(t time.Time) bool {
	return !t.Before(minKeyTime) && !t.After(maxKeyTime)
}

// deadCursor is the cursor after d, in the listing of query.
func deadCursor(d domain.Delivery, query string) string {
	sk := ""
	if d.DeadAt != nil {
		sk = sortableTime(*d.DeadAt) + "#" + d.DeliveryID
	}
	return EncodeDeadCursor(DeadCursor{ID: d.DeliveryID, SK: sk, Q: query})
}

// Reasons a delivery is not claimed for replay.
var (
	ErrNotDead         = errors.New("not_dead")
	ErrReplayInFlight  = errors.New("replay_in_progress")
	ErrNoReplayMessage = errors.New("no_message")
)

// ClaimForReplay moves a dead delivery back to pending for job, records
// replayed_at, takes it out of the dead-letter index, gives its record
// Retention again from now (so that it cannot expire while the replay is in
// flight), and returns it with its message. tenantID, when not empty, must
// own the delivery (else ErrNotFound, as for a missing one). A delivery
// another job claimed less than stale ago is ErrReplayInFlight; one that is
// not dead, ErrNotDead. A delivery this job claimed and has not released is
// returned again, so a job that stopped halfway resumes where it was; one
// whose claim is older than stale (its job stopped and was never resumed:
// the claim is pending, its message unsent) can be claimed by another job,
// such as the operator's redrive, which finds its message still in the DLQ.
// Only one claimant wins: two replays of the same delivery send it once.
// The delivery is read first (its tenant names the DLQ depth counter, and
// its state says whether the claim takes it out of the dead), and the claim
// is conditional on it being as read: a dead delivery's claim and its
// tenant's DLQ depth move in one transaction.
func (s *Store) ClaimForReplay(ctx context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	for try := 0; try < maxChangedTries; try++ {
		now := s.Now().UTC()
		d, err := s.Delivery(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && tenantID != "" && d.TenantID != tenantID) {
			return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: %w", id, err)
		}
		staleClaim := d.ReplayClaimedAt != nil && d.ReplayClaimedAt.Before(now.Add(-stale))
		claimable := (d.State == domain.StateDead && d.ReplayJob == "") ||
			(d.State != domain.StateDelivered && staleClaim) ||
			(d.ReplayJob == job && d.State != domain.StateDelivered)
		if !claimable {
			if d.State == domain.StateDead || d.ReplayJob != "" {
				return d, fmt.Errorf("delivery %s: %w", id, ErrReplayInFlight)
			}
			return d, fmt.Errorf("delivery %s is %s: %w", id, d.State, ErrNotDead)
		}
		names := map[string]string{"#state": "state"}
		values := map[string]types.AttributeValue{
			":dead":      &types.AttributeValueMemberS{Value: string(domain.StateDead)},
			":pending":   &types.AttributeValueMemberS{Value: string(domain.StatePending)},
			":delivered": &types.AttributeValueMemberS{Value: string(domain.StateDelivered)},
			":job":       &types.AttributeValueMemberS{Value: job},
			":now":       timeValue(now),
			":stale":     timeValue(now.Add(-stale)),
			":expires":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)},
		}
		// Claimable (dead and unclaimed; claimed by a job that stopped long
		// ago; or claimed by this very job and not delivered since), and as
		// read.
		cond := "((#state = :dead AND attribute_not_exists(replay_job)) OR (#state <> :delivered AND replay_claimed_at < :stale) OR (replay_job = :job AND #state <> :delivered))" +
			" AND " + expected(d, names, values)
		err = s.transition(ctx, &types.Update{
			TableName: &s.table, Key: deliveryKey(id),
			UpdateExpression:          aws.String("SET #state = :pending, replay_job = :job, replay_claimed_at = :now, replayed_at = :now, expires_at = :expires REMOVE gsi1pk, gsi1sk"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}, d.TenantID, depthDelta(d.State, domain.StatePending), now)
		var changed *changedError
		if errors.As(err, &changed) {
			continue // claimed, attempted or killed meanwhile: read it again
		}
		if err != nil {
			return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: %w", id, err)
		}
		// What the update wrote, on the item as it was.
		d.State, d.ReplayJob, d.ReplayClaimedAt, d.ReplayedAt = domain.StatePending, job, &now, &now
		return d, nil
	}
	return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: changed by others %d times in a row: %w", id, maxChangedTries, ErrConflict)
}

// ReleaseReplay records that job has sent the delivery's message: the claim
// is dropped, so the delivery can be replayed again if it dies again, and
// replayed_by names the job.
func (s *Store) ReleaseReplay(ctx context.Context, id, job string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: deliveryKey(id),
		UpdateExpression:          aws.String("SET replayed_by = :job REMOVE replay_job, replay_claimed_at"),
		ConditionExpression:       aws.String("replay_job = :job"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":job": &types.AttributeValueMemberS{Value: job}},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release replay of delivery %s: %w", id, err)
	}
	return nil
}

// openJobsPartition is the index partition of every job not completed
// (gsi1sk = <updated_at>#<job id>), so that jobs whose message was lost are
// found without a scan.
var openJobsPartition = keys.OpenJobs

// ErrTooManyJobs is CreateJob's answer when the tenant has as many open
// (queued or running) replay jobs as the limit allows.
var ErrTooManyJobs = errors.New("too many replay jobs open")

// jobItem readies a job for a write: it bumps Version, stamps UpdatedAt
// (and CreatedAt for a new job) and marshals it, with its TTL and, until it
// is completed (CompletedAt set), its entry in the open jobs' index. It
// returns the version it had; the caller restores it if the write fails.
func (s *Store) jobItem(j *domain.ReplayJob) (map[string]types.AttributeValue, int, error) {
	prev := j.Version
	j.Version++
	j.UpdatedAt = s.Now().UTC()
	if prev == 0 {
		j.CreatedAt = j.UpdatedAt
	}
	item, err := attributevalue.MarshalMap(j)
	if err != nil {
		j.Version = prev
		return nil, prev, fmt.Errorf("marshal replay job %s: %w", j.JobID, err)
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(j.CreatedAt.Add(s.Retention).Unix(), 10)}
	if j.CompletedAt == nil {
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: openJobsPartition}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: sortableTime(j.UpdatedAt) + "#" + j.JobID}
	} else if j.TenantID != "" {
		// A tenant's completed job, listed for its tenant's erasure.
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: keys.TenantIndex(j.TenantID, "JOBS")}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: j.JobID}
	}
	return withKey(item, jobKey(j.JobID)), prev, nil
}

// SaveJob writes a job: a new one (Version 0) only if it does not exist, an
// existing one only if nobody saved it since it was read (ErrConflict). A
// write whose condition fails because the item is already this very write
// (the SDK sent the put again after its first answer was lost: a timeout, a
// response failing its checksum under load) succeeds: concurrent operator
// redrives answered 500 ("replay job rj_...: conflicting change") on the
// local cloud for want of this.
func (s *Store) SaveJob(ctx context.Context, j *domain.ReplayJob) error {
	item, prev, err := s.jobItem(j)
	if err != nil {
		return err
	}
	in := &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	if prev == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(prev)}}
	}
	_, err = s.db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if sameWrite(item, ccf.Item) {
			return nil
		}
		j.Version = prev
		return fmt.Errorf("replay job %s: %w", j.JobID, ErrConflict)
	}
	if err != nil {
		j.Version = prev
		return fmt.Errorf("save replay job %s: %w", j.JobID, err)
	}
	return nil
}

// sameWrite reports whether the job item found, old, is the one mine
// writes, attribute for attribute: a save's every write bumps the version
// and stamps updated_at, so only a second send of the same write finds it
// (or a write of exactly the same job, which leaves what this one would).
func sameWrite(mine, old map[string]types.AttributeValue) bool {
	return old != nil && reflect.DeepEqual(mine, old)
}

// CreateJob records a new job (Version 0; ErrConflict if its id exists). A
// tenant's job, when limit is above zero, also takes one of the tenant's
// limit places for open jobs, in the same transaction: with limit jobs of
// the tenant open, nothing is written and the answer is ErrTooManyJobs,
// however many requests arrive at once. ReleaseJob gives the place back.
func (s *Store) CreateJob(ctx context.Context, j *domain.ReplayJob, limit int) error {
	if j.Version != 0 {
		return fmt.Errorf("create replay job %s: version %d: %w", j.JobID, j.Version, ErrConflict)
	}
	if j.TenantID == "" || limit <= 0 {
		return s.SaveJob(ctx, j)
	}
	item, _, err := s.jobItem(j)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{
			TableName: &s.table, Key: jobSlotsKey(j.TenantID),
			UpdateExpression:    aws.String("ADD open_jobs :job SET tenant_id = :tenant"),
			ConditionExpression: aws.String("attribute_not_exists(open_jobs) OR size(open_jobs) < :limit"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":job":    &types.AttributeValueMemberSS{Value: []string{j.JobID}},
				":tenant": &types.AttributeValueMemberS{Value: j.TenantID},
				":limit":  &types.AttributeValueMemberN{Value: strconv.Itoa(limit)},
			},
		}},
	}})
	if err == nil {
		return nil
	}
	j.Version = 0
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		failed := func(i int) bool {
			return i < len(tce.CancellationReasons) && aws.ToString(tce.CancellationReasons[i].Code) == "ConditionalCheckFailed"
		}
		switch {
		case failed(0):
			return fmt.Errorf("replay job %s: %w", j.JobID, ErrConflict)
		case failed(1):
			return fmt.Errorf("tenant %s: %d replay jobs open: %w", j.TenantID, limit, ErrTooManyJobs)
		}
	}
	return fmt.Errorf("create replay job %s: %w", j.JobID, err)
}

// TenantJobs returns the ids of a tenant's open jobs, as CreateJob counts
// them (a strongly consistent read).
func (s *Store) TenantJobs(ctx context.Context, tenantID string) ([]string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: jobSlotsKey(tenantID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read open replay jobs of tenant %s: %w", tenantID, err)
	}
	ids, _ := out.Item["open_jobs"].(*types.AttributeValueMemberSS)
	if ids == nil {
		return nil, nil
	}
	return ids.Value, nil
}

// ReleaseJob gives back the place a tenant's job took: once it completed, or
// when it is found completed or gone. Releasing twice is harmless.
func (s *Store) ReleaseJob(ctx context.Context, tenantID, jobID string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: jobSlotsKey(tenantID),
		UpdateExpression:    aws.String("DELETE open_jobs :job"),
		ConditionExpression: aws.String("contains(open_jobs, :id)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":job": &types.AttributeValueMemberSS{Value: []string{jobID}},
			":id":  &types.AttributeValueMemberS{Value: jobID},
		},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release replay job %s of tenant %s: %w", jobID, tenantID, err)
	}
	return nil
}

// IdleJobs returns up to limit jobs not completed and not saved since
// before, least recently saved first, from the open jobs' index (eventually
// consistent: a job saved a moment ago may still be listed; its Version
// tells).
func (s *Store) IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.ReplayJob, error) {
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :p AND gsi1sk < :before"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p":      &types.AttributeValueMemberS{Value: openJobsPartition},
			":before": &types.AttributeValueMemberS{Value: sortableTime(before)},
		},
	}
	var out []domain.ReplayJob
	for len(out) < limit {
		in.Limit = aws.Int32(int32(limit - len(out)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list idle replay jobs: %w", err)
		}
		var js []domain.ReplayJob
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &js); err != nil {
			return nil, fmt.Errorf("decode idle replay jobs: %w", err)
		}
		out = append(out, js...)
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// ClaimSweep reports whether the caller may sweep the DLQ now: true for at
// most one caller per gap (a conditional write of the last sweep's time),
// so that however many jobs complete, the DLQ is swept once per gap.
func (s *Store) ClaimSweep(ctx context.Context, gap time.Duration) (bool, error) {
	now := s.Now().UTC()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key("REPLAY", "SWEEP"),
		UpdateExpression:    aws.String("SET swept_at = :now"),
		ConditionExpression: aws.String("attribute_not_exists(swept_at) OR swept_at <= :since"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": timeValue(now), ":since": timeValue(now.Add(-gap)),
		},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim the DLQ sweep: %w", err)
	}
	return true, nil
}

// Job reads a replay job, or ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (domain.ReplayJob, error) {
	var j domain.ReplayJob
	return j, s.get(ctx, jobKey(id), &j, "replay job "+id)
}
