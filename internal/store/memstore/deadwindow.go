package memstore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// AddDeath adds a dead delivery to its endpoint's coalescing window and
// returns the window's count, as store.Store does.
func (s *Store) AddDeath(_ context.Context, tenantID, endpointID string, start, _ time.Time, d domain.OpDeath) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID + "\x00" + endpointID + "\x00" + start.UTC().Format(time.RFC3339Nano)
	w := s.windows[k]
	if w == nil {
		w = &domain.OpDeliveryDeadEvent{Reasons: map[domain.DeadReason]int{}}
		s.windows[k] = w
	}
	w.Count++
	w.Reasons[d.Reason]++
	if len(w.Deaths) < domain.OpDeadSample {
		w.Deaths = append(w.Deaths, d)
	}
	return w.Count, nil
}

// DeadWindow reads an endpoint's coalescing window, or store.ErrNotFound.
func (s *Store) DeadWindow(_ context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[tenantID+"\x00"+endpointID+"\x00"+start.UTC().Format(time.RFC3339Nano)]
	if w == nil {
		return domain.OpDeliveryDeadEvent{}, fmt.Errorf("dead window of endpoint %s: %w", endpointID, store.ErrNotFound)
	}
	out := *w
	out.Reasons = maps.Clone(w.Reasons)
	out.Deaths = append([]domain.OpDeath(nil), w.Deaths...)
	return out, nil
}
