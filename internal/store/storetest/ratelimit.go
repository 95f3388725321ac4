package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// rateSlots: a window's slots are taken in order from the first not past
// when the window is first taken, a take larger than
// what is left gets what is left, a full window grants none, concurrent
// takers never pass the limit between them, and the next window and
// another endpoint start afresh.
func rateSlots(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rate")
	w := u.clock.Now().Truncate(time.Second)

	got, err := s.TakeSlots(ctx, tenant, "ep_a", w.Add(250*time.Millisecond), 4, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 3, Granted: 4}, got, "the window's first taker starts at the first slot not past (0.3 s)")
	got, err = s.TakeSlots(ctx, tenant, "ep_a", w.Add(100*time.Millisecond), 2, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 7, Granted: 2}, got, "the same second, in order")
	got, err = s.TakeSlots(ctx, tenant, "ep_a", w, 5, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 9, Granted: 1}, got, "what is left")
	got, err = s.TakeSlots(ctx, tenant, "ep_a", w, 1, 10)
	require.NoError(t, err)
	require.Zero(t, got.Granted, "a full window grants none")
	got, err = s.TakeSlots(ctx, tenant, "ep_d", w.Add(950*time.Millisecond), 3, 10)
	require.NoError(t, err)
	require.Zero(t, got.Granted, "every slot of the second is past")
	got, err = s.TakeSlots(ctx, tenant, "ep_e", w.Add(500*time.Millisecond), 9, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 5, Granted: 5}, got, "at most the slots not past")

	got, err = s.TakeSlots(ctx, tenant, "ep_a", w.Add(time.Second), 20, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 0, Granted: 10}, got, "the next window starts afresh; at most the limit")
	got, err = s.TakeSlots(ctx, tenant, "ep_b", w, 3, 10)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 0, Granted: 3}, got, "another endpoint's windows are its own")

	// Concurrent takers: 8 of them, 3 slots each, a limit of 10.
	next := w.Add(5 * time.Second)
	var (
		mu    sync.Mutex
		total int
		seen  = map[int]bool{}
		wg    sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := s.TakeSlots(ctx, tenant, "ep_c", next, 3, 10)
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			total += g.Granted
			for i := g.First; i < g.First+g.Granted; i++ {
				require.False(t, seen[i], "slot %d granted twice", i)
				seen[i] = true
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, total, 10, "never more than the limit between concurrent takers")
	require.GreaterOrEqual(t, total, 9, "and a full window's worth, or nearly, is taken")
}

// rateLimitField: an endpoint's rate limit is stored on create, changed
// by an update, and removed by an update to 0.
func rateLimitField(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rlf")
	e, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_1", URL: "https://example.com/x", RateLimit: 10})
	require.NoError(t, err)
	require.Equal(t, 10, e.RateLimit)
	three, zero := 3, 0
	e, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{RateLimit: &three})
	require.NoError(t, err)
	require.Equal(t, 3, e.RateLimit)
	got, err := s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Equal(t, 3, got.RateLimit)
	_, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{RateLimit: &zero})
	require.NoError(t, err)
	got, err = s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Zero(t, got.RateLimit)
}

// rateShards: a window of a large limit (85: 8 shards of 11 or 10 slots)
// grants one shard's slots a call, every slot once, and all of them, to
// callers in turn, and a full window none; only slots not past, when the
// window is first taken late; to concurrent takers never more than the
// limit; a window of a small limit (15: one shard) grants it whole.
func rateShards(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rate_shards")
	w := u.clock.Now().Truncate(time.Second)
	takeAll := func(ep string, at time.Time, limit int) map[int]bool {
		seen := map[int]bool{}
		for range store.RateShards {
			g, err := s.TakeSlots(ctx, tenant, ep, at, 100, limit)
			require.NoError(t, err)
			require.LessOrEqual(t, g.Granted, (limit+store.RateShards-1)/store.RateShards, "one shard's slots a call")
			for i := range g.Granted {
				require.False(t, seen[g.Slot(i)], "slot %d granted twice", g.Slot(i))
				seen[g.Slot(i)] = true
			}
		}
		g, err := s.TakeSlots(ctx, tenant, ep, at, 100, limit)
		require.NoError(t, err)
		require.Zero(t, g.Granted, "a full window grants none")
		return seen
	}
	all := map[int]bool{}
	for i := range 85 {
		all[i] = true
	}
	require.Equal(t, all, takeAll("ep_a", w, 85), "every slot, once")
	late := map[int]bool{}
	for i := 43; i < 85; i++ { // 0.5 s in: 42.5 slots past
		late[i] = true
	}
	require.Equal(t, late, takeAll("ep_p", w.Add(500*time.Millisecond), 85), "the slots not past")

	g, err := s.TakeSlots(ctx, tenant, "ep_small", w, 100, 15)
	require.NoError(t, err)
	require.Equal(t, store.Slots{First: 0, Granted: 15}, g, "a small limit's window is one shard")

	var (
		mu    sync.Mutex
		total int
		seen  = map[int]bool{}
		wg    sync.WaitGroup
	)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := s.TakeSlots(ctx, tenant, "ep_c", w.Add(5*time.Second), 5, 85)
			require.NoError(t, err)
			mu.Lock()
			defer mu.Unlock()
			total += g.Granted
			for i := range g.Granted {
				require.False(t, seen[g.Slot(i)], "slot %d granted twice", g.Slot(i))
				require.Less(t, g.Slot(i), 85)
				seen[g.Slot(i)] = true
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, total, 85, "never more than the limit between concurrent takers")
	require.GreaterOrEqual(t, total, 85-11, "and nearly a full window's worth is taken")
}
