package deliver

import (
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/signing"
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

// What the instance writes to an endpoint's failure count it knows: a
// count that moved nothing else, or a reset, patches its copy, and the
// next batch reads nothing (issue 37); a count that marked the endpoint
// failing (and opened its breaker) drops the copy, and the next batch
// reads it again, strongly consistent, whatever the TTL.
func TestEndpointWrittenToIsPatchedOrReadAgainStrongly(t *testing.T) {
	t.Parallel()
	status := atomic.Int32{}
	status.Store(503)
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	f.run(t, sqsMessage(t, "a", "1", f.now))
	require.Equal(t, 1, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	all, strong := f.reads()
	require.Equal(t, []int{1, 0}, []int{all, strong})
	status.Store(200)
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now)))
	all, strong = f.reads()
	require.Equal(t, []int{1, 0}, []int{all, strong}, "the count's result kept: no read")
	require.Equal(t, 1, f.store.resets, "the kept copy showed the failure: reset")
	require.Equal(t, 0, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	require.Empty(t, f.run(t, sqsMessage(t, "c", "1", f.now)))
	all, _ = f.reads()
	require.Equal(t, 1, all, "the reset's result kept: no read")
	require.Equal(t, 1, f.store.resets, "nothing left to reset")

	// A count that marks the endpoint failing: read again, strongly.
	g := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	g.h.Config.FailingAfter = 1
	g.run(t, sqsMessage(t, "a", "1", g.now))
	require.NotNil(t, g.store.endpoint("t1/ep_1").FailingSince)
	g.run(t, sqsMessage(t, "b", "1", g.now))
	all, strong = g.reads()
	require.Equal(t, []int{2, 1}, []int{all, strong})
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

// stampedMessage is sqsMessage of event type eventType, carrying the
// endpoint revision its sender read.
func stampedMessage(t *testing.T, id string, revision int64, eventType string, occurred time.Time) events.SQSMessage {
	t.Helper()
	m := sqsMessage(t, id, "1", occurred)
	msg, err := message.Decode(m.Body)
	require.NoError(t, err)
	msg.EndpointRevision, msg.EventType = revision, eventType
	body, err := message.Encode(msg)
	require.NoError(t, err)
	m.Body = string(body)
	return m
}

// signedFixture is a fixture whose receiver keeps the last request's
// headers and body; signedBy reports whether a secret signed it.
type signedFixture struct {
	*fixture
	mu     sync.Mutex
	header http.Header
	body   []byte
}

func newSignedFixture(t *testing.T) *signedFixture {
	sf := &signedFixture{}
	sf.fixture = newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sf.mu.Lock()
		sf.header, sf.body = r.Header.Clone(), body
		sf.mu.Unlock()
		w.WriteHeader(200)
	})
	return sf
}

func (sf *signedFixture) signedBy(t *testing.T, secret string) bool {
	t.Helper()
	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)
	sf.mu.Lock()
	defer sf.mu.Unlock()
	return v.VerifyRequest(sf.header, sf.body) == nil
}

// rotate rotates t1/ep_1's secret as the API does (store.RotateSecret, the
// old one retiring for an hour) and returns the new one and the endpoint's
// revision after it.
func (sf *signedFixture) rotate(t *testing.T) (string, int64) {
	t.Helper()
	secret, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	e, err := sf.store.RotateSecret(context.Background(), "t1", "ep_1", store.Rotation{Sealed: sf.seal(t, "t1", "ep_1", secret), Grace: time.Hour})
	require.NoError(t, err)
	return secret, e.Revision
}

