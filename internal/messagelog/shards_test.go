package messagelog

import (
	"context"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// manyEvents puts n events of acme, of types a, b and c, at times spread
// over a minute, several in one nanosecond; it returns their ids as the
// log lists them, newest first (log key order).
func manyEvents(t *testing.T, n int) (*Reader, *Reader, []outbox.Event) {
	f := newOutbox()
	rnd := rand.New(rand.NewSource(25))
	var evs []outbox.Event
	for i := range n {
		at := t0.Add(time.Duration(rnd.Intn(60_000)) * time.Millisecond)
		if i%7 == 0 && i > 0 {
			at = evs[i-1].OccurredAt // ties: the id orders them
		}
		e := outbox.Event{ID: fmt.Sprintf("evt_%04d", i), TenantID: "acme", Type: string(rune('a' + i%3)), Payload: []byte(`{}`), OccurredAt: at}
		put(t, f, e)
		evs = append(evs, e)
	}
	put(t, f, outbox.Event{ID: "evt_other", TenantID: "other", Type: "a", Payload: []byte(`{}`), OccurredAt: t0})
	slices.SortFunc(evs, func(a, b outbox.Event) int {
		return strings.Compare(outbox.LogKey(b.OccurredAt, b.ID), outbox.LogKey(a.OccurredAt, a.ID))
	})
	return &Reader{DB: f, Table: "outbox"}, &Reader{DB: f, Table: "outbox", Legacy: true}, evs
}

func TestShardedListingMergesNewestFirstAndPagesToTheEnd(t *testing.T) {
	t.Parallel()
	sharded, legacy, evs := manyEvents(t, 250)
	filters := map[string]domain.EventFilter{
		"all":    {},
		"type b": {Type: "b"},
		"range":  {Since: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second)},
		"both":   {Type: "c", Since: t0.Add(30 * time.Second)},
		"until":  {Until: t0.Add(5 * time.Second)},
		"none":   {Type: "z"},
	}
	for name, flt := range filters {
		want := selected(evs, flt)
		for _, limit := range []int{3, 16, 17, 100, 1000} {
			got, pages := listAll(t, sharded, "acme", flt, limit)
			require.Equal(t, want, got, "%s, limit %d: every event once, newest first", name, limit)
			if limit >= 3 && len(want) > 0 {
				require.LessOrEqual(t, pages, len(want)/limit+2, "%s, limit %d: pages are full but for the last", name, limit)
			}
			old, _ := listAll(t, legacy, "acme", flt, limit)
			require.Equal(t, want, old, "%s, limit %d: the legacy index lists the same", name, limit)
		}
	}
	other, _ := listAll(t, sharded, "other", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_other"}, other, "a tenant's shards hold its events only")
}

func TestShardedListingQueriesEveryShardOnce(t *testing.T) {
	t.Parallel()
	f := newOutbox()
	for i := range 64 {
		put(t, f, outbox.Event{ID: fmt.Sprintf("evt_%02d", i), TenantID: "acme", Type: "a", Payload: []byte(`{}`), OccurredAt: t0.Add(time.Duration(i) * time.Second)})
	}
	r := &Reader{DB: f, Table: "outbox"}
	es, next, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, es, 10)
	require.Equal(t, "evt_63", es[0].ID)
	require.NotEmpty(t, next)
	require.Equal(t, outbox.LogShards, f.Calls("Query"), "a page reads each shard once, limit+1 items")
}

func TestShardedCursors(t *testing.T) {
	t.Parallel()
	sharded, legacy, evs := manyEvents(t, 60)
	ctx := context.Background()
	_, next, err := sharded.ListEvents(ctx, "acme", domain.EventFilter{}, 5, "")
	require.NoError(t, err)
	require.LessOrEqual(t, len(next), 1024, "within the API's bound")
	_, _, err = sharded.ListEvents(ctx, "acme", domain.EventFilter{Type: "b"}, 5, next)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor of another query")
	fp := fingerprint(domain.EventFilter{})
	for name, bad := range map[string]string{
		"not base64":     "x",
		"no position":    "e30",
		"short key":      encodeCursor("short", fp),
		"no such shard":  encodeKey(cursorKey{SK: outbox.LogKey(t0, "e"), F: fp, At: map[int]int64{allShards: 1}}),
		"too many done":  encodeKey(cursorKey{SK: outbox.LogKey(t0, "e"), F: fp, Done: 1 << allShards}),
		"a key that isn": encodeKey(cursorKey{F: fp, Keys: map[int]string{0: "x"}}),
	} {
		_, _, err = sharded.ListEvents(ctx, "acme", domain.EventFilter{}, 5, bad)
		require.ErrorIs(t, err, store.ErrBadCursor, name)
	}

	// Across the upgrade: a cursor of the legacy index goes on in the
	// sharded one, and back, with no event twice or missed.
	first, old, err := legacy.ListEvents(ctx, "acme", domain.EventFilter{}, 7, "")
	require.NoError(t, err)
	rest, _ := listAllFrom(t, sharded, old, 4)
	again, mid, err := sharded.ListEvents(ctx, "acme", domain.EventFilter{}, 9, "")
	require.NoError(t, err)
	tail, _ := listAllFrom(t, legacy, mid, 4)
	var want []string
	for _, e := range evs {
		want = append(want, e.ID)
	}
	require.Equal(t, want, append(idsOf(first), rest...))
	require.Equal(t, want, append(idsOf(again), tail...))
	one, _ := listAllFrom(t, sharded, mid, 1)
	require.Equal(t, want[9:], one, "one at a time")
}

func TestShardedIndexListsNoItemWithoutLogShard(t *testing.T) {
	t.Parallel()
	f := newOutbox()
	put(t, f, outbox.Event{ID: "evt_new", TenantID: "acme", Type: "a", Payload: []byte(`{}`), OccurredAt: t0})
	old, err := outbox.Event{ID: "evt_old", TenantID: "acme", Type: "a", Payload: []byte(`{}`), OccurredAt: t0}.Item()
	require.NoError(t, err)
	// as a producer library before log_pk wrote it
	old[outbox.AttrLogKey] = &types.AttributeValueMemberS{Value: outbox.LogKey(t0, "evt_old")}
	f.Put(old)
	sharded, _ := listAll(t, &Reader{DB: f, Table: "outbox"}, "acme", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_new"}, sharded)
	legacy, _ := listAll(t, &Reader{DB: f, Table: "outbox", Legacy: true}, "acme", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_old", "evt_new"}, legacy, "the legacy index lists both: keep it until no such item is left")
}

// selected are the ids of the events of evs (newest first) that flt
// selects, in their order.
func selected(evs []outbox.Event, flt domain.EventFilter) []string {
	var ids []string
	for _, e := range evs {
		if (flt.Type == "" || e.Type == flt.Type) && (flt.Since.IsZero() || !e.OccurredAt.Before(flt.Since)) && (flt.Until.IsZero() || !e.OccurredAt.After(flt.Until)) {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func listAllFrom(t *testing.T, r *Reader, cursor string, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	for pages := 0; cursor != ""; pages++ {
		require.Less(t, pages, 1000)
		es, next, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{}, limit, cursor)
		require.NoError(t, err)
		ids, cursor = append(ids, idsOf(es)...), next
	}
	return ids, 0
}

func idsOf(es []domain.Event) []string {
	ids := make([]string, 0, len(es))
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
