package memstore

import (
	"context"
	"time"

	"github.com/hookline/hookline/internal/store"
)

// TakeSlots takes up to n of the request slots of an endpoint's
// one-second window (limit in all) that holds at, as store.Store does: as
// many as are left, at most n, never more than limit between all callers,
// the window's first taker starting at its first slot not past.
func (s *Store) TakeSlots(_ context.Context, tenantID, endpointID string, at time.Time, n, limit int) (store.Slots, error) {
	if n <= 0 || limit <= 0 {
		return store.Slots{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rates == nil {
		s.rates = map[string]int{}
	}
	k := tenantID + "\x00" + endpointID + "\x00" + at.UTC().Truncate(time.Second).Format(time.RFC3339)
	taken, ok := s.rates[k]
	if !ok {
		taken = store.PastSlots(at, limit) // the first taker starts at the first slot not past
	}
	got := min(n, limit-taken, limit-store.PastSlots(at, limit))
	if got <= 0 {
		return store.Slots{}, nil
	}
	s.rates[k] = taken + got
	return store.Slots{First: taken, Granted: got}, nil
}
