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

// deadEntry is a delivery's place in the dead index: its tenant's
// partition and its sort key, "<dead_at>#<delivery id>".
type deadEntry struct{ tenant, key string }

// maxScanPerPage is the real ListDead's bound on the index items one call
// reads when a filter skips most of them.
const maxScanPerPage = 1000

// PutDelivery writes a delivery's record as given, for a test to start
// from: not a store method. A dead delivery with a DeadAt is in the dead
// index, and a move into or out of dead moves its tenant's DLQ depth, as
// the attempt that left it so would have.
func (s *Store) PutDelivery(d domain.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.deliveries[d.DeliveryID]
	s.deliveries[d.DeliveryID] = copyOf(d)
	delete(s.dead, d.DeliveryID)
	if d.State == domain.StateDead && d.DeadAt != nil {
		s.dead[d.DeliveryID] = deadEntry{d.TenantID, keyTime(*d.DeadAt) + "#" + d.DeliveryID}
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

// Load reads the deliveries and endpoints asked for that exist.
func (s *Store) Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error) {
	return s.LoadWith(ctx, store.LoadOptions{}, deliveryIDs, endpoints)
}

// LoadWith is Load; every read here is consistent, whatever the options.
func (s *Store) LoadWith(_ context.Context, _ store.LoadOptions, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := store.Snapshot{Deliveries: map[string]domain.Delivery{}, Endpoints: map[store.EndpointRef]domain.Endpoint{}, Erased: map[string]bool{}, FastUntil: map[store.EndpointRef]time.Time{}}
	for _, id := range deliveryIDs {
		if d, ok := s.deliveries[id]; ok {
			snap.Deliveries[id] = copyOf(d)
		}
	}
	for _, r := range endpoints {
		if e, ok := s.endpoints[endpointKey{r.TenantID, r.EndpointID}]; ok {
			snap.Endpoints[r] = copyOf(e)
		}
		if s.tombstones[r.TenantID] {
			snap.Erased[r.TenantID] = true
		}
		if g := s.gates[r.TenantID+"\x00"+r.EndpointID]; g != nil && !g.fastUntil.IsZero() {
			snap.FastUntil[r] = g.fastUntil.Truncate(time.Millisecond)
		}
	}
	return snap, nil
}

// DeliveriesOfEvent lists the deliveries of a tenant's event to the
// tenant's endpoints, in endpoint id order (one to an endpoint deleted
// since is not listed).
func (s *Store) DeliveriesOfEvent(ctx context.Context, tenantID, eventID string) ([]domain.Delivery, error) {
	m, err := s.DeliveriesOfEvents(ctx, tenantID, []string{eventID})
	return m[eventID], err
}

// DeliveriesOfEvents is DeliveriesOfEvent for several events, by event id
// (an event without deliveries has no entry).
func (s *Store) DeliveriesOfEvents(_ context.Context, tenantID string, eventIDs []string) (map[string][]domain.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]domain.Delivery{}
	for _, ev := range eventIDs {
		for _, e := range s.sortedEndpoints(tenantID) {
			if d, ok := s.deliveries[domain.DeliveryID(ev, e.EndpointID)]; ok && d.TenantID == tenantID {
				out[ev] = append(out[ev], copyOf(d))
			}
		}
	}
	return out, nil
}

// move moves a tenant's DLQ depth by delta, as the write that moved a
// delivery does. The caller holds the lock.
func (s *Store) move(tenantID string, delta int) {
	if delta == 0 {
		return
	}
	c := s.depths[tenantID]
	if c == nil {
		c = &counter{}
		s.depths[tenantID] = c
	}
	c.depth += delta
	c.moves++
	c.movedAt = s.now()
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
	}
	s.record(cur, a, o)
	return nil
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
		s.dead[cur.DeliveryID] = deadEntry{cur.TenantID, keyTime(a.At) + "#" + cur.DeliveryID}
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
	s.deliveries[d.DeliveryID] = copyOf(rec)
	s.dead[d.DeliveryID] = deadEntry{d.TenantID, keyTime(at) + "#" + d.DeliveryID}
	s.move(d.TenantID, 1)
	return nil
}

