package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// ErrNotFound is returned when an item does not exist.
var ErrNotFound = errors.New("not found")

// DynamoDB is the part of the DynamoDB client the store uses.
type DynamoDB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// Store reads and writes the state table.
type Store struct {
	db    DynamoDB
	table string
	// Retention is how long delivery, rejection and replay job records
	// live (TTL), counted from their creation and, for a delivery that
	// dies, again from its death. Default 15 days: a day longer than the
	// DLQ keeps a message (14 days from its send, at most), so a dead
	// delivery's record, its listing and its replay outlive its message.
	Retention time.Duration
	// DepthSettle is how long a tenant's DLQ depth counter must have stood
	// still before ReconcileDLQDepth trusts the dead index (eventually
	// consistent) over it. Default one minute.
	DepthSettle time.Duration
	// StatsRetention is how long an endpoint's hour bucket of attempt
	// counters lives (TTL), counted from its hour's start. Default
	// DefaultStatsRetention (35 days).
	StatsRetention time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// DefaultRetention is a new Store's Retention: 15 days.
const DefaultRetention = 15 * 24 * time.Hour

// New returns a store on table.
func New(db DynamoDB, table string) *Store {
	return &Store{db: db, table: table, Retention: DefaultRetention, DepthSettle: DefaultDepthSettle, StatsRetention: DefaultStatsRetention, Now: time.Now}
}

// PutEndpoint creates or replaces an endpoint.
func (s *Store) PutEndpoint(ctx context.Context, e domain.Endpoint) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.Now().UTC()
	}
	item, err := attributevalue.MarshalMap(e)
	if err != nil {
		return fmt.Errorf("marshal endpoint %s: %w", e.EndpointID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(item, endpointKey(e.TenantID, e.EndpointID))})
	if err != nil {
		return fmt.Errorf("put endpoint %s: %w", e.EndpointID, err)
	}
	return nil
}

// Endpoint reads one endpoint of a tenant, or ErrNotFound.
func (s *Store) Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: endpointKey(tenantID, endpointID)})
	if err != nil {
		return domain.Endpoint{}, fmt.Errorf("get endpoint %s: %w", endpointID, err)
	}
	if out.Item == nil {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s of tenant %s: %w", endpointID, tenantID, ErrNotFound)
	}
	var e domain.Endpoint
	if err := attributevalue.UnmarshalMap(out.Item, &e); err != nil {
		return domain.Endpoint{}, fmt.Errorf("decode endpoint %s: %w", endpointID, err)
	}
	return e, nil
}

// Endpoints lists every endpoint of a tenant.
func (s *Store) Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error) {
	var out []domain.Endpoint
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: keys.Tenant(tenantID)},
			":sk": &types.AttributeValueMemberS{Value: keys.EndpointPrefix},
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list endpoints of tenant %s: %w", tenantID, err)
		}
		var es []domain.Endpoint
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &es); err != nil {
			return nil, fmt.Errorf("decode endpoints of tenant %s: %w", tenantID, err)
		}
		out = append(out, es...)
	}
	return out, nil
}

// creationAttributes are the attributes of a delivery record that only its
// creation sets: its ids, its creation time and its expiry. No call
// creates a delivery on its own: its first attempt does (RecordAttempt
// writes them, each only where absent), so the record a delivery's first
// attempt writes is complete. An id that is empty is left out.
func (s *Store) creationAttributes(d domain.Delivery, now time.Time) map[string]types.AttributeValue {
	at, _ := attributevalue.Marshal(now) // as MarshalMap writes CreatedAt
	attrs := map[string]types.AttributeValue{
		"created_at": at,
		"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)},
	}
	str := func(name, v string) {
		if v != "" {
			attrs[name] = &types.AttributeValueMemberS{Value: v}
		}
	}
	str("delivery_id", d.DeliveryID)
	str("tenant_id", d.TenantID)
	str("endpoint_id", d.EndpointID)
	str("event_id", d.EventID)
	str("event_type", d.EventType)
	return attrs
}

// Delivery reads one delivery, or ErrNotFound.
func (s *Store) Delivery(ctx context.Context, id string) (domain.Delivery, error) {
	var d domain.Delivery
	err := s.get(ctx, deliveryKey(id), &d, "delivery "+id)
	return d, err
}

