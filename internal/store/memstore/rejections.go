package memstore

import (
	"context"
	"fmt"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// PutRejection records a rejected outbox item (the same key twice is one
// record, the later).
func (s *Store) PutRejection(_ context.Context, r domain.Rejection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.RejectedAt = s.now()
	s.rejections[r.Key] = copyOf(r)
	return nil
}

// Rejection reads a rejection by its key, or store.ErrNotFound.
func (s *Store) Rejection(_ context.Context, k string) (domain.Rejection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rejections[k]
	if !ok {
		return domain.Rejection{}, fmt.Errorf("rejection %s: %w", k, store.ErrNotFound)
	}
	return copyOf(r), nil
}

// Rejections returns every rejection recorded, by key: for a test's
// assertions, not a store method.
func (s *Store) Rejections() map[string]domain.Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]domain.Rejection{}
	for k, r := range s.rejections {
		out[k] = copyOf(r)
	}
	return out
}
