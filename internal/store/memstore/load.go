package memstore

import (
	"context"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Load reads the deliveries and endpoints asked for that exist.
func (s *Store) Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error) {
	return s.LoadWith(ctx, store.LoadOptions{}, deliveryIDs, endpoints)
}

// LoadWith is Load, leaving out what opts leave out; every read here is
// consistent, whatever opts.Eventual says.
func (s *Store) LoadWith(_ context.Context, opts store.LoadOptions, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := store.Snapshot{Deliveries: map[string]domain.Delivery{}, Endpoints: map[store.EndpointRef]domain.Endpoint{}, Erased: map[string]bool{}, FastUntil: map[store.EndpointRef]time.Time{}}
	for _, id := range deliveryIDs {
		if d, ok := s.deliveries[id]; ok {
			snap.Deliveries[id] = copyOf(d)
		}
	}
	for _, r := range endpoints {
		if e, ok := s.endpoints[endpointKey{r.TenantID, r.EndpointID}]; ok && !opts.NoRecords {
			snap.Endpoints[r] = copyOf(e)
		}
		if s.tombstones[r.TenantID] && !opts.NoRecords {
			snap.Erased[r.TenantID] = true
		}
		if g := s.gates[r.TenantID+"\x00"+r.EndpointID]; g != nil && !g.fastUntil.IsZero() && !opts.NoGates {
			snap.FastUntil[r] = g.fastUntil.Truncate(time.Millisecond)
		}
	}
	return snap, nil
}
