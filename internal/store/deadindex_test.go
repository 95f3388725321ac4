package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
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
	d.DeliveryID = domain.DeliveryID(d.TenantID, d.EventID, d.EndpointID, s.Now())
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
	require.NotZero(t, c.X&(1<<DeadShards), "the legacy partition is read to its end")
	db.ResetCalls()
	rest, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 7, next)
	require.NoError(t, err)
	require.Len(t, rest, 2)
	require.LessOrEqual(t, db.Calls("Query"), DeadShards, "the dead index's shards not read to their end only")

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

// TestListDeadMergesTheShards lists deaths spread over the dead index's
// shards and gsi1's legacy partition, several at the same time, at every
// page size from 1 to 10, with and without filters and a time range: each
// once, oldest first.
func TestListDeadMergesTheShards(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := newTestStore(db)
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	type dead struct {
		id, ep, typ string
		at          time.Time
	}
	var all []dead
	shards := map[string]bool{}
	for i := range 60 {
		d := dead{fmt.Sprintf("msg_%02d", i), fmt.Sprintf("ep_%d", i%3), []string{"order.created", "payment.failed"}[i%5/4], t0.Add(time.Duration(i/2) * time.Minute)}
		put := putDead
		if i%7 == 0 {
			put = putLegacyDead
		} else {
			shards[DeadPK("t1", d.id)] = true
		}
		put(t, db, "t1", d.id, d.ep, d.typ, d.at)
		all = append(all, d)
		putDead(t, db, "t2", "other_"+d.id, d.ep, d.typ, d.at)
	}
	require.Greater(t, len(shards), DeadShards/2, "spread over the shards")
	for name, f := range map[string]domain.DeadFilter{
		"all":             {},
		"an endpoint":     {EndpointID: "ep_1"},
		"a type":          {EventType: "payment.failed"},
		"both":            {EndpointID: "ep_2", EventType: "order.created"},
		"a time range":    {Since: t0.Add(5 * time.Minute), Until: t0.Add(20 * time.Minute)},
		"range and type":  {Since: t0.Add(3 * time.Minute), EventType: "payment.failed"},
		"nothing matches": {EndpointID: "ep_9"},
	} {
		var want []string
		for _, d := range all {
			if (f.EndpointID == "" || d.ep == f.EndpointID) && (f.EventType == "" || d.typ == f.EventType) &&
				(f.Since.IsZero() || !d.at.Before(f.Since)) && (f.Until.IsZero() || !d.at.After(f.Until)) {
				want = append(want, d.id)
			}
		}
		for limit := 1; limit <= 10; limit++ {
			require.Equal(t, want, listAll(t, s, "t1", f, limit), "%s, limit %d", name, limit)
		}
	}
}

// TestDeadCursorBound builds the longest cursor a listing makes (the
// longest key DecodeDeadCursor takes, every partition's bit but one, a
// query) and an old one (ID, SK, Q, L), which still decodes.
func TestDeadCursorBound(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("m", 256)
	sk := sortableTime(time.Date(2026, 11, 30, 1, 0, 0, 999999999, time.UTC)) + "#" + id
	q := DeadFingerprint(domain.DeadFilter{EndpointID: strings.Repeat("e", 200), EventType: strings.Repeat("t", 200)})
	worst := EncodeDeadCursor(DeadCursor{SK: sk, Q: q, X: 1<<(DeadShards+1) - 2})
	require.Less(t, len(worst), 1024)
	t.Logf("the longest cursor: %d characters", len(worst))
	c, err := DecodeDeadCursor(worst)
	require.NoError(t, err)
	require.Equal(t, id, c.ID)

	raw, err := json.Marshal(map[string]any{"ID": "msg_1", "SK": sortableTime(time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)) + "#msg_1", "Q": q, "L": true})
	require.NoError(t, err)
	c, err = DecodeDeadCursor(base64.RawURLEncoding.EncodeToString(raw))
	require.NoError(t, err, "a cursor of before the shards")
	require.Equal(t, uint64(1<<DeadShards), c.X, "its legacy flag")
}
