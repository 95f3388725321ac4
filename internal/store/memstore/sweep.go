package memstore

import (
	"context"
	"time"
)

// ClaimSweep reports whether the caller may sweep the DLQ now: true for at
// most one caller per gap.
func (s *Store) ClaimSweep(_ context.Context, gap time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.sweptAt != nil && s.sweptAt.After(now.Add(-gap)) {
		return false, nil
	}
	s.sweptAt = &now
	return true, nil
}
