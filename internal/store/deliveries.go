package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// creationAttributes are the attributes of a delivery record that only its
// creation sets: its ids, its creation time, its expiry and its delivery
// log keys. No call
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
	logAttributes(d, attrs, sortableTime(now)) // in the delivery log (IndexLog)
	return attrs
}

// Delivery reads one delivery, or ErrNotFound: its record, else (or over a
// record rowMayWin names) its row of an outcome page (packedDeliveries).
func (s *Store) Delivery(ctx context.Context, id string) (domain.Delivery, error) {
	d, err := s.record(ctx, id)
	if (err != nil && !errors.Is(err, ErrNotFound)) || (err == nil && !rowMayWin(d)) {
		return d, err
	}
	packed, perr := s.packedDeliveries(ctx, []string{id}, true)
	if perr != nil {
		return domain.Delivery{}, perr
	}
	if p, ok := packed[id]; ok {
		return p, nil
	}
	return d, err
}

// record reads delivery id's record, or ErrNotFound.
func (s *Store) record(ctx context.Context, id string) (domain.Delivery, error) {
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
//
// A write that took effect but whose answer was lost, which the SDK sends
// again, finds its own attempt in the record its failed condition returns,
// and is done: an attempt is counted once.
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
		if attemptLogged(cur, a) {
			// The change was this write: it took effect, its answer was
			// lost, and the SDK sent it again.
			return nil
		}
		o = cancelWins(d, cur, o)
	}
	return fmt.Errorf("record attempt %d of delivery %s: changed by others %d times in a row: %w", a.Number, d.DeliveryID, maxChangedTries, ErrConflict)
}

// cancelWins is the outcome of an attempt on a delivery read as d, whose
// record is now cur: a cancel that won while the attempt was under way
// keeps the delivery cancelled (the attempt is logged and counted, its
// outcome is not), so its message is dropped when it comes back. An
// attempt on a delivery read cancelled (a replay's, made after the
// cancel) moves it as any attempt does.
func cancelWins(d, cur domain.Delivery, o domain.Outcome) domain.Outcome {
	if cur.State == domain.StateCancelled && d.State != domain.StateCancelled {
		return domain.Outcome{State: domain.StateCancelled}
	}
	return o
}

// attemptLogged reports whether d's attempt log holds a already (the same
// number, time, answer and latency): a copy's attempts differ in their
// time at least.
func attemptLogged(d domain.Delivery, a domain.Attempt) bool {
	for _, e := range d.AttemptLog {
		if e.Number == a.Number && e.At.Equal(a.At) && e.Status == a.Status && e.Error == a.Error && e.LatencyMS == a.LatencyMS && e.Resend == a.Resend {
			return true
		}
	}
	return false
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
		set := "SET attempt_log = :log"
		cond := "#state = :delivered AND attribute_not_exists(resends)"
		if cur.Resends > 0 {
			cond = "#state = :delivered AND resends = :was"
			values[":was"] = &types.AttributeValueMemberN{Value: strconv.Itoa(cur.Resends)}
		}
		if cur.Packed {
			// Its row of an outcome page: the record is created from it,
			// the resend's entry in its log.
			set, cond = s.unpackSet(cur, values), "attribute_not_exists(pk)"
			delete(values, ":delivered") // DynamoDB refuses a value no expression uses
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.table, Key: deliveryKey(d.DeliveryID),
			UpdateExpression:          aws.String(set + " ADD resends :one"),
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
		if attemptLogged(cur, a) {
			return nil // this write, sent again after its answer was lost
		}
	}
	return fmt.Errorf("log resend attempt of delivery %s: changed by others %d times in a row: %w", d.DeliveryID, maxChangedTries, ErrConflict)
}

