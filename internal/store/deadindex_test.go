package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/stretchr/testify/require"
)

// A death's entry in the dead index is one write unit at its largest: a
// 64-byte tenant and endpoint id, an event id and type as long as the
// outbox takes (256 bytes), a last error longer than its classes (such
// as connection_refused), a replay on record, the
// counters at their largest; the message (4 KB here) and the attempt log
// (a 1 KB excerpt) stay in the table.
func TestDeadIndexEntryIsOneWriteUnit(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	db.Limits = dynamofake.DynamoDBLimits()
	s := newTestStore(db)
	tenant := strings.Repeat("t", 64)
	d := domain.Delivery{TenantID: tenant, EndpointID: "ep_" + strings.Repeat("e", 61), EventID: strings.Repeat("v", outbox.MaxIDBytes),
		EventType: strings.Repeat("y", outbox.MaxIDBytes)}
	d.DeliveryID = domain.DeliveryID(d.EventID, d.EndpointID)
	a := domain.Attempt{Number: 1, At: s.Now(), Status: 599, Error: strings.Repeat("e", 40), LatencyMS: 30_000, Excerpt: strings.Repeat("x", 1024)}
	o := domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: strings.Repeat("m", 4096)}
	require.NoError(t, s.RecordAttempt(context.Background(), d, a, o))

	item := stored(db, deliveryKey(d.DeliveryID))
	require.Nil(t, item["gsi1pk"], "not in gsi1")
	item["replayed_at"] = timeValue(s.Now())                          // died again after a replay
	item["attempts"] = &types.AttributeValueMemberN{Value: "9999999"} // more than any policy makes
	entry := map[string]types.AttributeValue{}
	for _, a := range append([]string{"pk", "sk", AttrDeadPK, AttrDeadSK}, DeadIndexAttributes...) {
		if v, ok := item[a]; ok {
			entry[a] = v
		}
	}
	size := cost.ItemSize(entry)
	t.Logf("largest dead index entry: %d bytes (the item: %d)", size, cost.ItemSize(item))
	require.Equal(t, 1.0, cost.WriteUnits(size))
	require.NotContains(t, DeadIndexAttributes, "message")
	require.NotContains(t, DeadIndexAttributes, "attempt_log")
	for _, c := range db.Hottest() {
		if c.Index == IndexDead {
			require.Equal(t, 1.0, c.WCU, "the death wrote one unit on the index")
		}
	}
}

// ListDead reads the dead index and gsi1's legacy dead partition (records
// of earlier versions) as one list, oldest death first, each once, at any
// page size and with a filter; it returns neither the message nor the
// attempt log of either; once the legacy partition is read to its end, a
// cursor skips its query. The depth reconciliation counts both, and the
// erasure deletes both.
func TestListDeadMergesTheLegacyPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	var all []string
	for i := range 9 {
		id, put := fmt.Sprintf("msg_%d", i), putDead
		if i < 3 || i == 5 {
			put = putLegacyDead // mostly the oldest, as after an upgrade
		}
		put(t, db, "t1", id, "ep_1", "order.created", t0.Add(time.Duration(i)*time.Minute))
		all = append(all, id)
	}
	putLegacyDead(t, db, "t2", "msg_other", "ep_1", "order.created", t0)
	for limit := 1; limit <= 10; limit++ {
		require.Equal(t, all, listAll(t, s, "t1", domain.DeadFilter{}, limit), "limit %d", limit)
	}
	require.Equal(t, all[3:], listAll(t, s, "t1", domain.DeadFilter{Since: t0.Add(3 * time.Minute)}, 2))

	page, next, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 20, "")
	require.NoError(t, err)
	require.Empty(t, next)
	for _, d := range page {
		require.Empty(t, d.Message, d.DeliveryID)
		require.Empty(t, d.AttemptLog, d.DeliveryID)
		require.Equal(t, "t1", d.TenantID)
		require.Equal(t, 3, d.Attempts)
		require.Equal(t, keys.TimeID(*d.DeadAt, d.DeliveryID), sortableTime(t0.Add(time.Duration(slices.Index(all, d.DeliveryID))*time.Minute))+"#"+d.DeliveryID)
	}

	// Past the last legacy record (msg_5), the pages query the dead index only.
	_, next, err = s.ListDead(ctx, "t1", domain.DeadFilter{}, 7, "")
	require.NoError(t, err)
	c, err := DecodeDeadCursor(next)
	require.NoError(t, err)
	require.True(t, c.L, "the legacy partition is read to its end")
	db.ResetCalls()
	rest, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 7, next)
	require.NoError(t, err)
	require.Len(t, rest, 2)
	require.Equal(t, 1, db.Calls("Query"))

	check, err := s.ReconcileDLQDepth(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, 9, check.Indexed, "both indexes counted")
	for {
		_, done, err := s.EraseIndexed(ctx, "t1", domain.EraseDeadDeliveries, 4)
		require.NoError(t, err)
		if done {
			break
		}
	}
	require.Empty(t, listAll(t, s, "t1", domain.DeadFilter{}, 5))
	require.Equal(t, []string{"msg_other"}, listAll(t, s, "t2", domain.DeadFilter{}, 5), "another tenant's left alone")
}
