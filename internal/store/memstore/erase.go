package memstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Tombstone marks a tenant as being erased and revokes its keys, as
// store.Store does (store.ErrNotFound for no such tenant).
func (s *Store) Tombstone(_ context.Context, tenantID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[tenantID]; !ok {
		return fmt.Errorf("tenant %s: %w", tenantID, store.ErrNotFound)
	}
	if s.tombstones == nil {
		s.tombstones = map[string]bool{}
	}
	s.tombstones[tenantID] = true
	for hash, k := range s.keys {
		if k.TenantID == tenantID && k.RevokedAt == nil {
			k.RevokedAt = stamp(s.now())
			s.keys[hash] = k
		}
	}
	for hash, l := range s.portal {
		if l.TenantID == tenantID && l.RevokedAt == nil {
			l.RevokedAt = stamp(s.now())
			s.portal[hash] = l
		}
	}
	return nil
}

// Erased reports whether a tenant is being erased (has a tombstone).
func (s *Store) Erased(_ context.Context, tenantID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tombstones[tenantID], nil
}

// EraseIndexed deletes up to limit of a tenant's items of kind, as
// store.Store does.
func (s *Store) EraseIndexed(_ context.Context, tenantID, kind string, limit int) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit = max(1, limit)
	n := 0
	take := func() bool { n++; return n <= limit }
	switch kind {
	case domain.EraseAPIKeys:
		for h, k := range s.keys {
			if k.TenantID == tenantID && take() {
				delete(s.keys, h)
			}
		}
	case domain.ErasePortalLinks:
		for h, l := range s.portal {
			if l.TenantID == tenantID && take() {
				delete(s.portal, h)
			}
		}
	case domain.EraseDeadDeliveries:
		for id := range s.dead {
			if d := s.deliveries[id]; d.TenantID == tenantID && take() {
				delete(s.dead, id)
				delete(s.deliveries, id)
			}
		}
	case domain.EraseDeliveries: // the delivery log's, but the dead
		for id, e := range s.logged {
			if d, ok := s.deliveries[id]; ok && d.State != domain.StateDead && e.tenant == tenantID && take() {
				delete(s.deliveries, id)
				delete(s.dead, id)
			}
		}
	case domain.EraseRejections:
		for k, r := range s.rejections {
			if r.TenantID == tenantID && take() {
				delete(s.rejections, k)
			}
		}
	case domain.EraseReplayJobs:
		for id, j := range s.jobs {
			if j.TenantID == tenantID && j.CompletedAt != nil && take() {
				delete(s.jobs, id)
			}
		}
	case domain.EraseDeadWindows:
		for k := range s.windows {
			if strings.HasPrefix(k, tenantID+"\x00") && take() {
				delete(s.windows, k)
			}
		}
	default:
		return 0, false, fmt.Errorf("no index of a tenant's %q", kind)
	}
	n = min(n, limit)
	return n, n == 0, nil
}

// EraseOpenJobs deletes a tenant's open replay jobs' records.
func (s *Store) EraseOpenJobs(_ context.Context, tenantID string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range s.slots[tenantID] {
		if _, ok := s.jobs[id]; ok {
			delete(s.jobs, id)
			n++
		}
	}
	return n, nil
}

// EraseDeliveries deletes those of ids that exist and are the tenant's.
func (s *Store) EraseDeliveries(_ context.Context, tenantID string, ids []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range ids {
		if d, ok := s.deliveries[id]; ok && d.TenantID == tenantID {
			delete(s.deliveries, id)
			delete(s.dead, id)
			n++
		}
	}
	return n, nil
}

// EraseStats deletes up to limit hour buckets of an endpoint's counters,
// those by event type included.
func (s *Store) EraseStats(_ context.Context, tenantID, endpointID string, limit int) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.stats {
		if k.tenant == tenantID && k.endpoint == endpointID && n < max(1, limit) {
			delete(s.stats, k)
			n++
		}
	}
	for k := range s.typeStats {
		if k.tenant == tenantID && k.endpoint == endpointID && n < max(1, limit) {
			delete(s.typeStats, k)
			n++
		}
	}
	return n, n == 0, nil
}

// EraseTenantItems deletes the tenant's endpoints, DLQ depth counter and
// open jobs' item, then the tenant, never its tombstone.
func (s *Store) EraseTenantItems(_ context.Context, tenantID string, limit int) (map[string]int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[string]int{}
	for k := range s.endpoints {
		if k.tenant == tenantID && counts[domain.EraseEndpoints] < max(1, limit) {
			delete(s.endpoints, k)
			counts[domain.EraseEndpoints]++
		}
	}
	if _, ok := s.depths[tenantID]; ok {
		delete(s.depths, tenantID)
		counts[domain.EraseTenant]++
	}
	if _, ok := s.slots[tenantID]; ok {
		delete(s.slots, tenantID)
		counts[domain.EraseTenant]++
	}
	if counts[domain.EraseEndpoints]+counts[domain.EraseTenant] > 0 {
		return counts, false, nil
	}
	if _, ok := s.tenants[tenantID]; ok {
		delete(s.tenants, tenantID)
		counts[domain.EraseTenant]++
		return counts, false, nil
	}
	return counts, true, nil
}
