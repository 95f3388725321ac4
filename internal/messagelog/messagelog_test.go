package messagelog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// put writes e as a producer library before the message log's pages did:
// with its index keys (log_sk, log_pk), listed by the outbox's indexes.
func put(t *testing.T, f *dynamofake.Table, e outbox.Event) {
	t.Helper()
	item, err := e.Item()
	require.NoError(t, err)
	item[outbox.AttrLogKey] = &types.AttributeValueMemberS{Value: outbox.LogKey(e.OccurredAt, e.ID)}
	item[outbox.AttrLogShard] = &types.AttributeValueMemberS{Value: outbox.LogShard(e.TenantID, e.ID)}
	f.Put(item)
}

// newOutbox is the outbox table on the one fake DynamoDB (dynamofake),
// with its message log indexes as the stack builds them
// (infra/hookline/tables.go): by_tenant_shard, and by_tenant while it is
// kept.
func newOutbox() *dynamofake.Table {
	f := dynamofake.New("outbox", outbox.AttrID)
	include := []string{outbox.AttrType, outbox.AttrOccurredAt, outbox.AttrEndpointID}
	f.AddIndex(outbox.IndexByTenant, outbox.AttrTenantID, outbox.AttrLogKey, include...)
	f.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey, include...)
	return f
}

// modes runs test against a reader of each index: the sharded one, and the
// legacy one (Reader.Legacy).
func modes(t *testing.T, test func(t *testing.T, legacy bool)) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			t.Parallel()
			test(t, legacy)
		})
	}
}

// newLog is a reader (of the legacy index or the sharded one) of an outbox
// table holding 30 events of acme, one a second, and one of other.
func newLog(t *testing.T, legacy bool) (*dynamofake.Table, *Reader) {
	f := newOutbox()
	for i := range 30 {
		typ := "a"
		if i%3 == 0 {
			typ = "b"
		}
		put(t, f, outbox.Event{ID: fmt.Sprintf("evt_%02d", i), TenantID: "acme", Type: typ, Payload: []byte(`{"i":1}`), OccurredAt: t0.Add(time.Duration(i) * time.Second), Sequence: aws.Int64(int64(i))})
	}
	put(t, f, outbox.Event{ID: "evt_other", TenantID: "other", Type: "a", Payload: []byte(`{}`), OccurredAt: t0})
	return f, &Reader{DB: f, Table: "outbox", Legacy: legacy}
}

func listAll(t *testing.T, r *Reader, tenant string, flt domain.EventFilter, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		es, next, err := r.ListEvents(context.Background(), tenant, flt, limit, cursor)
		require.NoError(t, err)
		require.LessOrEqual(t, len(es), limit)
		for _, e := range es {
			require.Equal(t, tenant, e.TenantID)
			require.Nil(t, e.Payload)
			ids = append(ids, e.ID)
		}
		pages++
		if cursor = next; cursor == "" {
			return ids, pages
		}
		require.Less(t, pages, 100)
	}
}

func TestListEventsNewestFirstAcrossPages(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, legacy bool) {
		_, r := newLog(t, legacy)
		ids, _ := listAll(t, r, "acme", domain.EventFilter{}, 7)
		require.Len(t, ids, 30)
		require.Equal(t, "evt_29", ids[0])
		require.True(t, slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }), "newest first")

		typed, _ := listAll(t, r, "acme", domain.EventFilter{Type: "b"}, 4)
		require.Equal(t, []string{"evt_27", "evt_24", "evt_21", "evt_18", "evt_15", "evt_12", "evt_09", "evt_06", "evt_03", "evt_00"}, typed)

		ranged, _ := listAll(t, r, "acme", domain.EventFilter{Since: t0.Add(5 * time.Second), Until: t0.Add(8 * time.Second)}, 50)
		require.Equal(t, []string{"evt_08", "evt_07", "evt_06", "evt_05"}, ranged, "both bounds inclusive")

		other, _ := listAll(t, r, "other", domain.EventFilter{}, 50)
		require.Equal(t, []string{"evt_other"}, other)
	})
}

func TestListEventsCursors(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, legacy bool) {
		_, r := newLog(t, legacy)
		ctx := context.Background()
		_, next, err := r.ListEvents(ctx, "acme", domain.EventFilter{}, 2, "")
		require.NoError(t, err)
		_, _, err = r.ListEvents(ctx, "acme", domain.EventFilter{Type: "b"}, 2, next)
		require.ErrorIs(t, err, store.ErrCursorMismatch)
		for _, bad := range []string{"x", "e30", encodeCursor("short", fingerprint(domain.EventFilter{}))} {
			_, _, err = r.ListEvents(ctx, "acme", domain.EventFilter{}, 2, bad)
			require.ErrorIs(t, err, store.ErrBadCursor, bad)
		}
	})
}

func TestListEventsBoundsItsReads(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, legacy bool) {
		f, r := newLog(t, legacy)
		noise, queries := 2000, maxQueries
		if !legacy { // each shard reads 100 a round
			noise, queries = 2*maxQueries*100*outbox.LogShards, maxQueries*outbox.LogShards
		}
		for i := range noise { // a type the filter drops, thousands of times, in one nanosecond
			put(t, f, outbox.Event{ID: fmt.Sprintf("evt_z%05d", i), TenantID: "acme", Type: "noise", Payload: []byte(`{}`), OccurredAt: t0.Add(time.Hour)})
		}
		f.ResetCalls()
		es, next, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{Type: "b"}, 5, "")
		require.NoError(t, err)
		require.Empty(t, es)
		require.NotEmpty(t, next, "a short page that is not the end says so")
		require.Equal(t, queries, f.Calls("Query"))
		ids, _ := listAll(t, r, "acme", domain.EventFilter{Type: "b"}, 5)
		require.Len(t, ids, 10, "the cursor walks past the noise")
	})
}

func TestEventIsTheTenantsOnly(t *testing.T) {
	t.Parallel()
	modes(t, func(t *testing.T, legacy bool) {
		_, r := newLog(t, legacy)
		e, err := r.Event(context.Background(), "acme", "evt_07")
		require.NoError(t, err)
		require.JSONEq(t, `{"i":1}`, string(e.Payload))
		require.Equal(t, int64(7), *e.Sequence)
		require.True(t, t0.Add(7*time.Second).Equal(e.OccurredAt))
		_, err = r.Event(context.Background(), "other", "evt_07")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = r.Event(context.Background(), "acme", "evt_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