// MaxAttemptLog is how many attempts a delivery's log keeps: the newest.
const MaxAttemptLog = 20

// RecordAttempt adds an attempt to a delivery and moves it to the outcome's
// state. d is the delivery as read before the attempt (its ids alone, with
// no state, when it had no record). The write is conditional on the record
// being as d says (see RecordAttemptIfUnchanged); when it is not (another
// copy of the delivery recorded an attempt meanwhile, a replay claimed it,
// or its death was recorded before this last attempt), the record is read
// again and the attempt applied to it as it is, so that concurrent
// duplicate attempts lose no log entry and each is counted. A delivered
// delivery never moves back: an attempt on one changes nothing. After a few
// conflicts in a row, the error wraps ErrConflict.
//
// The attempt's log entry is appended, the log kept to the newest
// MaxAttemptLog entries, and the attempt counter counts every attempt,
// replays included. The first attempt of a delivery creates its record
// (enqueue writes none), written whole: d's ids, its creation time and its
// expiry, each only where absent, so a later attempt keeps them. A delivery
// that dies gets a new expiry, Retention after its death: its message then
// enters the DLQ, which keeps it 14 days, and the record (the tenant's DLQ
// listing, the replay's copy of the message) must outlive it. A move into
// or out of dead moves the tenant's DLQ depth in the same transaction.
func (s *Store) RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	cur := d
	for try := 0; try < maxChangedTries; try++ {
		err := s.recordAttempt(ctx, cur, a, o)
		var changed *changedError
		if !errors.As(err, &changed) {
			return err
		}
		if cur, err = s.reread(ctx, d, changed.item); err != nil {
			return err
		}
	}
	return fmt.Errorf("record attempt %d of delivery %s: changed by others %d times in a row: %w", a.Number, d.DeliveryID, maxChangedTries, ErrConflict)
}

// RecordAttemptIfUnchanged is RecordAttempt for a caller whose outcome
// depends on the record as it read it: the attempt is recorded only if the
// record is still as d says, that is absent when d has no state (d's ids
// alone: the delivery had no record), else in d's state after d's number of
// attempts. Otherwise nothing is written and the error wraps ErrConflict:
// the caller reads the delivery again and decides anew. (A delivered d
// changes nothing, as for RecordAttempt.)
func (s *Store) RecordAttemptIfUnchanged(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	err := s.recordAttempt(ctx, d, a, o)
	var changed *changedError
	if errors.As(err, &changed) {
		return fmt.Errorf("record attempt %d of delivery %s: it changed since it was read: %w", a.Number, d.DeliveryID, ErrConflict)
	}
	return err
}