// unpackSet is the SET clause that writes the record of the packed
// delivery d (read from its row: delivered at its first attempt) as
// RecordFirstAttempts wrote records before the pages, its attempt log
// :log (already in values, with the entry to add); its values added.
func (s *Store) unpackSet(d domain.Delivery, values map[string]types.AttributeValue) string {
	item := s.creationAttributes(d, d.CreatedAt)
	item["state"] = &types.AttributeValueMemberS{Value: string(domain.StateDelivered)}
	item["last_status"] = &types.AttributeValueMemberN{Value: strconv.Itoa(d.LastStatus)}
	item["last_error"] = &types.AttributeValueMemberS{Value: d.LastError}
	item["attempts"] = &types.AttributeValueMemberN{Value: "1"}
	item["delivered_at"] = timeValue(d.CreatedAt)
	parts := []string{"attempt_log = :log"}
	for _, n := range slices.Sorted(maps.Keys(item)) {
		if n == "state" {
			parts = append(parts, "#state = :u_state")
		} else {
			parts = append(parts, n+" = :u_"+n)
		}
		values[":u_"+n] = item[n]
	}
	return "SET " + strings.Join(parts, ", ")
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
		cur, err = s.record(ctx, d.DeliveryID)
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
		":gpk":     &types.AttributeValueMemberS{Value: DeadPK(d.TenantID, d.DeliveryID)},
		":gsk":     &types.AttributeValueMemberS{Value: keys.TimeID(at, d.DeliveryID)},
		":expires": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)},
	}
	// Listed in the dead index (IndexDead), which does not copy the
	// message; out of gsi1's legacy dead partition, should it be there.
	set := "SET #state = :dead, dead_at = :now, dead_reason = :reason, message = :message, dead_pk = :gpk, dead_sk = :gsk, expires_at = :expires"
	created := s.creationAttributes(d, now)
	delete(created, "expires_at")
	for _, n := range slices.Sorted(maps.Keys(created)) {
		set += fmt.Sprintf(", %s = if_not_exists(%s, :c_%s)", n, n, n)
		values[":c_"+n] = created[n]
	}
	err := s.transition(ctx, &types.Update{
		TableName:                 &s.table,
		Key:                       deliveryKey(d.DeliveryID),
		UpdateExpression:          aws.String(set + " REMOVE gsi1pk, gsi1sk"),
		ConditionExpression:       aws.String("attribute_not_exists(#state) OR #state = :pending"),
		ExpressionAttributeNames:  map[string]string{"#state": "state"},
		ExpressionAttributeValues: values,
	}, d.TenantID, d.DeliveryID, 1, now)
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
	}, cur.TenantID, cur.DeliveryID, domain.DLQDepthDelta(cur.State, o.State), now)
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

// unlisted is what an update REMOVEs to take a delivery out of the dead
// list: the dead index's keys, and those of gsi1's legacy dead partition
// (deadSource).
const unlisted = "dead_pk, dead_sk, gsi1pk, gsi1sk"

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
		tail += " REMOVE " + unlisted + ", message, dead_reason, dead_at"
	case domain.StatePending:
		// A retry: not dead, so not listed as dead (another copy of the
		// delivery may have been recorded dead meanwhile).
		tail += " REMOVE " + unlisted
	case domain.StateDead:
		// In the dead index; out of gsi1's legacy dead partition.
		tail += " REMOVE gsi1pk, gsi1sk"
		set += ", dead_at = :now, dead_reason = :reason, dead_pk = :gpk, dead_sk = :gsk, expires_at = :expires"
		values[":now"] = timeValue(a.At)
		values[":expires"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)}
		if o.Message != "" {
			set += ", message = :message"
			values[":message"] = &types.AttributeValueMemberS{Value: o.Message}
		}
		values[":reason"] = &types.AttributeValueMemberS{Value: string(o.DeadReason)}
		values[":gpk"] = &types.AttributeValueMemberS{Value: DeadPK(cur.TenantID, cur.DeliveryID)}
		values[":gsk"] = &types.AttributeValueMemberS{Value: keys.TimeID(a.At, cur.DeliveryID)}
	}
	return set, tail
}