// ListDead returns a page of a tenant's dead deliveries, oldest death
// first, at most limit (above zero), after cursor, as the real store pages
// its index query: without a filter, a page stopped by its limit carries a
// cursor; with one, the index is read in chunks (at most 1000 items a
// call), so a page may be short and carry a cursor. A filter the index
// cannot be queried with is store.ErrBadFilter; a cursor this store did not
// make, store.ErrBadCursor; one of another query, store.ErrCursorMismatch.
func (s *Store) ListDead(_ context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := store.DeadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	if limit < 1 {
		return nil, "", fmt.Errorf("list dead deliveries of tenant %s: limit %d: ValidationException", tenantID, limit)
	}
	query := store.DeadFingerprint(f)
	after := ""
	if cursor != "" {
		c, err := store.DecodeDeadCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
		}
		after = c.SK
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	ids := map[string]string{}
	for id, e := range s.dead {
		if e.tenant == tenantID && e.key >= lo && e.key <= hi && (after == "" || e.key > after) {
			keys = append(keys, e.key)
			ids[e.key] = id
		}
	}
	slices.Sort(keys)
	cursorAt := func(k string) string { return store.EncodeDeadCursor(store.DeadCursor{ID: ids[k], SK: k, Q: query}) }
	var out []domain.Delivery
	if f.EndpointID == "" && f.EventType == "" {
		for _, k := range keys[:min(limit, len(keys))] {
			out = append(out, copyOf(s.deliveries[ids[k]]))
		}
		if len(keys) >= limit {
			return out, cursorAt(keys[limit-1]), nil
		}
		return out, "", nil
	}
	last := ""
	for scanned := 0; ; {
		pageLimit := min(maxScanPerPage-scanned, max(limit*4, 50))
		chunk := keys[:min(len(keys), pageLimit)]
		stopped := len(chunk) == pageLimit // DynamoDB's Limit reached: a LastEvaluatedKey
		keys, scanned = keys[len(chunk):], scanned+len(chunk)
		for _, k := range chunk {
			d := s.deliveries[ids[k]]
			if (f.EndpointID != "" && d.EndpointID != f.EndpointID) || (f.EventType != "" && d.EventType != f.EventType) {
				continue
			}
			if len(out) == limit {
				return out, cursorAt(last), nil
			}
			out, last = append(out, copyOf(d)), k
		}
		if !stopped {
			return out, "", nil
		}
		if len(out) == limit || scanned >= maxScanPerPage {
			return out, cursorAt(chunk[len(chunk)-1]), nil
		}
	}
}

// ClaimForReplay moves a dead delivery back to pending for job, out of the
// dead index and its tenant's count, records replayed_at, and returns it
// with its message. tenantID, when not empty, must own it (else
// store.ErrNotFound). Another job's claim younger than stale is
// store.ErrReplayInFlight; a delivery not dead, store.ErrNotDead; this
// job's own claim, or a stale one on an undelivered delivery, is taken.
func (s *Store) ClaimForReplay(_ context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	d, ok := s.deliveries[id]
	if !ok || (tenantID != "" && d.TenantID != tenantID) {
		return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	d = copyOf(d)
	staleClaim := d.ReplayClaimedAt != nil && d.ReplayClaimedAt.Before(now.Add(-stale))
	claimable := (d.State == domain.StateDead && d.ReplayJob == "") ||
		(d.State != domain.StateDelivered && staleClaim) ||
		(d.ReplayJob == job && d.State != domain.StateDelivered)
	if !claimable {
		if d.State == domain.StateDead || d.ReplayJob != "" {
			return d, fmt.Errorf("delivery %s: %w", id, store.ErrReplayInFlight)
		}
		return d, fmt.Errorf("delivery %s is %s: %w", id, d.State, store.ErrNotDead)
	}
	was := d.State
	d.State, d.ReplayJob, d.ReplayClaimedAt, d.ReplayedAt = domain.StatePending, job, stamp(now), stamp(now)
	s.deliveries[id] = copyOf(d)
	delete(s.dead, id)
	s.move(d.TenantID, domain.DLQDepthDelta(was, domain.StatePending))
	return d, nil
}

// ReleaseReplay drops job's claim on a delivery and records that job
// replayed it; a delivery job does not hold is left alone.
func (s *Store) ReleaseReplay(_ context.Context, id, job string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[id]
	if !ok || d.ReplayJob != job {
		return nil
	}
	d.ReplayedBy, d.ReplayJob, d.ReplayClaimedAt = job, "", nil
	s.deliveries[id] = d
	return nil
}

// DLQDepths returns every tenant's dead-delivery count that has ever moved.
func (s *Store) DLQDepths(_ context.Context) (map[string]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for t, c := range s.depths {
		out[t] = c.depth
	}
	return out, nil
}

// ReconcileDLQDepth recounts a tenant's dead deliveries from the dead index
// and sets the counter to the count where they differ, once the counter
// has stood still for DepthSettle (else Deferred).
func (s *Store) ReconcileDLQDepth(_ context.Context, tenantID string) (store.DepthCheck, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	check := store.DepthCheck{TenantID: tenantID}
	c := s.depths[tenantID]
	if c != nil {
		check.Counter = c.depth
		if !c.movedAt.IsZero() && s.now().Sub(c.movedAt) < s.DepthSettle {
			check.Deferred = true
			return check, nil
		}
	}
	for _, e := range s.dead {
		if e.tenant == tenantID {
			check.Indexed++
		}
	}
	if check.Indexed == check.Counter {
		return check, nil
	}
	if c == nil {
		c = &counter{}
		s.depths[tenantID] = c
	}
	c.depth, check.Corrected = check.Indexed, true
	return check, nil
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
