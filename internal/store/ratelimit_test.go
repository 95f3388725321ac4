package store

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/store/keys"
	"github.com/stretchr/testify/require"
)

// TestRateShardParts: for every limit, the shards' quotas add up to the
// limit exactly, each holds at least RateShardSlots (or the whole limit,
// when one shard), differ by at most one, and their past slots add up to
// PastSlots at any time of the window.
func TestRateShardParts(t *testing.T) {
	t.Parallel()
	w := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for limit := 1; limit <= 1000; limit++ {
		shards := RateWindowShards(limit)
		require.True(t, shards >= 1 && shards <= RateShards, "limit %d: %d shards", limit, shards)
		for _, frac := range []time.Duration{0, time.Millisecond, 250 * time.Millisecond, 999 * time.Millisecond} {
			at := w.Add(frac)
			sum, pastSum := 0, 0
			for j := range shards {
				quota, past := RateShardPart(at, limit, shards, j)
				require.True(t, shards == 1 || quota >= RateShardSlots, "limit %d shard %d: %d slots", limit, j, quota)
				require.LessOrEqual(t, past, quota)
				q0, _ := RateShardPart(at, limit, shards, 0)
				require.LessOrEqual(t, q0-quota, 1, "limit %d: the quotas differ by one at most", limit)
				sum += quota
				pastSum += past
			}
			require.Equal(t, limit, sum, "limit %d: the quotas add up to the limit", limit)
			require.Equal(t, PastSlots(at, limit), pastSum, "limit %d at %v: the past slots add up", limit, frac)
		}
	}
}

// TestRateWindowKeys: a window of one shard (a limit below 20) is the item
// of the versions before the shards, RATE#<t>#<e>, so a deploy changes no
// small limit's count; a larger limit's shards are RATE#<t>#<e>#<j>.
func TestRateWindowKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := New(db, "state")
	w := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	_, err := s.TakeSlots(ctx, "t1", "ep_small", w, 3, 19)
	require.NoError(t, err)
	require.NotNil(t, stored(db, key(keys.Rate("t1", "ep_small"), w.Format(hourFormat))))
	g, err := s.TakeSlots(ctx, "t1", "ep_large", w, 3, 20)
	require.NoError(t, err)
	require.Equal(t, Slots{First: 1, Granted: 3, Stride: 2}, g, "a new store's second call: shard 1, every other slot")
	require.NotNil(t, stored(db, key(keys.RateShard("t1", "ep_large", 1), w.Format(hourFormat))))
	require.Nil(t, stored(db, key(keys.Rate("t1", "ep_large"), w.Format(hourFormat))))
}