// RecordResendAttempt logs attempt a of a resend of the delivered delivery
// d (a.Resend set): the attempt log gains the entry, and nothing else
// changes but the count of resend attempts (the state stays delivered, the
// attempt count and last status are the delivery's own). One UpdateItem conditional on the record being
// delivered with as many resend attempts as read (Resends, which it
// counts); a record that changed is taken as the failed condition returns
// it and the entry appended to it. A record that is not delivered
// (or gone) is ErrNotFound: a resend logs only on a delivered delivery.
func (s *Store) RecordResendAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt) error {
	a.Resend = true
	cur := d
	for try := 0; try < maxChangedTries; try++ {
		if cur.State != domain.StateDelivered {
			return fmt.Errorf("log resend attempt of delivery %s (%s): %w", d.DeliveryID, cur.State, ErrNotFound)
		}
		logAV, err := attemptLogValue(cur.AttemptLog, a)
		if err != nil {
			return err
		}
		values := map[string]types.AttributeValue{
			":log": logAV, ":one": &types.AttributeValueMemberN{Value: "1"}, ":delivered": &types.AttributeValueMemberS{Value: string(domain.StateDelivered)},
		}
		cond := "#state = :delivered AND attribute_not_exists(resends)"
		if cur.Resends > 0 {
			cond = "#state = :delivered AND resends = :was"
			values[":was"] = &types.AttributeValueMemberN{Value: strconv.Itoa(cur.Resends)}
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.table, Key: deliveryKey(d.DeliveryID),
			UpdateExpression:          aws.String("SET attempt_log = :log ADD resends :one"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#state": "state"},
			ExpressionAttributeValues: values,
			// The record as it is, when it is not as read.
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			if err != nil {
				return fmt.Errorf("log resend attempt of delivery %s: %w", d.DeliveryID, err)
			}
			return nil
		}
		if cur, err = s.reread(ctx, d, ccf.Item); err != nil {
			return fmt.Errorf("log resend attempt of delivery %s: %w", d.DeliveryID, err)
		}
	}
	return fmt.Errorf("log resend attempt of delivery %s: changed by others %d times in a row: %w", d.DeliveryID, maxChangedTries, ErrConflict)
}

// maxChangedTries bounds how often a write conditional on a record as read
// is tried again on the record as it has become.
const maxChangedTries = 5

// changedError says that a delivery's record was not as the write expected:
// item is the record as it is (nil if there is none, or none was returned).
type changedError struct {
	item map[string]types.AttributeValue
}

func (e *changedError) Error() string { return "the delivery's record changed since it was read" }

// reread returns a delivery's record as a failed condition returned it, or
// as read now; the ids of d alone (no state) if it has none.
func (s *Store) reread(ctx context.Context, d domain.Delivery, item map[string]types.AttributeValue) (domain.Delivery, error) {
	var cur domain.Delivery
	if item == nil {
		var err error
		cur, err = s.Delivery(ctx, d.DeliveryID)
		if errors.Is(err, ErrNotFound) {
			return domain.Delivery{DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType}, nil
		}
		if err != nil {
			return domain.Delivery{}, err
		}
	} else if err := attributevalue.UnmarshalMap(item, &cur); err != nil {
		return domain.Delivery{}, fmt.Errorf("decode delivery %s: %w", d.DeliveryID, err)
	}
	// A record written by an earlier version may lack an id.
	for _, f := range []struct {
		got  *string
		want string
	}{
		{&cur.DeliveryID, d.DeliveryID}, {&cur.TenantID, d.TenantID}, {&cur.EndpointID, d.EndpointID}, {&cur.EventID, d.EventID}, {&cur.EventType, d.EventType},
	} {
		if *f.got == "" {
			*f.got = f.want
		}
	}
	return cur, nil
}

// expected returns the condition that a delivery's record is still as cur
// was read: absent when cur has no state, else in cur's state after cur's
// number of attempts. The attempt counter versions the attempt log: only an
// attempt changes the log, and every attempt adds one to the counter. The
// state fixes what the write does to the tenant's DLQ depth.
func expected(cur domain.Delivery, names map[string]string, values map[string]types.AttributeValue) string {
	if cur.State == "" {
		return "attribute_not_exists(pk)"
	}
	names["#state"] = "state"
	values[":was"] = &types.AttributeValueMemberS{Value: string(cur.State)}
	if cur.Attempts == 0 {
		return "#state = :was AND attribute_not_exists(attempts)"
	}
	values[":was_attempts"] = &types.AttributeValueMemberN{Value: strconv.Itoa(cur.Attempts)}
	return "#state = :was AND attempts = :was_attempts"
}

// depthDelta is what a move from one state to another does to the tenant's
// DLQ depth.
func depthDelta(from, to domain.DeliveryState) int {
	n := 0
	if to == domain.StateDead {
		n++
	}
	if from == domain.StateDead {
		n--
	}
	return n
}

// MarkDeadBeforeLastAttempt records a pending (or not yet recorded)
// delivery dead, with its message, before its last attempt is made: if the
// process stops during that attempt, SQS moves the message to the DLQ on its
// next receive without the function seeing it again, and the record already
// says what happened, so the tenant sees the delivery and can replay it. The
// attempt's own RecordAttempt then writes the real outcome: dead again
// (counted once), or delivered (the count taken back). A delivery already
// delivered or dead is left alone. The death and its count are one
// transaction.
func (s *Store) MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error {
	now := s.Now().UTC()
	values := map[string]types.AttributeValue{
		":dead":    &types.AttributeValueMemberS{Value: string(domain.StateDead)},
		":pending": &types.AttributeValueMemberS{Value: string(domain.StatePending)},
		":now":     timeValue(at),
		":reason":  &types.AttributeValueMemberS{Value: string(reason)},
		":message": &types.AttributeValueMemberS{Value: message},
		":gpk":     &types.AttributeValueMemberS{Value: keys.TenantIndex(d.TenantID, "DEAD")},
		":gsk":     &types.AttributeValueMemberS{Value: sortableTime(at) + "#" + d.DeliveryID},
		":expires": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)},
	}
	set := "SET #state = :dead, dead_at = :now, dead_reason = :reason, message = :message, gsi1pk = :gpk, gsi1sk = :gsk, expires_at = :expires"
	created := s.creationAttributes(d, now)
	delete(created, "expires_at")
	for _, n := range slices.Sorted(maps.Keys(created)) {
		set += fmt.Sprintf(", %s = if_not_exists(%s, :c_%s)", n, n, n)
		values[":c_"+n] = created[n]
	}
	err := s.transition(ctx, &types.Update{
		TableName:                 &s.table,
		Key:                       deliveryKey(d.DeliveryID),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("attribute_not_exists(#state) OR #state = :pending"),
		ExpressionAttributeNames:  map[string]string{"#state": "state"},
		ExpressionAttributeValues: values,
	}, d.TenantID, 1, now)
	var changed *changedError
	if errors.As(err, &changed) {
		return nil // delivered or dead already
	}
	if err != nil {
		return fmt.Errorf("record delivery %s dead before its last attempt: %w", d.DeliveryID, err)
	}
	return nil
}

