package deliver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// reads is how many endpoint reads the store was asked for: all of them,
// and of them the strongly consistent ones.
func (f *fixture) reads() (all, strong int) {
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
	return f.store.endpointReads, f.store.strongEndpointReads
}

func okFixture(t *testing.T) *fixture {
	return newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
}

// A batch reads its endpoint eventually consistent, and the instance keeps
// it for the TTL: the next batches within it read the deliveries and
// the gate only; the first after it reads the endpoint again.
func TestEndpointIsKeptForTheTTL(t *testing.T) {
	t.Parallel()
	f := okFixture(t)
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now), sqsMessage(t, "b", "1", f.now)))
	all, strong := f.reads()
	require.Equal(t, 1, all, "one read of the endpoint for the batch")
	require.Zero(t, strong, "eventually consistent")
	loads := f.store.loads

	f.now = f.now.Add(domain.DefaultEndpointCacheTTL - time.Millisecond)
	require.Empty(t, f.run(t, sqsMessage(t, "c", "1", f.now)))
	all, _ = f.reads()
	require.Equal(t, 1, all, "within the TTL: the endpoint is not read again")
	require.Equal(t, loads+1, f.store.loads, "one read: the deliveries and the gate")

	f.now = f.now.Add(time.Millisecond)
	require.Empty(t, f.run(t, sqsMessage(t, "d", "1", f.now)))
	all, strong = f.reads()
	require.Equal(t, 2, all, "after the TTL: read again")
	require.Zero(t, strong)
	require.EqualValues(t, 4, f.hits.Load())
}

// An endpoint disabled elsewhere (the API, another instance) is seen
// disabled at the latest by the first batch after the TTL; a disabled one
// is never kept, and read strongly consistent before a message goes dead
// by it, so that an enable is seen by the next batch.
func TestDisabledEndpointIsSeenWithinTheTTL(t *testing.T) {
	t.Parallel()
	f := okFixture(t)
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	e := f.store.endpoint("t1/ep_1")
	e.Disabled, e.DisabledReason = true, domain.DisabledByTenant
	f.store.setEndpoint(e)

	f.now = f.now.Add(domain.DefaultEndpointCacheTTL / 2)
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now)))
	require.EqualValues(t, 2, f.hits.Load(), "within the TTL the instance may still send by its copy")
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL / 2)
	require.Empty(t, f.run(t, sqsMessage(t, "c", "1", f.now)))
	require.EqualValues(t, 2, f.hits.Load(), "after the TTL: disabled")
	require.Equal(t, []domain.DeadReason{domain.ReasonEndpointDisabled}, f.queue.dlqReason)
	_, strong := f.reads()
	require.Equal(t, 1, strong, "disabled by the eventual read: read again strongly before the death")

	e.Disabled, e.DisabledReason = false, ""
	f.store.setEndpoint(e)
	require.Empty(t, f.run(t, sqsMessage(t, "d", "1", f.now)))
	require.EqualValues(t, 3, f.hits.Load(), "enabled: seen by the next batch, the TTL not run out")
}

// A missing endpoint is read strongly before its message goes dead, and
// never kept: one created a moment ago is found.
func TestMissingEndpointIsReadStronglyAndNotKept(t *testing.T) {
	t.Parallel()
	f := okFixture(t)
	e := f.store.endpoint("t1/ep_1")
	f.store.deleteEndpoint("t1/ep_1")
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	require.Equal(t, []domain.DeadReason{domain.ReasonEndpointNotFound}, f.queue.dlqReason)
	all, strong := f.reads()
	require.Equal(t, []int{2, 1}, []int{all, strong})
	f.store.setEndpoint(e)
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now)))
	require.EqualValues(t, 1, f.hits.Load(), "found by the next batch")
}

// A tenant's erasure is seen at the latest by the first batch after the
// TTL; once seen, it is kept (a tombstone stays 15 days).
func TestErasureIsSeenWithinTheTTL(t *testing.T) {
	t.Parallel()
	f := okFixture(t)
	ctx := context.Background()
	_, err := f.store.CreateTenant(ctx, domain.Tenant{TenantID: "t1"})
	require.NoError(t, err)
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	require.NoError(t, f.store.Tombstone(ctx, "t1"))

	f.now = f.now.Add(domain.DefaultEndpointCacheTTL)
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now)))
	require.EqualValues(t, 1, f.hits.Load(), "after the TTL: dropped, not sent")
	require.Empty(t, f.queue.dlq)
	require.Len(t, f.store.outcomes, 1, "only a's attempt is recorded")
	all, _ := f.reads()
	require.Empty(t, f.run(t, sqsMessage(t, "c", "1", f.now)))
	after, _ := f.reads()
	require.Equal(t, all, after, "the erasure is kept: not read again within the TTL")
	require.EqualValues(t, 1, f.hits.Load())
}

// What the instance writes to an endpoint (its failures, here) it reads
// again, strongly consistent, at the next batch, whatever the TTL.
func TestEndpointWrittenToIsReadAgainStrongly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	f.run(t, sqsMessage(t, "a", "1", f.now))
	require.Equal(t, 1, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	f.run(t, sqsMessage(t, "b", "1", f.now))
	all, strong := f.reads()
	require.Equal(t, []int{2, 1}, []int{all, strong})
	require.Equal(t, 2, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
}

// The cache holds at most its size, dropping the endpoint kept longest;
// an entry runs out at the TTL; forget drops one.
func TestEndpointCacheIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := newEndpointCache(func() time.Time { return now }, time.Second, 3)
	ref := func(i int) store.EndpointRef {
		return store.EndpointRef{TenantID: "t1", EndpointID: "ep_" + string(rune('a'+i))}
	}
	for i := range 5 {
		c.put(cachedEndpoint{ref: ref(i), found: true, endpoint: domain.Endpoint{EndpointID: ref(i).EndpointID}})
		now = now.Add(time.Millisecond)
	}
	require.Equal(t, 3, c.len())
	for i := range 5 {
		_, ok := c.get(ref(i))
		require.Equal(t, i >= 2, ok, "endpoint %d", i)
	}
	c.put(cachedEndpoint{ref: ref(2), found: true}) // kept again: now the newest
	c.put(cachedEndpoint{ref: ref(5), found: true})
	_, ok := c.get(ref(3))
	require.False(t, ok, "the oldest is dropped")
	_, ok = c.get(ref(2))
	require.True(t, ok)

	c.put(cachedEndpoint{ref: ref(6), found: true, endpoint: domain.Endpoint{Disabled: true}})
	c.put(cachedEndpoint{ref: ref(7)})
	for _, i := range []int{6, 7} {
		_, ok := c.get(ref(i))
		require.False(t, ok, "disabled and missing endpoints are not kept")
	}
	c.put(cachedEndpoint{ref: ref(7), erased: true})
	_, ok = c.get(ref(7))
	require.True(t, ok, "an erased tenant's is, found or not")

	c.forget(ref(7))
	_, ok = c.get(ref(7))
	require.False(t, ok)
	require.True(t, c.wasWritten(ref(7)))
	require.False(t, c.wasWritten(ref(7)), "once")

	now = now.Add(time.Second)
	_, ok = c.get(ref(2))
	require.False(t, ok, "run out at the TTL")
	require.LessOrEqual(t, c.len(), 3)
}