// The revert's failure (issue 25): an instance keeps the endpoint from
// before a rotation, and a message made after it (enqueue read the new
// revision) comes within the TTL. It is signed with the new secret, beside
// the retiring one: the kept copy is older than the message's revision, so
// the endpoint is read again (strongly consistent if the replica read is
// older still: TestAReplicaBehindTheMessagesRevisionIsReadAgainStrongly).
func TestRotatedSecretSignsAMessageStampedAfterTheRotation(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	old := f.secret
	require.Empty(t, f.run(t, stampedMessage(t, "a", 0, "order.created", f.now)))
	require.True(t, f.signedBy(t, old))

	secret, rev := f.rotate(t)
	require.Positive(t, rev, "a rotation is a new revision")
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL / 2) // the pre-rotation copy is still kept
	require.Empty(t, f.run(t, stampedMessage(t, "b", rev, "order.created", f.now)))
	require.True(t, f.signedBy(t, secret), "signed with the new secret")
	require.True(t, f.signedBy(t, old), "and with the retiring one, for its grace")
	all, strong := f.reads()
	require.Equal(t, []int{2, 0}, []int{all, strong}, "the kept copy was too old: read again (the replica answered the rotation: no strong read needed)")

	require.Empty(t, f.run(t, stampedMessage(t, "c", rev, "order.created", f.now)))
	require.True(t, f.signedBy(t, secret))
	all, _ = f.reads()
	require.Equal(t, 2, all, "the copy read is kept: the next message of that revision reads nothing")
}

// A replica behind the rotation: the eventually consistent read answers
// with the endpoint from before it, older than the message's revision, so
// it is read again strongly consistent.
func TestAReplicaBehindTheMessagesRevisionIsReadAgainStrongly(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	before := f.store.endpoint("t1/ep_1")
	secret, rev := f.rotate(t)
	f.store.mu.Lock()
	f.store.lagging = map[store.EndpointRef]domain.Endpoint{{TenantID: "t1", EndpointID: "ep_1"}: before}
	f.store.mu.Unlock()

	require.Empty(t, f.run(t, stampedMessage(t, "a", rev, "order.created", f.now)))
	require.True(t, f.signedBy(t, secret))
	all, strong := f.reads()
	require.Equal(t, []int{2, 1}, []int{all, strong})

	// A message of an earlier version (no revision) takes what the replica
	// answers: the TTL bounds its age, as before.
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL)
	require.Empty(t, f.run(t, stampedMessage(t, "b", 0, "order.created", f.now)))
	all, strong = f.reads()
	require.Equal(t, []int{3, 1}, []int{all, strong})
}

// A test event (POST /v1/endpoints/{id}/test) and a resend are sent by the
// endpoint as it is, read strongly consistent, whatever the instance keeps
// and whatever revision they carry: a tenant sends them right after a
// change, and enqueue's read of the endpoints is eventually consistent.
func TestTestEventsAndResendsReadTheEndpointStrongly(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	secret, _ := f.rotate(t)
	require.Empty(t, f.run(t, stampedMessage(t, "b", 0, domain.TestEventType, f.now)))
	require.True(t, f.signedBy(t, secret), "the test event, signed with the new secret")
	_, strong := f.reads()
	require.Equal(t, 1, strong)

	m := sqsMessage(t, "c", "1", f.now)
	msg, err := message.Decode(m.Body)
	require.NoError(t, err)
	msg.Resend = true
	body, err := message.Encode(msg)
	require.NoError(t, err)
	m.Body = string(body)
	f.run(t, m)
	_, strong = f.reads()
	require.Equal(t, 2, strong, "a resend reads strongly too")
}