// recordAttempt writes the attempt on the record as cur says it is, or
// returns a *changedError when it is not.
func (s *Store) recordAttempt(ctx context.Context, cur domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	if cur.State == domain.StateDelivered {
		return nil // a late duplicate attempt changes nothing, the count included
	}
	logAV, err := attemptLogValue(cur.AttemptLog, a)
	if err != nil {
		return err
	}
	names := map[string]string{"#state": "state"}
	values := map[string]types.AttributeValue{
		":state":  &types.AttributeValueMemberS{Value: string(o.State)},
		":one":    &types.AttributeValueMemberN{Value: "1"},
		":log":    logAV,
		":status": &types.AttributeValueMemberN{Value: strconv.Itoa(a.Status)},
		":error":  &types.AttributeValueMemberS{Value: a.Error},
	}
	now := s.Now().UTC()
	set := "SET #state = :state, last_status = :status, last_error = :error, attempt_log = :log" +
		s.setIfCreated(cur, o, now, values)
	outcomeSet, tail := s.outcomeUpdate(cur, a, o, now, values)
	cond := expected(cur, names, values)
	err = s.transition(ctx, &types.Update{
		TableName:                 &s.table,
		Key:                       deliveryKey(cur.DeliveryID),
		UpdateExpression:          aws.String(set + outcomeSet + tail),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, cur.TenantID, depthDelta(cur.State, o.State), now)
	var changed *changedError
	if err != nil && !errors.As(err, &changed) {
		return fmt.Errorf("record attempt %d of delivery %s: %w", a.Number, cur.DeliveryID, err)
	}
	return err
}

// attemptLogValue is the attempt log with a appended, its oldest entries
// dropped past MaxAttemptLog, as an attribute value.
func attemptLogValue(prev []domain.Attempt, a domain.Attempt) (types.AttributeValue, error) {
	log := append(append([]domain.Attempt(nil), prev...), a)
	if len(log) > MaxAttemptLog {
		log = log[len(log)-MaxAttemptLog:]
	}
	logAV, err := attributevalue.Marshal(log)
	if err != nil {
		return nil, fmt.Errorf("marshal attempt log: %w", err)
	}
	return logAV, nil
}

// setIfCreated is the update's SET clauses that write the record's creation
// attributes where they are missing: the first attempt creates the record,
// an upsert, one write. Their values go into values.
func (s *Store) setIfCreated(cur domain.Delivery, o domain.Outcome, now time.Time, values map[string]types.AttributeValue) string {
	created := s.creationAttributes(cur, now)
	if o.State == domain.StateDead {
		delete(created, "expires_at") // set by outcomeUpdate, from the death
	}
	set := ""
	for _, n := range slices.Sorted(maps.Keys(created)) {
		set += fmt.Sprintf(", %s = if_not_exists(%s, :c_%s)", n, n, n)
		values[":c_"+n] = created[n]
	}
	return set
}

// outcomeUpdate is the update's further SET clauses and its ADD and REMOVE
// tail for the outcome o of attempt a. Their values go into values.
func (s *Store) outcomeUpdate(cur domain.Delivery, a domain.Attempt, o domain.Outcome, now time.Time, values map[string]types.AttributeValue) (set, tail string) {
	tail = " ADD attempts :one"
	switch o.State {
	case domain.StateDelivered:
		set += ", delivered_at = :now"
		values[":now"] = timeValue(a.At)
		// Out of the dead index; the stored message and the death's reason
		// went with it (a death recorded before a last attempt that then
		// succeeded, or a replayed delivery).
		tail += " REMOVE gsi1pk, gsi1sk, message, dead_reason, dead_at"
	case domain.StatePending:
		// A retry: not dead, so not listed as dead (another copy of the
		// delivery may have been recorded dead meanwhile).
		tail += " REMOVE gsi1pk, gsi1sk"
	case domain.StateDead:
		set += ", dead_at = :now, dead_reason = :reason, gsi1pk = :gpk, gsi1sk = :gsk, expires_at = :expires"
		values[":now"] = timeValue(a.At)
		values[":expires"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)}
		if o.Message != "" {
			set += ", message = :message"
			values[":message"] = &types.AttributeValueMemberS{Value: o.Message}
		}
		values[":reason"] = &types.AttributeValueMemberS{Value: string(o.DeadReason)}
		values[":gpk"] = &types.AttributeValueMemberS{Value: keys.TenantIndex(cur.TenantID, "DEAD")}
		values[":gsk"] = &types.AttributeValueMemberS{Value: sortableTime(a.At) + "#" + cur.DeliveryID}
	}
	return set, tail
}

