package memstore

import (
	"context"

	"github.com/hookline/hookline/internal/store"
)

// move moves a tenant's DLQ depth by delta, as the write that moved a
// delivery does. One counter a tenant: the sum of the store's shards,
// which is all its methods show. The caller holds the lock.
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