// On the store over the fake DynamoDB: a batch whose endpoint the instance
// keeps reads its delivery and gate only (one BatchGetItem, strongly
// consistent), and nothing of the tenant's partition, TENANT#<t>, where
// the endpoint and the tombstone are; the first batch, and the first after
// the TTL, read them too, eventually consistent (half a unit each), in a
// request beside the strong one.
func TestACacheHitReadsNoEndpointFromDynamoDB(t *testing.T) {
	t.Parallel()
	f := okFixture(t)
	db := dynamofake.NewDB(store.IndexTenant)
	db.Limits, db.Now = dynamofake.DynamoDBLimits(), func() time.Time { return f.now }
	s := store.New(db, "state")
	s.Now = func() time.Time { return f.now }
	require.NoError(t, s.PutEndpoint(context.Background(), f.store.endpoint("t1/ep_1")))
	f.h.Store = s
	tenantRCU := func() float64 {
		for _, c := range db.Hottest() {
			if c.Index == "" && c.Key == "TENANT#t1" {
				return c.RCU
			}
		}
		return 0
	}

	db.ResetCalls()
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	require.Equal(t, 2, db.Calls("BatchGetItem"), "the delivery and the gate; the endpoint and the tombstone")
	require.ElementsMatch(t, []bool{true, false}, db.Consistent(), "side by side, in either order")
	require.InDelta(t, 1.0, tenantRCU(), 1e-9, "the endpoint and the tombstone, eventually consistent")

	db.ResetCalls()
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL - time.Millisecond)
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now), sqsMessage(t, "c", "1", f.now)))
	require.Equal(t, 1, db.Calls("BatchGetItem"), "a hit: the deliveries and the gate only")
	require.ElementsMatch(t, []bool{true, false, true}, db.Consistent())
	require.InDelta(t, 1.0, tenantRCU(), 1e-9, "nothing more read of TENANT#t1 in that second")
	require.Zero(t, db.Calls("GetItem")+db.Calls("Query"), "nor one by one")

	f.now = f.now.Add(time.Millisecond)
	require.Empty(t, f.run(t, sqsMessage(t, "d", "1", f.now)))
	require.ElementsMatch(t, []bool{true, false, true, true, false}, db.Consistent(), "after the TTL: read again, eventually consistent")
	require.EqualValues(t, 4, f.hits.Load())
}

// A batch that both resets an endpoint's count (a success) and counts a
// failure against it makes one write (the reset and the failures after
// the batch's last success), whose result is the instance's copy: the
// next batch reads nothing, and decides by the patched copy (a success
// resets again only when the write left failures).
func TestResetAndCountInOneBatchAreOneWritePatched(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") == "bad" {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	f.failedBefore(3)
	f.run(t, sqsMessage(t, "bad", "1", f.now), sqsMessage(t, "good", "1", f.now))
	calls := f.store.healthCalls()
	require.Len(t, calls, 1, "one write for the endpoint")
	require.True(t, calls[0].reset)
	left := f.store.endpoint("t1/ep_1").ConsecutiveFailures
	require.Equal(t, calls[0].n, left, "the failure counted, or not when the success came after it")
	f.run(t, sqsMessage(t, "next", "1", f.now))
	all, strong := f.reads()
	require.Equal(t, []int{1, 0}, []int{all, strong}, "the first batch's read only")
	wantResets := 1
	if left > 0 {
		wantResets = 2
	}
	require.Equal(t, wantResets, f.store.resets, "the next success resets by the patched copy")
}

// An endpoint's health is written as soon as its own attempts of the batch
// end: a request to another endpoint still out does not hold its recovery
// (the reset, and endpoint.recovered's episode ending) until the batch's
// end.
func TestHealthIsWrittenWhenTheEndpointsOwnAttemptsEnd(t *testing.T) {
	t.Parallel()
	f, release := holdingFixture(t, "slow")
	f.failedBefore(4)
	other := f.store.endpoint("t1/ep_1")
	other.EndpointID, other.ConsecutiveFailures = "ep_2", 0
	other.SealedSecrets = []string{f.seal(t, "t1", "ep_2", f.secret)}
	f.store.setEndpoint(other)
	done := make(chan []string)
	go func() {
		done <- f.run(t, sqsMessage(t, "fast", "1", f.now), endpointMessage(t, "slow", "ep_2", "1", f.now))
	}()
	require.Eventually(t, func() bool { return f.store.endpoint("t1/ep_1").ConsecutiveFailures == 0 }, 5*time.Second, 5*time.Millisecond,
		"ep_1 reset while ep_2's request is still out")
	require.Equal(t, []healthWrite{{reset: true}}, f.store.healthCalls())
	close(release)
	require.Empty(t, <-done)
	require.Equal(t, []healthWrite{{reset: true}}, f.store.healthCalls(), "ep_2's clean success writes nothing")
}
