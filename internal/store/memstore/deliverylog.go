package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// logCreated puts a delivery's record, created at now, into the delivery
// log where it is not yet, as the real store's creation writes its keys
// where absent. The caller holds the lock.
func (s *Store) logCreated(rec domain.Delivery, now time.Time) {
	if _, ok := s.logged[rec.DeliveryID]; ok || rec.TenantID == "" || rec.DeliveryID == "" {
		return
	}
	s.logged[rec.DeliveryID] = deadEntry{rec.TenantID, keys.TimeID(now, rec.DeliveryID)}
}

// ListDeliveries returns a page of a tenant's deliveries that f selects
// (as store.LogListed has them), newest first by creation, at most limit,
// after cursor, with the real store's cursors and errors. Unlike the real
// store, which bounds the entries a filtered page reads, a page here is
// full whenever that many deliveries match.
func (s *Store) ListDeliveries(_ context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := store.LogKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	if limit < 1 {
		return nil, "", fmt.Errorf("list deliveries of tenant %s: limit %d: ValidationException", tenantID, limit)
	}
	query := store.LogFingerprint(f)
	after := "~"
	if cursor != "" {
		c, err := store.DecodeDeadCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if c.Q != query || c.SK < lo || c.SK > hi {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
		}
		after = c.SK
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type entry struct {
		sk string
		d  domain.Delivery
	}
	var found []entry
	for id, e := range s.logged {
		d, ok := s.deliveries[id]
		if ok && e.tenant == tenantID && e.key >= lo && e.key <= hi && e.key < after && f.Matches(d) {
			found = append(found, entry{e.key, d})
		}
	}
	slices.SortFunc(found, func(a, b entry) int { return strings.Compare(b.sk, a.sk) })
	var out []domain.Delivery
	for _, e := range found[:min(limit, len(found))] {
		d := copyOf(e.d)
		at, _, _ := strings.Cut(e.sk, "#")
		d.CreatedAt, _ = time.Parse(keys.TimeFormat, at)
		out = append(out, store.LogListed(d))
	}
	if len(found) <= limit {
		return out, "", nil
	}
	last := found[limit-1]
	return out, store.EncodeDeadCursor(store.DeadCursor{ID: last.d.DeliveryID, SK: last.sk, Q: query}), nil
}
