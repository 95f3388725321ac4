package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

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