// PutRejection records a rejected outbox item (idempotently: the same item
// rejected twice is one record).
func (s *Store) PutRejection(ctx context.Context, r domain.Rejection) error {
	now := s.Now().UTC()
	r.RejectedAt = now
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("marshal rejection %s: %w", r.Key, err)
	}
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)}
	if r.TenantID != "" {
		item["gsi1pk"] = &types.AttributeValueMemberS{Value: keys.TenantIndex(r.TenantID, "REJECTED")}
		item["gsi1sk"] = &types.AttributeValueMemberS{Value: sortableTime(now) + "#" + r.Key}
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: withKey(item, key(keys.Rejected(r.Key), "REJECTED"))})
	if err != nil {
		return fmt.Errorf("put rejection %s: %w", r.Key, err)
	}
	return nil
}

// Rejection reads a rejection record by its key, or ErrNotFound.
func (s *Store) Rejection(ctx context.Context, k string) (domain.Rejection, error) {
	var r domain.Rejection
	err := s.get(ctx, key(keys.Rejected(k), "REJECTED"), &r, "rejection "+k)
	return r, err
}

// sortableFormat is RFC 3339 with a fixed nine-digit fraction, so that times
// compare as strings in time order (RFC3339Nano drops trailing zeros, and
// "05Z" sorts after "05.1Z").
const sortableFormat = "2006-01-02T15:04:05.000000000Z07:00"

func sortableTime(t time.Time) string { return t.UTC().Format(sortableFormat) }

func timeValue(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: sortableTime(t)}
}

// DisableEndpoint turns an endpoint off, with the reason, so no further
// deliveries are sent to it until it is enabled again. It reports whether
// this call disabled it (false: it was disabled already, and keeps its
// reason and time). It sets disabled_at, and failing_since when not set, so
// the first success after the endpoint is enabled again is a recovery.
func (s *Store) DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	disabled, err := s.setDisabled(ctx, tenantID, endpointID, reason)
	if err != nil {
		return false, fmt.Errorf("disable endpoint %s: %w", endpointID, err)
	}
	return disabled, nil
}

