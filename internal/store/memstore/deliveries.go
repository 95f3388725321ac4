package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// PutDelivery writes a delivery's record as given, for a test to start
// from: not a store method. A delivery with a CreatedAt is in the delivery
// log under it, a dead delivery with a DeadAt is in the dead index, and a move into or out of dead moves its tenant's DLQ depth, as
// the attempt that left it so would have.
func (s *Store) PutDelivery(d domain.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.deliveries[d.DeliveryID]
	s.deliveries[d.DeliveryID] = copyOf(d)
	delete(s.dead, d.DeliveryID)
	if !d.CreatedAt.IsZero() {
		s.logged[d.DeliveryID] = deadEntry{d.TenantID, keys.TimeID(d.CreatedAt, d.DeliveryID)}
	}
	if d.State == domain.StateDead && d.DeadAt != nil {
		s.dead[d.DeliveryID] = deadEntry{d.TenantID, keys.TimeID(*d.DeadAt, d.DeliveryID)}
	}
	s.move(d.TenantID, domain.DLQDepthDelta(old.State, d.State))
}

// InDeadIndex reports whether a delivery is in the dead index: for a
// test's assertions, not a store method.
func (s *Store) InDeadIndex(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.dead[id]
	return ok
}

// Delivery reads one delivery, or store.ErrNotFound.
func (s *Store) Delivery(_ context.Context, id string) (domain.Delivery, error) {
	if err := checkKey(keys.Delivery(id), "DELIVERY"); err != nil {
		return domain.Delivery{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[id]
	if !ok {
		return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return copyOf(d), nil
}

// unchanged reports whether the stored record is as cur was read: absent
// when cur has no state, else in cur's state after cur's attempts.
func unchanged(rec domain.Delivery, exists bool, cur domain.Delivery) bool {
	if cur.State == "" {
		return !exists
	}
	return exists && rec.State == cur.State && rec.Attempts == cur.Attempts
}

// created fills what only a record's creation writes, where absent: its
// ids (from d) and its creation time.
func created(rec *domain.Delivery, d domain.Delivery, now time.Time) {
	for _, f := range []struct {
		got  *string
		want string
	}{
		{&rec.DeliveryID, d.DeliveryID}, {&rec.TenantID, d.TenantID}, {&rec.EndpointID, d.EndpointID}, {&rec.EventID, d.EventID}, {&rec.EventType, d.EventType},
	} {
		if *f.got == "" {
			*f.got = f.want
		}
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
}

// RecordAttempt adds an attempt to a delivery and moves it to the outcome's
// state, on the record as d says it is or, when it is not, on the record as
// it is (no attempt is lost). A delivered delivery never moves. A move into
// or out of dead moves the tenant's DLQ depth.
func (s *Store) RecordAttempt(_ context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.State == domain.StateDelivered {
		return nil
	}
	cur := d
	if rec, exists := s.deliveries[d.DeliveryID]; !unchanged(rec, exists, d) {
		if exists {
			cur = copyOf(rec)
			created(&cur, d, cur.CreatedAt)
		} else {
			cur = domain.Delivery{DeliveryID: d.DeliveryID, TenantID: d.TenantID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType}
		}
		if cur.State == domain.StateCancelled && d.State != domain.StateCancelled {
			// The cancel won while the attempt was under way: logged and
			// counted, the delivery stays cancelled.
			o = domain.Outcome{State: domain.StateCancelled}
		}
	}
	s.record(cur, a, o)
	return nil
}

// CancelDelivery marks a pending delivery, or one without a record (d's
// ids), cancelled by job at; a delivered, dead or cancelled one is left
// alone and returned as it is (see store.Store.CancelDelivery).
func (s *Store) CancelDelivery(_ context.Context, d domain.Delivery, job string, at time.Time) (domain.Delivery, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, exists := s.deliveries[d.DeliveryID]
	if exists && rec.State != domain.StatePending {
		return copyOf(rec), false, nil
	}
	rec.State, rec.CancelledAt, rec.CancelledBy = domain.StateCancelled, stamp(at), job
	created(&rec, d, s.now())
	s.deliveries[d.DeliveryID] = copyOf(rec)
	return domain.Delivery{}, true, nil
}

// RecordResendAttempt logs attempt a of a resend of the delivered delivery
// d, marked Resend, changing nothing else; store.ErrNotFound when the
// delivery is not delivered (or missing).
func (s *Store) RecordResendAttempt(_ context.Context, d domain.Delivery, a domain.Attempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.deliveries[d.DeliveryID]
	if !ok || rec.State != domain.StateDelivered {
		return fmt.Errorf("log resend attempt of delivery %s: %w", d.DeliveryID, store.ErrNotFound)
	}
	a.Resend = true
	log := append(slices.Clone(rec.AttemptLog), a)
	if len(log) > store.MaxAttemptLog {
		log = log[len(log)-store.MaxAttemptLog:]
	}
	rec.AttemptLog = log
	rec.Resends++
	s.deliveries[d.DeliveryID] = rec
	return nil
}

// RecordAttemptIfUnchanged records the attempt only on the record as d
// says it is; otherwise nothing is written and the error wraps
// store.ErrConflict. A delivered d changes nothing.
func (s *Store) RecordAttemptIfUnchanged(_ context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.State == domain.StateDelivered {
		return nil
	}
	if rec, exists := s.deliveries[d.DeliveryID]; !unchanged(rec, exists, d) {
		return fmt.Errorf("record attempt %d of delivery %s: it changed since it was read: %w", a.Number, d.DeliveryID, store.ErrConflict)
	}
	s.record(d, a, o)
	return nil
}

// record writes an attempt on the record cur, which is as stored (or
// absent, cur's ids alone). The caller holds the lock.
func (s *Store) record(cur domain.Delivery, a domain.Attempt, o domain.Outcome) {
	if cur.State == domain.StateDelivered {
		return
	}
	now := s.now()
	rec := s.deliveries[cur.DeliveryID]
	log := append(slices.Clone(cur.AttemptLog), a)
	if len(log) > store.MaxAttemptLog {
		log = log[len(log)-store.MaxAttemptLog:]
	}
	rec.State, rec.LastStatus, rec.LastError, rec.AttemptLog = o.State, a.Status, a.Error, log
	created(&rec, cur, now)
	s.logCreated(rec, now)
	rec.Attempts++
	switch o.State {
	case domain.StateDelivered:
		rec.DeliveredAt = stamp(a.At)
		rec.Message, rec.DeadReason, rec.DeadAt = "", "", nil
		delete(s.dead, cur.DeliveryID)
	case domain.StatePending:
		delete(s.dead, cur.DeliveryID)
	case domain.StateDead:
		rec.DeadAt, rec.DeadReason = stamp(a.At), o.DeadReason
		if o.Message != "" {
			rec.Message = o.Message
		}
		s.dead[cur.DeliveryID] = deadEntry{cur.TenantID, keys.TimeID(a.At, cur.DeliveryID)}
	}
	s.deliveries[cur.DeliveryID] = copyOf(rec)
	s.move(cur.TenantID, domain.DLQDepthDelta(cur.State, o.State))
}

// MarkDeadBeforeLastAttempt records a pending (or not yet recorded)
// delivery dead, with its message, listed and counted; a delivered or dead
// one is left alone.
func (s *Store) MarkDeadBeforeLastAttempt(_ context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, exists := s.deliveries[d.DeliveryID]
	if exists && rec.State != "" && rec.State != domain.StatePending {
		return nil
	}
	rec.State, rec.DeadAt, rec.DeadReason, rec.Message = domain.StateDead, stamp(at), reason, message
	created(&rec, d, s.now())
	s.logCreated(rec, s.now())
	s.deliveries[d.DeliveryID] = copyOf(rec)
	s.dead[d.DeliveryID] = deadEntry{d.TenantID, keys.TimeID(at, d.DeliveryID)}
	s.move(d.TenantID, 1)
	return nil
}

// Deliveries returns every delivery record, by id: for a test's
// assertions, not a store method.
func (s *Store) Deliveries() map[string]domain.Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]domain.Delivery{}
	for id, d := range s.deliveries {
		out[id] = copyOf(d)
	}
	return out
}
