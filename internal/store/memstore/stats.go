package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// statsKey is an endpoint's hour bucket.
type statsKey struct {
	tenant, endpoint string
	hour             time.Time
}

// AddEndpointStats adds a batch's counters to an endpoint's hour bucket, as
// store.Store's read of its shards merged does: counts added, the newest
// success and failure kept. (Within one shard the table keeps the last
// writer's, seconds apart from any other.)
func (s *Store) AddEndpointStats(_ context.Context, tenantID, endpointID string, hour time.Time, st domain.AttemptStats) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats == nil {
		s.stats = map[statsKey]domain.StatsBucket{}
	}
	k := statsKey{tenantID, endpointID, domain.StatsHour(hour)}
	b := s.stats[k]
	b.Start = k.hour
	b.Merge(utc(copyOf(st)))
	s.stats[k] = b
	return nil
}

// EndpointStats returns an endpoint's hour buckets starting in [since,
// until), oldest first.
func (s *Store) EndpointStats(_ context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.StatsBucket
	for k, b := range s.stats {
		if k.tenant == tenantID && k.endpoint == endpointID && !k.hour.Before(since) && k.hour.Before(until) {
			out = append(out, copyOf(b))
		}
	}
	slices.SortFunc(out, func(a, b domain.StatsBucket) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// LastAttempts returns an endpoint's newest success and failure in its
// buckets.
func (s *Store) LastAttempts(_ context.Context, tenantID, endpointID string) (*time.Time, *domain.AttemptFailure, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last domain.AttemptStats
	for k, b := range s.stats {
		if k.tenant == tenantID && k.endpoint == endpointID {
			last.Merge(domain.AttemptStats{LastSuccessAt: b.LastSuccessAt, LastFailure: b.LastFailure})
		}
	}
	return last.LastSuccessAt, last.LastFailure, nil
}

// utc is st with its newest success and failure in UTC, as the table
// reads them back.
func utc(st domain.AttemptStats) domain.AttemptStats {
	if st.LastSuccessAt != nil {
		t := st.LastSuccessAt.UTC()
		st.LastSuccessAt = &t
	}
	if f := st.LastFailure; f != nil {
		st.LastFailure = &domain.AttemptFailure{At: f.At.UTC(), Status: f.Status, Error: f.Error}
	}
	return st
}
