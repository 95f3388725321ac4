package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// deadEntry is a delivery's place in the dead index: its tenant's
// partition and its sort key, "<dead_at>#<delivery id>".
type deadEntry struct{ tenant, key string }

// maxScanPerPage is the real ListDead's bound on the index items one call
// reads when a filter skips most of them.
const maxScanPerPage = 1000

// ListDead returns a page of a tenant's dead deliveries (as
// store.DeadListed has them: no message, no attempt log), oldest death
// first, at most limit (above zero), after cursor, as the real store pages
// its index query: without a filter, a page stopped by its limit carries a
// cursor; with one, the index is read in chunks (at most 1000 items a
// call), so a page may be short and carry a cursor. A filter the index
// cannot be queried with is store.ErrBadFilter; a cursor this store did not
// make, store.ErrBadCursor; one of another query, store.ErrCursorMismatch.
func (s *Store) ListDead(_ context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	lo, hi, err := store.DeadKeyRange(f)
	if err != nil {
		return nil, "", err
	}
	if limit < 1 {
		return nil, "", fmt.Errorf("list dead deliveries of tenant %s: limit %d: ValidationException", tenantID, limit)
	}
	query := store.DeadFingerprint(f)
	after := ""
	if cursor != "" {
		c, err := store.DecodeDeadCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if (c.Q != "" && c.Q != query) || c.SK < lo || c.SK > hi {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
		}
		after = c.SK
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	ids := map[string]string{}
	for id, e := range s.dead {
		if e.tenant == tenantID && e.key >= lo && e.key <= hi && (after == "" || e.key > after) {
			keys = append(keys, e.key)
			ids[e.key] = id
		}
	}
	slices.Sort(keys)
	cursorAt := func(k string) string { return store.EncodeDeadCursor(store.DeadCursor{ID: ids[k], SK: k, Q: query}) }
	var out []domain.Delivery
	if f.EndpointID == "" && f.EventType == "" {
		for _, k := range keys[:min(limit, len(keys))] {
			out = append(out, store.DeadListed(copyOf(s.deliveries[ids[k]])))
		}
		if len(keys) >= limit {
			return out, cursorAt(keys[limit-1]), nil
		}
		return out, "", nil
	}
	last := ""
	for scanned := 0; ; {
		pageLimit := min(maxScanPerPage-scanned, max(limit*4, 50))
		chunk := keys[:min(len(keys), pageLimit)]
		stopped := len(chunk) == pageLimit // DynamoDB's Limit reached: a LastEvaluatedKey
		keys, scanned = keys[len(chunk):], scanned+len(chunk)
		for _, k := range chunk {
			d := s.deliveries[ids[k]]
			if (f.EndpointID != "" && d.EndpointID != f.EndpointID) || (f.EventType != "" && d.EventType != f.EventType) {
				continue
			}
			if len(out) == limit {
				return out, cursorAt(last), nil
			}
			out, last = append(out, store.DeadListed(copyOf(d))), k
		}
		if !stopped {
			return out, "", nil
		}
		if len(out) == limit || scanned >= maxScanPerPage {
			return out, cursorAt(chunk[len(chunk)-1]), nil
		}
	}
}
