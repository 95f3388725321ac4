package messagelog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// cursorFilters are the filters the cursor tests list with: none, a type,
// and a time range that holds part of newLog's events.
var cursorFilters = []domain.EventFilter{
	{},
	{Type: "b"},
	{Since: t0.Add(5 * time.Second), Until: t0.Add(8 * time.Second)},
}

// craftedCursors are cursors a client can build from the documented
// encoding: the right fingerprint, a position this query never returns.
func craftedCursors(f domain.EventFilter) []string {
	fp := fingerprint(f)
	before := outbox.LogKey(t0.Add(-time.Hour), "evt_x")
	after := outbox.LogKey(t0.Add(time.Hour), "evt_x")
	return []string{
		encodeCursor(outbox.LogKey(t0, ""), fp),           // a log key with no id
		encodeCursor(before, fp),                          // before Since
		encodeCursor(after, fp),                           // after Until
		encodeCursor(before[:30]+"#"+string(rune(0)), fp), // a control character for an id
		encodeKey(cursorKey{F: fp, At: map[int]int64{0: t0.Add(-time.Hour).UnixNano()}}),
		encodeKey(cursorKey{F: fp, SK: before, Keys: map[int]string{1: after}}),
	}
}

// TestCraftedCursorsAre400s: a cursor whose fingerprint matches its filter
// but whose position this query could never return is ErrBadCursor (a 400
// at the API), never a DynamoDB ValidationException (a 500), on either
// index. The legacy index answered 500 to a position outside the filter's
// time range, or with an empty id, before this check.
func TestCraftedCursorsAre400s(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, legacy bool) {
		_, r := newLog(t, legacy)
		sharded, old, _, _ := pagedLog(t, 40)
		paged := map[bool]*Reader{false: sharded, true: old}[legacy]
		for _, f := range cursorFilters {
			for _, c := range craftedCursors(f) {
				for _, r := range []*Reader{r, paged} {
					_, _, err := r.ListEvents(context.Background(), "acme", f, 3, c)
					requireCursorOutcome(t, err, c)
				}
			}
		}
	})
}

// requireCursorOutcome: a listing from a cursor either works or refuses
// the cursor as a client's mistake.
func requireCursorOutcome(t *testing.T, err error, cursor string) {
	t.Helper()
	if err != nil && !errors.Is(err, store.ErrBadCursor) && !errors.Is(err, store.ErrCursorMismatch) {
		t.Fatalf("cursor %q: %v, want nil, ErrBadCursor or ErrCursorMismatch", cursor, err)
	}
}

// FuzzListEventsCursor: any cursor string, on either index with the
// message log's pages and under each filter, lists or is refused as a
// cursor, never another error. The fake
// refuses a starting key as DynamoDB does (empty key values, a key
// outside the key condition).
func FuzzListEventsCursor(f *testing.F) {
	for _, flt := range cursorFilters {
		for _, c := range craftedCursors(flt) {
			f.Add(c, false)
			f.Add(c, true)
		}
	}
	f.Add("", false)
	f.Add("e30", true)
	sharded, legacy, _, _ := pagedLog(&testing.T{}, 40)
	f.Fuzz(func(t *testing.T, cursor string, useLegacy bool) {
		r := sharded
		if useLegacy {
			r = legacy
		}
		for _, flt := range cursorFilters {
			_, _, err := r.ListEvents(context.Background(), "acme", flt, 3, cursor)
			requireCursorOutcome(t, err, cursor)
		}
	})
}
