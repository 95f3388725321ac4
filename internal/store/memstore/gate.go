package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hookline/hookline/internal/store"
)

// gate is an endpoint's gate: its slots' holds and how long it counts as
// fast.
type gate struct {
	held      map[int]time.Time
	fastUntil time.Time
}

// TakeGate takes a slot of an endpoint's gate as a asks, as store.Store
// does: the slot a.Start names (modulo the slots that may be taken) if it
// is free, else the first free one; ok false when none is.
func (s *Store) TakeGate(_ context.Context, tenantID, endpointID string, a store.GateAsk) (store.Hold, bool, error) {
	if a.Slots < 1 || a.Slots > 100 || a.Fast > 100 {
		return store.Hold{}, false, fmt.Errorf("gate of endpoint %s: %d slots, %d when fast", endpointID, a.Slots, a.Fast)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gate(tenantID, endpointID)
	// Held until a time before now (to the millisecond, as the table keeps
	// it) is free; never held is free.
	free := func(slot int) bool { t, held := g.held[slot]; return !held || t.UnixMilli() < a.Now.UnixMilli() }
	take := func(slot int) (store.Hold, bool, error) {
		g.held[slot] = a.Until
		return store.Hold{Slot: slot, Until: a.Until}, true, nil
	}
	if a.Probe {
		if free(store.ProbeSlot) {
			return take(store.ProbeSlot)
		}
		return store.Hold{}, false, nil
	}
	n := a.Slots
	if g.fastUntil.UnixMilli() > a.Now.UnixMilli() {
		n = max(a.Slots, a.Fast)
	}
	if first := ((a.Start % max(a.Slots, a.Fast)) + max(a.Slots, a.Fast)) % max(a.Slots, a.Fast); first < n && free(first) {
		return take(first)
	}
	for i := range n {
		if free(i) {
			return take(i)
		}
	}
	return store.Hold{}, false, nil
}

// ReleaseGate gives a held slot back (free at once, or at h.RestUntil),
// unless another caller holds it since, and sets (or, nil, clears) how long the endpoint counts as fast.
func (s *Store) ReleaseGate(_ context.Context, tenantID, endpointID string, h store.Hold, fastUntil *time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gate(tenantID, endpointID)
	if t, held := g.held[h.Slot]; !held || t.UnixMilli() != h.Until.UnixMilli() {
		return nil
	}
	delete(g.held, h.Slot)
	if !h.RestUntil.IsZero() {
		g.held[h.Slot] = h.RestUntil // resting: free once it has passed
	}
	g.fastUntil = time.Time{}
	if fastUntil != nil {
		g.fastUntil = *fastUntil
	}
	return nil
}

// gate is an endpoint's gate, made when first asked for. s.mu is held.
func (s *Store) gate(tenantID, endpointID string) *gate {
	if s.gates == nil {
		s.gates = map[string]*gate{}
	}
	k := tenantID + "\x00" + endpointID
	if s.gates[k] == nil {
		s.gates[k] = &gate{held: map[int]time.Time{}}
	}
	return s.gates[k]
}

// MarkGate sets (or, nil, clears) until when an endpoint counts as fast.
func (s *Store) MarkGate(_ context.Context, tenantID, endpointID string, fastUntil *time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gate(tenantID, endpointID)
	g.fastUntil = time.Time{}
	if fastUntil != nil {
		g.fastUntil = *fastUntil
	}
	return nil
}
