package deliver

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// load reads a batch's records: its deliveries and its endpoints' gates
// strongly consistent, in one request; its endpoints and their tenants'
// tombstones from the instance's cache, or, for those it has no fresh copy
// of, eventually consistent (see "Endpoint reads" in the package's doc).
func (h *Handler) load(ctx context.Context, ids []string, refs []store.EndpointRef) (store.Snapshot, error) {
	snap, err := h.Store.LoadWith(ctx, store.LoadOptions{NoRecords: true}, ids, refs)
	if err != nil {
		return store.Snapshot{}, err
	}
	cache := h.endpointCache()
	var miss []store.EndpointRef
	seen := map[store.EndpointRef]bool{}
	for _, r := range refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		if e, ok := cache.get(r); ok {
			e.addTo(snap)
		} else {
			miss = append(miss, r)
		}
	}
	if len(miss) == 0 {
		return snap, nil
	}
	read, err := h.readEndpoints(ctx, miss)
	if err != nil {
		return store.Snapshot{}, err
	}
	for _, e := range read {
		cache.put(e)
		e.addTo(snap)
	}
	return snap, nil
}

// readEndpoints reads endpoints and their tenants' tombstones eventually
// consistent, but strongly those the handler wrote to since it last read
// them (so that it sees its own writes) and, again, those the eventual
// read shows disabled or missing of a tenant not being erased: nothing a
// moment old makes a message dead.
func (h *Handler) readEndpoints(ctx context.Context, refs []store.EndpointRef) (_ []cachedEndpoint, err error) {
	var eventual, strong, written []store.EndpointRef
	for _, r := range refs {
		if h.endpointCache().wasWritten(r) {
			written = append(written, r)
		} else {
			eventual = append(eventual, r)
		}
	}
	defer func() {
		if err == nil {
			return
		}
		for _, r := range written {
			h.endpointCache().forget(r) // still to be read strongly
		}
	}()
	strong = append(strong, written...)
	var out []cachedEndpoint
	if len(eventual) > 0 {
		snap, err := h.Store.LoadWith(ctx, store.LoadOptions{Eventual: true, NoGates: true}, nil, eventual)
		if err != nil {
			return nil, err
		}
		for _, r := range eventual {
			if e := entryOf(snap, r); keepable(e) {
				out = append(out, e)
			} else {
				strong = append(strong, r)
			}
		}
	}
	if len(strong) > 0 {
		snap, err := h.Store.LoadWith(ctx, store.LoadOptions{NoGates: true}, nil, strong)
		if err != nil {
			return nil, err
		}
		for _, r := range strong {
			out = append(out, entryOf(snap, r))
		}
	}
	return out, nil
}

// entryOf is what snap holds of ref's endpoint.
func entryOf(snap store.Snapshot, ref store.EndpointRef) cachedEndpoint {
	ep, found := snap.Endpoints[ref]
	return cachedEndpoint{ref: ref, endpoint: ep, found: found, erased: snap.Erased[ref.TenantID]}
}

// addTo puts e into a batch's snapshot.
func (e cachedEndpoint) addTo(snap store.Snapshot) {
	if e.found {
		snap.Endpoints[e.ref] = e.endpoint
	}
	if e.erased {
		snap.Erased[e.ref.TenantID] = true
	}
}

// endpointCache is the handler's cache of endpoints, made at its first
// use: it lives as long as the Lambda instance.
func (h *Handler) endpointCache() *endpointCache {
	h.cacheOnce.Do(func() {
		h.cache = newEndpointCache(h.now, domain.DefaultEndpointCacheTTL, domain.DefaultEndpointCacheSize)
	})
	return h.cache
}
