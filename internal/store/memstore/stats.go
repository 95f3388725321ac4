package memstore

import (
	"context"
	"slices"
	"strings"
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

// typeStatsKey is an endpoint's hour bucket of one event type.
type typeStatsKey struct {
	tenant, endpoint, eventType string
	hour                        time.Time
}

// AddEndpointTypeStats adds a batch's counters of one event type to the
// endpoint's hour bucket of that type, as store.Store's read of its shards
// merged does; the newest success and failure are not kept.
func (s *Store) AddEndpointTypeStats(_ context.Context, tenantID, endpointID, eventType string, hour time.Time, st domain.AttemptStats) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.typeStats == nil {
		s.typeStats = map[typeStatsKey]domain.TypeStatsBucket{}
	}
	k := typeStatsKey{tenantID, endpointID, eventType, domain.StatsHour(hour)}
	b := s.typeStats[k]
	b.Start, b.EventType = k.hour, eventType
	st = copyOf(st)
	st.LastSuccessAt, st.LastFailure = nil, nil
	b.Merge(st)
	s.typeStats[k] = b
	return nil
}

// EndpointTypeStats returns an endpoint's hour buckets by event type
// starting in [since, until), oldest hour first, by type within an hour.
func (s *Store) EndpointTypeStats(_ context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.TypeStatsBucket{}
	for k, b := range s.typeStats {
		if k.tenant == tenantID && k.endpoint == endpointID && !k.hour.Before(since) && k.hour.Before(until) {
			b.AttemptStats = copyOf(b.AttemptStats)
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b domain.TypeStatsBucket) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.EventType, b.EventType)
	})
	return out, nil
}
