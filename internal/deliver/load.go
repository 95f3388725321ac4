package deliver

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store"
)

// need is what a batch's messages ask of the copy of their endpoint they
// are sent by: a revision at least revision (the greatest their senders
// read, message.Message.EndpointRevision), or, strong, the endpoint as it
// is now, read strongly consistent (a test event's or a resend's: each is
// sent on a tenant's asking, often right after a change of the endpoint,
// and is rare).
type need struct {
	revision int64
	strong   bool
}

// needs is what msgs ask of each of their endpoints (need).
func needs(msgs []message.Message, errs []error) map[store.EndpointRef]need {
	out := map[store.EndpointRef]need{}
	for i, m := range msgs {
		if errs[i] != nil {
			continue
		}
		r := store.EndpointRef{TenantID: m.TenantID, EndpointID: m.EndpointID}
		n := out[r]
		n.revision = max(n.revision, m.EndpointRevision)
		n.strong = n.strong || m.Resend || m.EventType == domain.TestEventType
		out[r] = n
	}
	return out
}

// satisfies reports whether e, as kept or read eventually consistent,
// will do for n: a tenant being erased drops its messages whatever the
// endpoint; else the copy is to be at least the revision asked for.
func (e cachedEndpoint) satisfies(n need) bool {
	return e.erased || (!n.strong && e.endpoint.Revision >= n.revision)
}

// load reads a batch's records: its deliveries and its endpoints' gates
// strongly consistent, in one request; its endpoints and their tenants'
// tombstones from the instance's cache, or, for those it has no fresh
// enough copy of (needs), eventually consistent (see "Endpoint reads" in
// the package's doc). The two reads are independent (one table's
// BatchGetItem takes one consistency), so a cache miss runs them side by
// side and costs the batch no round trip more than a hit.
func (h *Handler) load(ctx context.Context, ids []string, refs []store.EndpointRef, needs map[store.EndpointRef]need) (store.Snapshot, error) {
	cache := h.cache
	var hits []cachedEndpoint
	var miss []store.EndpointRef
	seen := map[store.EndpointRef]bool{}
	for _, r := range refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		if e, ok := cache.get(r); ok && e.satisfies(needs[r]) {
			hits = append(hits, e)
		} else {
			miss = append(miss, r)
		}
	}
	var snap store.Snapshot
	var read []cachedEndpoint
	err := fanout.Each(2, 0, func(i int) (err error) {
		if i == 0 {
			snap, err = h.Store.LoadWith(ctx, store.LoadOptions{NoRecords: true}, ids, refs)
		} else if len(miss) > 0 {
			read, err = h.readEndpoints(ctx, miss, needs)
		}
		return err
	})
	if err != nil {
		return store.Snapshot{}, err
	}
	for _, e := range hits {
		e.addTo(snap)
	}
	for _, e := range read {
		cache.put(e)
		e.addTo(snap)
	}
	return snap, nil
}

// readEndpoints reads endpoints and their tenants' tombstones eventually
// consistent, but strongly those the handler wrote to since it last read
// them (so that it sees its own writes), those whose messages ask for the
// endpoint as it is now (need.strong), and, again, those the eventual read
// shows disabled or missing of a tenant not being erased (nothing a moment
// old makes a message dead) or older than their messages' revision (a
// replica behind a change the sender saw).
func (h *Handler) readEndpoints(ctx context.Context, refs []store.EndpointRef, needs map[store.EndpointRef]need) (_ []cachedEndpoint, err error) {
	var eventual, strong, written []store.EndpointRef
	for _, r := range refs {
		switch {
		case h.cache.wasWritten(r):
			written = append(written, r)
		case needs[r].strong:
			strong = append(strong, r)
		default:
			eventual = append(eventual, r)
		}
	}
	defer func() {
		if err == nil {
			return
		}
		for _, r := range written {
			h.cache.forget(r) // still to be read strongly
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
			if e := entryOf(snap, r); keepable(e) && e.satisfies(needs[r]) {
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
