package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// Job reads a replay job, or store.ErrNotFound.
func (s *Store) Job(_ context.Context, id string) (domain.ReplayJob, error) {
	if err := checkKey(keys.ReplayJob(id), "REPLAYJOB"); err != nil {
		return domain.ReplayJob{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return domain.ReplayJob{}, fmt.Errorf("replay job %s: %w", id, store.ErrNotFound)
	}
	return copyOf(j), nil
}

// stampJob readies a job for a write, as the real store does: Version
// bumped, UpdatedAt (and for a new job CreatedAt) now. It returns the
// version it had.
func (s *Store) stampJob(j *domain.ReplayJob) int {
	prev := j.Version
	j.Version++
	j.UpdatedAt = s.now()
	if prev == 0 {
		j.CreatedAt = j.UpdatedAt
	}
	return prev
}

// SaveJob writes a job: a new one (Version 0) only if it does not exist, an
// existing one only if nobody saved it since it was read
// (store.ErrConflict, and j's Version is as it was).
func (s *Store) SaveJob(_ context.Context, j *domain.ReplayJob) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.stampJob(j)
	old, exists := s.jobs[j.JobID]
	if (prev == 0 && exists) || (prev != 0 && (!exists || old.Version != prev)) {
		j.Version = prev
		return fmt.Errorf("replay job %s: %w", j.JobID, store.ErrConflict)
	}
	s.jobs[j.JobID] = copyOf(*j)
	return nil
}

// CreateJob records a new job (Version 0; store.ErrConflict if its id
// exists) and, for a tenant's job with limit above zero, takes one of the
// tenant's limit places for open jobs in the same write: with limit open,
// nothing is written (store.ErrTooManyJobs).
func (s *Store) CreateJob(ctx context.Context, j *domain.ReplayJob, limit int) error {
	if j.Version != 0 {
		return fmt.Errorf("create replay job %s: version %d: %w", j.JobID, j.Version, store.ErrConflict)
	}
	if j.TenantID == "" || limit <= 0 {
		return s.SaveJob(ctx, j)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stampJob(j)
	if _, exists := s.jobs[j.JobID]; exists {
		j.Version = 0
		return fmt.Errorf("replay job %s: %w", j.JobID, store.ErrConflict)
	}
	if len(s.slots[j.TenantID]) >= limit {
		j.Version = 0
		return fmt.Errorf("tenant %s: %d replay jobs open: %w", j.TenantID, limit, store.ErrTooManyJobs)
	}
	s.jobs[j.JobID] = copyOf(*j)
	if s.slots[j.TenantID] == nil {
		s.slots[j.TenantID] = map[string]bool{}
	}
	s.slots[j.TenantID][j.JobID] = true
	return nil
}

// TenantJobs returns the ids of a tenant's open jobs (in id order), as
// CreateJob counts them; nil when none.
func (s *Store) TenantJobs(_ context.Context, tenantID string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.slots[tenantID]) == 0 {
		return nil, nil
	}
	return slices.Sorted(maps.Keys(s.slots[tenantID])), nil
}

// ReleaseJob gives back the place a tenant's job took; releasing twice is
// harmless.
func (s *Store) ReleaseJob(_ context.Context, tenantID, jobID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.slots[tenantID], jobID)
	return nil
}

// IdleJobs returns up to limit jobs not completed and last saved before
// before, least recently saved first.
func (s *Store) IdleJobs(_ context.Context, before time.Time, limit int) ([]domain.ReplayJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.ReplayJob
	for _, j := range s.jobs {
		if j.CompletedAt == nil && keys.TimeID(j.UpdatedAt, j.JobID) < keys.Time(before) {
			out = append(out, copyOf(j))
		}
	}
	slices.SortFunc(out, func(a, b domain.ReplayJob) int {
		return strings.Compare(keys.TimeID(a.UpdatedAt, a.JobID), keys.TimeID(b.UpdatedAt, b.JobID))
	})
	return out[:min(len(out), max(limit, 0))], nil
}