// setDisabled marks an existing endpoint disabled for reason at now, and
// failing since now unless it already was, and reports whether this call
// disabled it. An endpoint disabled already keeps its reason and time (an
// enable removes both).
func (s *Store) setDisabled(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression: aws.String("SET disabled = :t, disabled_reason = if_not_exists(disabled_reason, :r), " +
			"disabled_at = if_not_exists(disabled_at, :now), failing_since = if_not_exists(failing_since, :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t":   &types.AttributeValueMemberBOOL{Value: true},
			":r":   &types.AttributeValueMemberS{Value: string(reason)},
			":now": timeValue(s.Now()),
		},
		ReturnValues: types.ReturnValueUpdatedOld,
	})
	if err != nil {
		return false, err
	}
	was, _ := out.Attributes["disabled"].(*types.AttributeValueMemberBOOL)
	return was == nil || !was.Value, nil
}

// updateExistingEndpoint runs in against an endpoint's item (table and key
// set here) only if the item exists, so that an update never creates a
// partial endpoint: in's ConditionExpression, if any, must hold as well.
func (s *Store) updateExistingEndpoint(ctx context.Context, tenantID, endpointID string, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	cond := "attribute_exists(pk)"
	if in.ConditionExpression != nil {
		cond += " AND " + *in.ConditionExpression
	}
	in.TableName, in.Key, in.ConditionExpression = &s.table, endpointKey(tenantID, endpointID), aws.String(cond)
	return s.db.UpdateItem(ctx, in)
}

// HealthThresholds are what counting a failed attempt against an endpoint
// weighs: the consecutive failed attempts at which it is marked failing
// (and its circuit breaker opens) and disabled (0 or less: never), how long
// the run must have lasted to disable it, and the breaker's policy.
type HealthThresholds struct {
	FailingAfter, DisableAfter int
	// DisableAfterFor is how long the run of consecutive failures must have
	// lasted (from its first failure, failures_since), besides reaching
	// DisableAfter, for the endpoint to be disabled. 0: no time.
	DisableAfterFor time.Duration
	// Breaker is the circuit breaker's policy (its zero value: the
	// defaults).
	Breaker domain.Breaker
	// Probe says the failed attempt was the breaker's probe: the breaker
	// opens again, for a longer cooldown. A failure that is not the probe
	// (a request sent before the breaker opened) leaves an open breaker as
	// it is.
	Probe bool
	// Retryable says the failure was one the retry schedule retries (a
	// timeout, a network error, 408, 429, 5xx): only such failures open
	// the breaker. A permanent failure (a 4xx rejection, dead at once)
	// counts toward the run and the failing mark, never the breaker: an
	// endpoint that answers at once holds no capacity.
	Retryable bool
}

// FailureEffect is what counting a failed attempt did to its endpoint.
type FailureEffect struct {
	// Failures is the endpoint's run of consecutive failures, this one
	// included.
	Failures int
	// Failing is true when this call marked the endpoint failing (the run
	// reached FailingAfter and it was not marked): FailingSince is the
	// mark.
	Failing      bool
	FailingSince time.Time
	// BreakerUntil is set when this call opened the endpoint's circuit
	// breaker (at FailingAfter) or opened it again (a failed probe): the
	// next probe's time.
	BreakerUntil *time.Time
	// Disabled is true when this call disabled the endpoint (the run
	// reached DisableAfter, lasted DisableAfterFor, and it was enabled):
	// DisabledAt is when.
	Disabled   bool
	DisabledAt time.Time
}

// RecordEndpointFailure counts a failed attempt against an endpoint (and
// starts its run's clock, failures_since, on the run's first), opens its
// circuit breaker and marks it failing (failing_since) when the count
// reaches th.FailingAfter, opens the breaker again for a doubled cooldown
// when the failure is the probe's (th.Probe), and disables it when the
// count reaches th.DisableAfter and the run has lasted th.DisableAfterFor.
// Each transition is a conditional write, so it happens once however many
// attempts fail at once. A count below the thresholds is one write.
func (s *Store) RecordEndpointFailure(ctx context.Context, tenantID, endpointID string, th HealthThresholds) (FailureEffect, error) {
	var fx FailureEffect
	now := s.Now()
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String("ADD consecutive_failures :one SET failures_since = if_not_exists(failures_since, :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}, ":now": timeValue(now)},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return fx, fmt.Errorf("count failure of endpoint %s: %w", endpointID, err)
	}
	var ep domain.Endpoint
	if err := attributevalue.UnmarshalMap(out.Attributes, &ep); err != nil {
		return fx, fmt.Errorf("endpoint %s: %w", endpointID, err)
	}
	fx.Failures = ep.ConsecutiveFailures
	if th.FailingAfter > 0 && fx.Failures >= th.FailingAfter {
		if err := s.tripBreaker(ctx, ep, th, now, &fx); err != nil {
			return fx, err
		}
	}
	if th.DisableAfter <= 0 || fx.Failures < th.DisableAfter || ep.FailuresSince == nil || now.Sub(*ep.FailuresSince) < th.DisableAfterFor {
		return fx, nil
	}
	disabled, err := s.setDisabled(ctx, tenantID, endpointID, domain.DisabledConsecutiveFailures)
	if err != nil {
		return fx, fmt.Errorf("disable endpoint %s: %w", endpointID, err)
	}
	if disabled {
		fx.Disabled, fx.DisabledAt = true, now.UTC()
	}
	return fx, nil
}

