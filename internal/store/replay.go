package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/delivery"
)

// DeadFilter selects a tenant's dead deliveries. Zero fields select all.
type DeadFilter struct {
	EndpointID string    `json:"endpoint_id,omitempty" dynamodbav:"endpoint_id,omitempty"`
	EventType  string    `json:"event_type,omitempty" dynamodbav:"event_type,omitempty"`
	Since      time.Time `json:"since,omitzero" dynamodbav:"since,omitempty"`
	Until      time.Time `json:"until,omitzero" dynamodbav:"until,omitempty"`
}

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
func (s *Store) ListDead(ctx context.Context, tenantID string, f DeadFilter, limit int, cursor string) ([]Delivery, string, error) {
	pk := "TENANT#" + tenantID + "#DEAD"
	lo, hi, err := deadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	in := &dynamodb.QueryInput{
		TableName: &s.table, IndexName: aws.String(IndexTenant),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
	}
	filter := ""
	and := func(cond string) {
		if filter != "" {
			filter += " AND "
		}
		filter += cond
	}
	if f.EndpointID != "" {
		and("endpoint_id = :ep")
		in.ExpressionAttributeValues[":ep"] = &types.AttributeValueMemberS{Value: f.EndpointID}
	}
	if f.EventType != "" {
		and("event_type = :type")
		in.ExpressionAttributeValues[":type"] = &types.AttributeValueMemberS{Value: f.EventType}
	}
	if filter != "" {
		in.FilterExpression = aws.String(filter)
	}
	query := f.fingerprint()
	if cursor != "" {
		c, err := decodeDeadCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		// The start key must fall inside the key condition, or DynamoDB
		// refuses the query: a cursor of another query is refused here.
		if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
			return nil, "", fmt.Errorf("cursor: %w", ErrCursorMismatch)
		}
		// Rebuilt with this tenant's partition: a cursor cannot reach another.
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			"gsi1pk": &types.AttributeValueMemberS{Value: pk}, "gsi1sk": &types.AttributeValueMemberS{Value: c.SK},
			"pk": &types.AttributeValueMemberS{Value: "DELIVERY#" + c.ID}, "sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
		}
	}
	var out []Delivery
	scanned := 0
	for {
		in.Limit = aws.Int32(int32(limit - len(out)))
		if filter != "" {
			in.Limit = aws.Int32(int32(min(maxScanPerPage-scanned, max(limit*4, 50))))
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("list dead deliveries of tenant %s: %w", tenantID, err)
		}
		scanned += int(page.ScannedCount)
		var ds []Delivery
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
			sk := page.LastEvaluatedKey["gsi1sk"].(*types.AttributeValueMemberS).Value
			id := page.LastEvaluatedKey["pk"].(*types.AttributeValueMemberS).Value[len("DELIVERY#"):]
			return out, encodeDeadCursor(deadCursorKey{ID: id, SK: sk, Q: query}), nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
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

// deadKeyRange is the sort key range of the dead-letter index that f
// selects: every key is a time in sortableFormat, "#", a delivery id.
func deadKeyRange(f DeadFilter) (lo, hi string, err error) {
	lo, hi = "0", "~" // below and above every digit a key starts with
	if !f.Since.IsZero() {
		if !KeyTime(f.Since) {
			return "", "", fmt.Errorf("since %s: %w", f.Since.Format(time.RFC3339Nano), ErrBadFilter)
		}
		lo = sortableTime(f.Since)
	}
	if !f.Until.IsZero() {
		if !KeyTime(f.Until) {
			return "", "", fmt.Errorf("until %s: %w", f.Until.Format(time.RFC3339Nano), ErrBadFilter)
		}
		hi = sortableTime(f.Until) + "#~"
	}
	if lo > hi {
		return "", "", fmt.Errorf("until is before since: %w", ErrBadFilter)
	}
	return lo, hi, nil
}

// fingerprint names the query f makes, for its cursors.
func (f DeadFilter) fingerprint() string {
	key := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return sortableTime(t)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{f.EndpointID, f.EventType, key(f.Since), key(f.Until)}, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// deadCursorKey is a dead-letter listing's cursor: the position (the index
// key of the last delivery returned) and the query it belongs to. Q is
// empty in the cursors made before it was added; they are checked by
// position only.
type deadCursorKey struct {
	ID, SK string
	Q      string `json:",omitempty"`
}

func encodeDeadCursor(c deadCursorKey) string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeDeadCursor reads a cursor and checks that its position is a key of
// the dead-letter index: a time in sortableFormat, "#", the delivery id.
func decodeDeadCursor(cursor string) (deadCursorKey, error) {
	var c deadCursorKey
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) == 0 || json.Unmarshal(raw, &c) != nil || c.ID == "" || len(c.ID) > 256 {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	at, id, ok := strings.Cut(c.SK, "#")
	t, err := time.Parse(sortableFormat, at)
	if !ok || err != nil || sortableTime(t) != at || id != c.ID {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	return c, nil
}

// deadCursor is the cursor after d, in the listing of query.
func deadCursor(d Delivery, query string) string {
	sk := ""
	if d.DeadAt != nil {
		sk = sortableTime(*d.DeadAt) + "#" + d.DeliveryID
	}
	return encodeDeadCursor(deadCursorKey{ID: d.DeliveryID, SK: sk, Q: query})
}

// Reasons a delivery is not claimed for replay.
var (
	ErrNotDead         = errors.New("not_dead")
	ErrReplayInFlight  = errors.New("replay_in_progress")
	ErrNoReplayMessage = errors.New("no_message")
)

// ClaimForReplay moves a dead delivery back to pending for job, records
// replayed_at, takes it out of the dead-letter index, and returns it with its
// message. tenantID, when not empty, must own the delivery (else ErrNotFound,
// as for a missing one). A delivery another job claimed less than stale ago
// is ErrReplayInFlight; one that is not dead, ErrNotDead. A delivery this job
// claimed and has not released is returned again, so a job that stopped
// halfway resumes where it was; one whose claim is older than stale (its job
// stopped and was never resumed: the claim is pending, its message unsent)
// can be claimed by another job, such as the operator's redrive, which finds
// its message still in the DLQ. Only one claimant wins: two replays of the
// same delivery send it once.
func (s *Store) ClaimForReplay(ctx context.Context, id, tenantID, job string, stale time.Duration) (Delivery, error) {
	now := s.Now().UTC()
	// Claimable: dead and unclaimed; claimed by a job that stopped long ago
	// (dead, or pending and never sent); or claimed by this very job and not
	// delivered since.
	cond := "(#state = :dead AND attribute_not_exists(replay_job)) OR (#state <> :delivered AND replay_claimed_at < :stale) OR (replay_job = :job AND #state <> :delivered)"
	values := map[string]types.AttributeValue{
		":dead":      &types.AttributeValueMemberS{Value: string(delivery.StateDead)},
		":pending":   &types.AttributeValueMemberS{Value: string(delivery.StatePending)},
		":delivered": &types.AttributeValueMemberS{Value: string(delivery.StateDelivered)},
		":job":       &types.AttributeValueMemberS{Value: job},
		":now":       timeValue(now),
		":stale":     timeValue(now.Add(-stale)),
	}
	if tenantID != "" {
		cond = "tenant_id = :tenant AND (" + cond + ")"
		values[":tenant"] = &types.AttributeValueMemberS{Value: tenantID}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: deliveryKey(id),
		UpdateExpression:                    aws.String("SET #state = :pending, replay_job = :job, replay_claimed_at = :now, replayed_at = :now REMOVE gsi1pk, gsi1sk"),
		ConditionExpression:                 aws.String("attribute_exists(pk) AND " + cond),
		ExpressionAttributeNames:            map[string]string{"#state": "state"},
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var old Delivery
		if ccf.Item == nil || attributevalue.UnmarshalMap(ccf.Item, &old) != nil || (tenantID != "" && old.TenantID != tenantID) {
			return Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
		}
		if old.State == delivery.StateDead || old.ReplayJob != "" {
			return old, fmt.Errorf("delivery %s: %w", id, ErrReplayInFlight)
		}
		return old, fmt.Errorf("delivery %s is %s: %w", id, old.State, ErrNotDead)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("claim delivery %s for replay: %w", id, err)
	}
	var d Delivery
	if err := attributevalue.UnmarshalMap(out.Attributes, &d); err != nil {
		return Delivery{}, fmt.Errorf("decode delivery %s: %w", id, err)
	}
	wasDead := d.State == delivery.StateDead
	// What the update wrote, on the item as it was.
	d.State, d.ReplayJob, d.ReplayClaimedAt, d.ReplayedAt = delivery.StatePending, job, &now, &now
	if wasDead {
		// It leaves the dead index: one less in its tenant's DLQ depth.
		if _, err := s.AdjustDLQDepth(ctx, d.TenantID, -1); err != nil {
			return d, fmt.Errorf("%w: %w", ErrDepthNotCounted, err)
		}
	}
	return d, nil
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

// ReplayJob is a replay of dead deliveries, run in steps by the replay
// worker, its progress checkpointed here after every step.
type ReplayJob struct {
	JobID string `json:"id" dynamodbav:"job_id"`
	// TenantID owns the job; empty for an operator's redrive of the whole DLQ.
	TenantID string `json:"-" dynamodbav:"tenant_id,omitempty"`
	// Kind is "ids", "filter" or "redrive".
	Kind   string     `json:"kind" dynamodbav:"kind"`
	IDs    []string   `json:"delivery_ids,omitempty" dynamodbav:"ids,omitempty"`
	Filter DeadFilter `json:"filter,omitzero" dynamodbav:"filter"`
	// Status: queued, running, completed.
	Status   string `json:"status" dynamodbav:"status"`
	Matched  int    `json:"matched" dynamodbav:"matched"`
	Replayed int    `json:"replayed" dynamodbav:"replayed"`
	Failed   int    `json:"failed" dynamodbav:"failed"`
	// Skipped counts deliveries left alone, by reason; SkippedIDs names the
	// first of them.
	Skipped    map[string]int    `json:"skipped" dynamodbav:"skipped"`
	SkippedIDs map[string]string `json:"skipped_ids,omitempty" dynamodbav:"skipped_ids,omitempty"`
	// Cursor is where the next step starts; Pending the ids of the step in
	// progress, processed again if the worker stopped inside it.
	Cursor  string   `json:"-" dynamodbav:"cursor,omitempty"`
	Pending []string `json:"-" dynamodbav:"pending,omitempty"`
	// Steps counts the steps run; Version guards against two workers.
	Steps       int        `json:"steps" dynamodbav:"steps"`
	Version     int        `json:"-" dynamodbav:"version"`
	CreatedAt   time.Time  `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at" dynamodbav:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty" dynamodbav:"completed_at,omitempty"`
}

func jobKey(id string) map[string]types.AttributeValue { return key("REPLAYJOB#"+id, "REPLAYJOB") }

// SaveJob writes a job: a new one (Version 0) only if it does not exist, an
// existing one only if nobody saved it since it was read (ErrConflict).
func (s *Store) SaveJob(ctx context.Context, j *ReplayJob) error {
	prev := j.Version
	j.Version++
	j.UpdatedAt = s.Now().UTC()
	if prev == 0 {
		j.CreatedAt = j.UpdatedAt
	}
	item, err := attributevalue.MarshalMap(j)
	if err != nil {
		j.Version = prev
		return fmt.Errorf("marshal replay job %s: %w", j.JobID, err)
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(j.CreatedAt.Add(s.Retention).Unix(), 10)}
	in := &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(item, jobKey(j.JobID))}
	if prev == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(prev)}}
	}
	_, err = s.db.PutItem(ctx, in)
	if isConditionFailed(err) {
		j.Version = prev
		return fmt.Errorf("replay job %s: %w", j.JobID, ErrConflict)
	}
	if err != nil {
		j.Version = prev
		return fmt.Errorf("save replay job %s: %w", j.JobID, err)
	}
	return nil
}

// Job reads a replay job, or ErrNotFound.
func (s *Store) Job(ctx context.Context, id string) (ReplayJob, error) {
	var j ReplayJob
	return j, s.get(ctx, jobKey(id), &j, "replay job "+id)
}