// tripBreaker marks ep (as the failure count left it) failing, and for a
// retryable failure opens its circuit breaker when it is closed, or, for a
// failed probe, opens it again for the next cooldown. Both are conditional on the
// breaker as read: of concurrent callers, one moves it.
func (s *Store) tripBreaker(ctx context.Context, ep domain.Endpoint, th HealthThresholds, now time.Time, fx *FailureEffect) error {
	in := &dynamodb.UpdateItemInput{}
	var until time.Time
	switch {
	case !th.Retryable && ep.FailingSince == nil:
		in.UpdateExpression = aws.String("SET failing_since = :now")
		in.ConditionExpression = aws.String("attribute_not_exists(failing_since)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":now": timeValue(now)}
	case !th.Retryable:
		return nil
	case ep.BreakerUntil == nil:
		until = now.Add(th.Breaker.Open(0))
		in.UpdateExpression = aws.String("SET breaker_until = :until, breaker_trips = :zero, failing_since = if_not_exists(failing_since, :now)")
		in.ConditionExpression = aws.String("attribute_not_exists(breaker_until)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":until": timeValue(until), ":zero": &types.AttributeValueMemberN{Value: "0"}, ":now": timeValue(now)}
	case th.Probe:
		until = now.Add(th.Breaker.Open(ep.BreakerTrips + 1))
		in.UpdateExpression = aws.String("SET breaker_until = :until, breaker_trips = :next")
		in.ConditionExpression = aws.String("breaker_until = :was")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":until": timeValue(until), ":was": timeValue(*ep.BreakerUntil), ":next": &types.AttributeValueMemberN{Value: strconv.Itoa(ep.BreakerTrips + 1)}}
	default:
		return nil // open already, and this is no probe's failure
	}
	_, err := s.updateExistingEndpoint(ctx, ep.TenantID, ep.EndpointID, in)
	switch {
	case isConditionFailed(err): // moved by another attempt
		return nil
	case err != nil:
		return fmt.Errorf("open the circuit breaker of endpoint %s: %w", ep.EndpointID, err)
	}
	if th.Retryable {
		u := until.UTC()
		fx.BreakerUntil = &u
	}
	if ep.BreakerUntil == nil && ep.FailingSince == nil {
		fx.Failing, fx.FailingSince = true, now.UTC()
	}
	return nil
}

// ResetEndpointFailures sets an endpoint's consecutive failure count to
// zero after a success, closes its circuit breaker and clears its failing
// mark. recovered is the mark
// this call cleared (the episode's start), nil when there was none: of
// concurrent successes, one recovers the endpoint.
func (s *Store) ResetEndpointFailures(ctx context.Context, tenantID, endpointID string) (recovered *time.Time, err error) {
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String("SET consecutive_failures = :zero REMOVE failing_since, failures_since, breaker_until, breaker_trips"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":zero": &types.AttributeValueMemberN{Value: "0"}},
		ReturnValues:              types.ReturnValueUpdatedOld,
	})
	if err != nil {
		return nil, fmt.Errorf("reset failures of endpoint %s: %w", endpointID, err)
	}
	if v, ok := out.Attributes["failing_since"].(*types.AttributeValueMemberS); ok {
		t, perr := time.Parse(sortableFormat, v.Value)
		if perr != nil {
			return nil, fmt.Errorf("endpoint %s: failing_since %q: %w", endpointID, v.Value, perr)
		}
		return &t, nil
	}
	return nil, nil
}
