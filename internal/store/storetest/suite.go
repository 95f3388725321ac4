package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// Clock is the suite's clock: the wall clock when the subtest began,
// moved only by Advance.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at t, for the consumers' unit tests too.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Bundle is what one case runs on (river's riverdrivertest setup bundle):
// the store under test and the clock it reads time from.
type Bundle struct {
	// Store is the store under test; it reads time from Clock.Now.
	Store Store
	// Clock is the case's clock, which the case moves with Advance; it
	// starts at the wall clock (NewClock(time.Now().UTC())), since records
	// expire by TTL on a real table.
	Clock *Clock
}

// Setup returns a fresh bundle for one case, called once per case; it
// cleans up through t.Cleanup. Cases run in parallel: a bundle of the fake
// may be a store of its own, one of the local cloud the shared table (each
// case writes under ids of its own).
type Setup func(ctx context.Context, t *testing.T) *Bundle

// suite is one subtest's store, clock and fresh ids.
type suite struct {
	s     Store
	clock *Clock
	// run makes the subtest's ids unique to this run.
	run string
}

func (u *suite) id(name string) string { return name + "_" + u.run }

// eventAt is the time of the suite's events, which names their deliveries.
var eventAt = time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)

// event is the event a delivery of the suite is of.
func event(d domain.Delivery) domain.Event { return domain.Event{ID: d.EventID, OccurredAt: eventAt} }

// delivery is a delivery of event ev (made unique) of tenant to endpoint.
func (u *suite) delivery(tenant, endpoint, ev string) domain.Delivery {
	ev = u.id(ev)
	return domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, endpoint, eventAt), TenantID: tenant, EndpointID: endpoint, EventID: ev, EventType: "a.b"}
}

// current reads a delivery as deliver does: one with no record yet is the
// message's ids.
func (u *suite) current(t *testing.T, d domain.Delivery) domain.Delivery {
	t.Helper()
	cur, err := u.s.Delivery(context.Background(), d.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return d
	}
	require.NoError(t, err)
	return cur
}

func (u *suite) depth(t *testing.T, tenant string) int {
	t.Helper()
	all, err := u.s.DLQDepths(context.Background())
	require.NoError(t, err)
	return all[tenant]
}

// dead lists every dead delivery of tenant that f selects, page by page of
// limit, and the number of pages read.
func (u *suite) dead(t *testing.T, tenant string, f domain.DeadFilter, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		ds, next, err := u.s.ListDead(context.Background(), tenant, f, limit, cursor)
		require.NoError(t, err)
		require.LessOrEqual(t, len(ds), limit)
		pages++
		for _, d := range ds {
			require.Equal(t, tenant, d.TenantID)
			require.Equal(t, domain.StateDead, d.State)
			ids = append(ids, d.DeliveryID)
		}
		if next == "" {
			return ids, pages
		}
		require.Less(t, pages, 100, "the cursors run in a circle")
		cursor = next
	}
}

// runs numbers the cases' runs, so that cases started in the same
// nanosecond write under different ids.
var runs atomic.Int64

// Run runs every case in parallel, each on the bundle setup returns for it.
func Run(t *testing.T, setup Setup) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t.Context(), t)
			require.NotNil(t, b.Store, "the bundle's store")
			require.NotNil(t, b.Clock, "the bundle's clock")
			u := &suite{s: b.Store, clock: b.Clock, run: fmt.Sprintf("%x%02x", time.Now().UnixNano(), runs.Add(1))}
			c.run(t, u)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, u *suite)
}

var cases = []testCase{
	{"tenants and keys: created once, a key finds its tenant until revoked", tenantsAndKeys},
	{"a tenant's expensive API requests: limit a second, each tenant its own window", apiRate},
	{"portal links: stored by hash for an existing tenant, read expired or revoked as they are, revoked by id", portalLinks},
	{"endpoints: created once, read, changed field by field, deleted", endpointLifecycle},
	{"endpoints list per tenant in id order, page by page", endpointPages},
	{"endpoints count per tenant, up to the bound asked, a delete counted at once", endpointCount},
	{"a rotation retires the current secret sealed, and loses no concurrent one", rotation},
	{"signature schemes and Ed25519 keys: stored, switched, rotated with the secret", signingKeys},
	{"enabling clears the failure count; disabling names the tenant", enabling},
	{"every write of an endpoint's configuration is a new revision; its health writes are not", revisions},
	{"endpoint failures count up, mark failing and disable once each, and recover once", endpointHealth},
	{"the circuit breaker opens with the failing mark, doubles its cooldown per failed probe only, and closes on a success", breaker},
	{"a run of failures disables only once it has lasted the time asked for", patientDisable},
	{"gate slots: held by one caller at a time, free again when released or run out; the probe apart", gateSlots},
	{"a tenant's gate: apart from its endpoints' gates and other tenants', a rested slot held until its rest ends", tenantGate},
	{"deaths add up in their window, the first few kept whole", deadWindows},
	{"the first attempt writes the whole record; later attempts keep its creation attributes", firstAttempt},
	{"attempts append, dead is listed per tenant and counted, delivered never regresses", attempts},
	{"the attempt log keeps the newest entries", attemptLog},
	{"a batch read finds what exists; consistent or not", batchRead},
	{"a death recorded before the last attempt is listed, counted once, and undone by a success", deathBeforeLastAttempt},
	{"two copies attempted at once: both attempts are logged and counted", concurrentAttempts},
	{"a write on a record that changed since it was read moves nothing, the count included", unchangedOnly},
	{"replay claims: one winner, resumable, stale claims taken over, the count moved", claims},
	{"the dead listing: oldest first, filtered, paged, cursors bound to their query", deadListing},
	{"the delivery log: newest first, filtered by endpoint, type, state, status and time, paged, kept by the record's writes", deliveryLog},
	{"the reconciliation agrees with a counter that every move kept, once it settled", reconcile},
	{"a burst of one tenant's deaths, then their replays, all at once: the depth is exact throughout", depthBurst},
	{"rejections are readable by key", rejections},
	{"jobs: versions, slots per tenant, idle ones found", jobs},
	{"the DLQ sweep is claimed once per gap", sweep},
	{"endpoint stats add up per hour, read by range, keep the newest success and failure", endpointStats},
	{"endpoint stats of many batches of an hour add up to one bucket, the newest success and failure of them all", endpointStatsSpread},
	{"endpoint stats by event type add up per hour and type over the shards, kept apart by type, endpoint and tenant, read by range", endpointTypeStats},
	{"a resend's attempts are logged on a delivered delivery, which stays delivered", resendAttempts},
	{"rate limit: stored on create, changed by an update, removed by an update to 0", rateLimitField},
	{"an endpoint's own retry schedule and timeout: stored on create, changed apart, removed by an update to [] and 0", endpointSettingsFields},
	{"a failure-rate alert: stored, changed; its degraded mark set once per episode, cleared once, removed with a change of the alert", degradedMarks},
	{"rate slots: a window grants at most its limit between concurrent takers, windows and endpoints apart", rateSlots},
	{"rate slots of a large limit: shards grant every slot once, at most the limit between concurrent takers", rateShards},
	{"cancel: a pending or unrecorded delivery once; a delivered or dead one wins; an attempt under way keeps it cancelled, a replay's revives it", cancels},
	{"a tenant's erasure: tombstone first, then every kind of its items, and nothing of another's", erasure},
	{"first attempts delivered, packed in outcome pages: read by id and in batches, listed with the records, resent, erased", packedOutcomes},
}

func resendAttempts(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_resend")
	d := u.delivery(tenant, "ep", "evt_resend")
	now := u.clock.Now()
	require.ErrorIs(t, s.RecordResendAttempt(ctx, d, domain.Attempt{Number: 1, At: now, Status: 200}), store.ErrNotFound, "no record")
	require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: now, Status: 500}, domain.Outcome{State: domain.StatePending}))
	require.ErrorIs(t, s.RecordResendAttempt(ctx, u.current(t, d), domain.Attempt{Number: 1, At: now, Status: 200}), store.ErrNotFound, "pending: not a resend's")
	require.NoError(t, s.RecordAttempt(ctx, u.current(t, d), domain.Attempt{Number: 2, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))

	read := u.current(t, d)
	u.clock.Advance(time.Minute)
	require.NoError(t, s.RecordResendAttempt(ctx, read, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 503, Error: "http_503"}))
	// A second one from the same stale read: appended to the record as it is.
	require.NoError(t, s.RecordResendAttempt(ctx, read, domain.Attempt{Number: 2, At: u.clock.Now(), Status: 200}))
	got := u.current(t, d)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Equal(t, 2, got.Attempts, "a resend's attempts are not the delivery's")
	require.Equal(t, 200, got.LastStatus)
	require.Equal(t, 2, got.Resends)
	require.Len(t, got.AttemptLog, 4)
	require.False(t, got.AttemptLog[1].Resend)
	require.True(t, got.AttemptLog[2].Resend)
	require.Equal(t, 503, got.AttemptLog[2].Status)
	require.True(t, got.AttemptLog[3].Resend)
	require.Equal(t, 200, got.AttemptLog[3].Status)
}

func tenantsAndKeys(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_keys")
	made, err := s.CreateTenant(ctx, domain.Tenant{TenantID: tenant, Name: "Acme"})
	require.NoError(t, err)
	require.Equal(t, u.clock.Now(), made.CreatedAt)
	u.clock.Advance(time.Second)
	_, err = s.CreateTenant(ctx, domain.Tenant{TenantID: tenant, Name: "Other"})
	require.ErrorIs(t, err, store.ErrExists)
	got, err := s.Tenant(ctx, tenant)
	require.NoError(t, err)
	require.Equal(t, "Acme", got.Name, "the second create changed nothing")
	require.True(t, made.CreatedAt.Equal(got.CreatedAt))
	_, err = s.Tenant(ctx, u.id("t_nobody"))
	require.ErrorIs(t, err, store.ErrNotFound)

	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k0", TenantID: u.id("t_nobody"), Hash: u.id("h0")})
	require.ErrorIs(t, err, store.ErrNotFound, "a key needs its tenant")
	_, err = s.TenantForKey(ctx, u.id("h0"))
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, k := range []string{"k1", "k2"} {
		_, err := s.PutAPIKey(ctx, domain.APIKey{KeyID: k, TenantID: tenant, Hash: u.id("h_" + k)})
		require.NoError(t, err)
	}
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k3", TenantID: tenant, Hash: u.id("h_k1")})
	require.Error(t, err, "a hash is stored once")
	owner, err := s.TenantForKey(ctx, u.id("h_k1"))
	require.NoError(t, err)
	require.Equal(t, tenant, owner)

	require.ErrorIs(t, s.RevokeAPIKey(ctx, u.id("t_other"), "k1"), store.ErrNotFound, "another tenant's key is as good as missing")
	require.ErrorIs(t, s.RevokeAPIKey(ctx, tenant, "k_missing"), store.ErrNotFound)
	require.NoError(t, s.RevokeAPIKey(ctx, tenant, "k1"))
	require.NoError(t, s.RevokeAPIKey(ctx, tenant, "k1"), "revoking twice is harmless")
	_, err = s.TenantForKey(ctx, u.id("h_k1"))
	require.ErrorIs(t, err, store.ErrNotFound, "a revoked key finds nothing")
	owner, err = s.TenantForKey(ctx, u.id("h_k2"))
	require.NoError(t, err)
	require.Equal(t, tenant, owner, "the other key still works")
}

func endpointLifecycle(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_ep")
	e := domain.Endpoint{TenantID: tenant, EndpointID: "ep_1", URL: "https://example.com/1", SealedSecrets: []string{"sealed_1"}, EventTypes: []string{"a.*"}}
	made, err := s.CreateEndpoint(ctx, e)
	require.NoError(t, err)
	require.Equal(t, u.clock.Now(), made.CreatedAt)
	_, err = s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_1", URL: "https://example.com/1", SealedSecrets: []string{"sealed_1"}})
	require.NoError(t, err, "a create at the existing one's instant is its own retry (the SDK's, after a lost answer)")
	u.clock.Advance(time.Second)
	_, err = s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_1", URL: "https://example.com/other"})
	require.ErrorIs(t, err, store.ErrExists)
	got, err := s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Equal(t, "https://example.com/1", got.URL)
	require.Equal(t, []string{"sealed_1"}, got.SealedSecrets)
	require.Equal(t, []string{"a.*"}, got.EventTypes)
	require.False(t, got.Disabled)
	_, err = s.Endpoint(ctx, u.id("t_other"), "ep_1")
	require.ErrorIs(t, err, store.ErrNotFound, "endpoints are per tenant")

	u.clock.Advance(time.Minute)
	url, desc, types, headers := "https://example.com/2", "the second", []string{"b.c"}, map[string]string{"X-A": "1"}
	changed, err := s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{URL: &url, Description: &desc, EventTypes: &types, Headers: &headers})
	require.NoError(t, err)
	require.Equal(t, url, changed.URL)
	require.Equal(t, desc, changed.Description)
	require.Equal(t, types, changed.EventTypes)
	require.Equal(t, headers, changed.Headers)
	require.NotNil(t, changed.UpdatedAt)
	require.True(t, u.clock.Now().Equal(*changed.UpdatedAt))
	require.Equal(t, []string{"sealed_1"}, changed.SealedSecrets, "what the change does not name stays")
	got, err = s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Equal(t, changed, got)

	empty, none, noHeaders := "", []string{}, map[string]string{}
	changed, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{Description: &empty, EventTypes: &none, Headers: &noHeaders})
	require.NoError(t, err)
	require.Empty(t, changed.Description, "emptied fields are removed")
	require.Empty(t, changed.EventTypes)
	require.Empty(t, changed.Headers)
	require.Equal(t, url, changed.URL)
	_, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{})
	require.NoError(t, err, "a change of nothing is a change")
	_, err = s.UpdateEndpoint(ctx, tenant, "ep_missing", store.EndpointChange{URL: &url})
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Endpoint(ctx, tenant, "ep_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "an update creates nothing")

	require.NoError(t, s.DeleteEndpoint(ctx, tenant, "ep_1"))
	require.ErrorIs(t, s.DeleteEndpoint(ctx, tenant, "ep_1"), store.ErrNotFound)
	_, err = s.Endpoint(ctx, tenant, "ep_1")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func endpointCount(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, other := u.id("t_count"), u.id("t_count_other")
	n, err := s.CountEndpoints(ctx, tenant, 10)
	require.NoError(t, err)
	require.Zero(t, n, "a tenant without endpoints")
	for _, id := range []string{"ep_a", "ep_b", "ep_c", "ep_d", "ep_e"} {
		_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: id, URL: "https://example.com/" + id})
		require.NoError(t, err)
	}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: other, EndpointID: "ep_x", URL: "https://example.com/x"}))
	for upTo, want := range map[int]int{1: 1, 3: 3, 5: 5, 6: 5, 100: 5} {
		n, err := s.CountEndpoints(ctx, tenant, upTo)
		require.NoError(t, err)
		require.Equal(t, want, n, "counted up to %d", upTo)
	}
	require.NoError(t, s.DeleteEndpoint(ctx, tenant, "ep_c"))
	n, err = s.CountEndpoints(ctx, tenant, 100)
	require.NoError(t, err)
	require.Equal(t, 4, n, "the count reads what the delete wrote (strongly consistent)")
	n, err = s.CountEndpoints(ctx, other, 100)
	require.NoError(t, err)
	require.Equal(t, 1, n, "another tenant's endpoints are its own")
}

func endpointPages(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, other := u.id("t_pages"), u.id("t_pages_other")
	want := []string{"ep_a", "ep_b", "ep_c", "ep_d", "ep_e"}
	for _, id := range []string{"ep_c", "ep_a", "ep_e", "ep_b", "ep_d"} {
		_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: id, URL: "https://example.com/" + id})
		require.NoError(t, err)
	}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: other, EndpointID: "ep_x", URL: "https://example.com/x"}))

	all, err := s.Endpoints(ctx, tenant)
	require.NoError(t, err)
	var ids []string
	for _, e := range all {
		ids = append(ids, e.EndpointID)
	}
	require.Equal(t, want, ids)

	ids, cursor := nil, ""
	for pages := 1; ; pages++ {
		es, next, err := s.ListEndpoints(ctx, tenant, 2, cursor)
		require.NoError(t, err)
		require.LessOrEqual(t, len(es), 2)
		for _, e := range es {
			require.Equal(t, tenant, e.TenantID)
			ids = append(ids, e.EndpointID)
		}
		if next == "" {
			break
		}
		require.Less(t, pages, 10)
		cursor = next
	}
	require.Equal(t, want, ids, "every endpoint once, in id order")
	// A page may be short of its limit (DynamoDB stops a query at 1 MB)
	// and still carry a cursor; one that carries none is the last.
	es, _, err := s.ListEndpoints(ctx, tenant, 10, "")
	require.NoError(t, err)
	require.NotEmpty(t, es)
	require.Equal(t, want[:len(es)], func() []string {
		var ids []string
		for _, e := range es {
			ids = append(ids, e.EndpointID)
		}
		return ids
	}())
	_, _, err = s.ListEndpoints(ctx, tenant, 2, "not base64!")
	require.ErrorIs(t, err, store.ErrBadCursor)
}

func rotation(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rot")
	_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_s", URL: "https://example.com/s", SealedSecrets: []string{"sealed_1"}})
	require.NoError(t, err)
	got, err := s.RotateSecret(ctx, tenant, "ep_s", store.Rotation{Sealed: "sealed_2", Grace: time.Hour})
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_2"}, got.SealedSecrets)
	require.Equal(t, "sealed_1", got.SealedRetiringSecret)
	require.NotNil(t, got.RetiringUntil)
	require.True(t, u.clock.Now().Add(time.Hour).Equal(*got.RetiringUntil))
	read, err := s.Endpoint(ctx, tenant, "ep_s")
	require.NoError(t, err)
	require.Equal(t, got, read)

	// An endpoint written before secrets were sealed.
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_p", URL: "https://example.com/p", Secrets: []string{"whsec_plain"}}))
	_, err = s.RotateSecret(ctx, tenant, "ep_p", store.Rotation{Sealed: "sealed_new"})
	require.Error(t, err, "a plaintext secret retires sealed or not at all")
	seal := func(_ context.Context, plain string) (string, error) { return "sealed(" + plain + ")", nil }
	got, err = s.RotateSecret(ctx, tenant, "ep_p", store.Rotation{Sealed: "sealed_new", Grace: time.Minute, Seal: seal})
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_new"}, got.SealedSecrets)
	require.Equal(t, "sealed(whsec_plain)", got.SealedRetiringSecret)
	require.Empty(t, got.Secrets, "no plaintext stays behind")
	require.Empty(t, got.RetiringSecret)

	// A rotation that another overtakes while it seals loses, and the
	// winner's secret stays.
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_race", URL: "https://example.com/r", Secrets: []string{"whsec_old"}}))
	overtaken := func(ctx context.Context, plain string) (string, error) {
		_, err := s.RotateSecret(ctx, tenant, "ep_race", store.Rotation{Sealed: "sealed_winner", Seal: seal})
		require.NoError(t, err)
		return seal(ctx, plain)
	}
	_, err = s.RotateSecret(ctx, tenant, "ep_race", store.Rotation{Sealed: "sealed_loser", Seal: overtaken})
	require.ErrorIs(t, err, store.ErrConflict)
	read, err = s.Endpoint(ctx, tenant, "ep_race")
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_winner"}, read.SealedSecrets)

	_, err = s.RotateSecret(ctx, tenant, "ep_missing", store.Rotation{Sealed: "x"})
	require.ErrorIs(t, err, store.ErrNotFound)
}

// revisions: a change, a rotation, a disable and an enable each add one to
// the endpoint's revision (deliver's cache compares it with the revision a
// message was made against); a health write (a failure, its reset,
// deliver's own disable) does not.
func revisions(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rev")
	created, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com", SealedSecrets: []string{"sealed_1"}})
	require.NoError(t, err)
	require.Zero(t, created.Revision)
	url := "https://example.com/2"
	writes := []func() (domain.Endpoint, error){
		func() (domain.Endpoint, error) {
			return s.UpdateEndpoint(ctx, tenant, "ep", store.EndpointChange{URL: &url})
		},
		func() (domain.Endpoint, error) {
			return s.RotateSecret(ctx, tenant, "ep", store.Rotation{Sealed: "sealed_2", Grace: time.Hour})
		},
		func() (domain.Endpoint, error) { return s.SetEndpointEnabled(ctx, tenant, "ep", false) },
		func() (domain.Endpoint, error) { return s.SetEndpointEnabled(ctx, tenant, "ep", true) },
	}
	for i, write := range writes {
		got, err := write()
		require.NoError(t, err)
		require.EqualValues(t, i+1, got.Revision, "write %d", i)
		read, err := s.Endpoint(ctx, tenant, "ep")
		require.NoError(t, err)
		require.EqualValues(t, i+1, read.Revision)
	}
	_, err = countFailures(ctx, s, tenant, "ep", 1, store.HealthThresholds{FailingAfter: 2})
	require.NoError(t, err)
	_, err = resetFailures(ctx, s, tenant, "ep")
	require.NoError(t, err)
	read, err := s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.EqualValues(t, len(writes), read.Revision, "health writes keep the revision")
}

func enabling(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_enable")
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com"}))
	got, err := s.SetEndpointEnabled(ctx, tenant, "ep", false)
	require.NoError(t, err)
	require.True(t, got.Disabled)
	require.Equal(t, domain.DisabledByTenant, got.DisabledReason)
	require.NotNil(t, got.DisabledAt, "a disable records when")
	for range 2 {
		_, err := countFailures(ctx, s, tenant, "ep", 1, store.HealthThresholds{FailingAfter: 2})
		require.NoError(t, err)
	}
	got, err = s.SetEndpointEnabled(ctx, tenant, "ep", true)
	require.NoError(t, err)
	require.False(t, got.Disabled)
	require.Empty(t, got.DisabledReason)
	require.Nil(t, got.DisabledAt, "an enable clears when it was disabled")
	require.NotNil(t, got.FailingSince, "an enable keeps the failing mark: the next success is a recovery")
	require.Zero(t, got.ConsecutiveFailures)
	read, err := s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.Equal(t, got, read)
	_, err = s.SetEndpointEnabled(ctx, tenant, "ep_missing", true)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func endpointHealth(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_health")
	th := store.HealthThresholds{FailingAfter: 2, DisableAfter: 3}
	// An endpoint deleted while its attempt was out: not found, and no
	// partial item made.
	_, err := countFailures(ctx, s, tenant, "ep_gone", 1, th)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = resetFailures(ctx, s, tenant, "ep_gone")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.DisableEndpoint(ctx, tenant, "ep_gone", domain.DisabledEndpointGone)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Endpoint(ctx, tenant, "ep_gone")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_health", URL: "https://example.com", SealedSecrets: []string{"x"}}))
	fx, err := countFailures(ctx, s, tenant, "ep_health", 1, th)
	require.NoError(t, err)
	require.Equal(t, store.HealthEffect{Failures: 1}, fx)
	since, err := resetFailures(ctx, s, tenant, "ep_health")
	require.NoError(t, err)
	require.Nil(t, since, "no failing mark, no recovery")
	ep, err := s.Endpoint(ctx, tenant, "ep_health")
	require.NoError(t, err)
	require.Zero(t, ep.ConsecutiveFailures)

	var failingAt, disabledAt int
	var mark time.Time
	for i := 1; i <= 4; i++ {
		u.clock.Advance(time.Second)
		fx, err := countFailures(ctx, s, tenant, "ep_health", 1, th)
		require.NoError(t, err)
		require.Equal(t, i, fx.Failures)
		if fx.Failing {
			require.Zero(t, failingAt, "marked failing once, not again")
			failingAt, mark = i, fx.FailingSince
		}
		if fx.Disabled {
			require.Zero(t, disabledAt, "disabled once, not again")
			disabledAt = i
			require.False(t, fx.DisabledAt.IsZero())
		}
	}
	require.Equal(t, 2, failingAt)
	require.Equal(t, 3, disabledAt)
	ep, err = s.Endpoint(ctx, tenant, "ep_health")
	require.NoError(t, err)
	require.True(t, ep.Disabled)
	require.Equal(t, domain.DisabledConsecutiveFailures, ep.DisabledReason)
	require.NotNil(t, ep.DisabledAt)
	require.NotNil(t, ep.FailingSince)
	require.True(t, mark.Equal(*ep.FailingSince), "the mark is the episode's start: %s, %s", mark, *ep.FailingSince)

	_, err = s.SetEndpointEnabled(ctx, tenant, "ep_health", true)
	require.NoError(t, err)
	since, err = resetFailures(ctx, s, tenant, "ep_health")
	require.NoError(t, err)
	require.NotNil(t, since, "the first success after an enable recovers the endpoint")
	require.True(t, mark.Equal(*since))
	since, err = resetFailures(ctx, s, tenant, "ep_health")
	require.NoError(t, err)
	require.Nil(t, since, "recovered once")

	// A batch's failures in one write: the count jumps past both
	// thresholds at once, and both transitions happen.
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_batch", URL: "https://example.com"}))
	fx, err = countFailures(ctx, s, tenant, "ep_batch", 1, th)
	require.NoError(t, err)
	require.Equal(t, store.HealthEffect{Failures: 1}, fx)
	fx, err = countFailures(ctx, s, tenant, "ep_batch", 4, th)
	require.NoError(t, err)
	require.Equal(t, 5, fx.Failures, "four more at once")
	require.True(t, fx.Failing, "past FailingAfter in one write")
	require.True(t, fx.Disabled, "and past DisableAfter")
	_, err = countFailures(ctx, s, tenant, "ep_batch", 0, th)
	require.ErrorContains(t, err, "nothing to write")

	// A batch that reset the count and then failed, in one write: the
	// count starts again from the batch's failures, the mark it cleared
	// is the recovery, and the thresholds weigh the new run.
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_mixed", URL: "https://example.com"}))
	fx, err = countFailures(ctx, s, tenant, "ep_mixed", 2, th)
	require.NoError(t, err)
	require.True(t, fx.Failing)
	u.clock.Advance(time.Minute)
	fx, err = s.RecordEndpointHealth(ctx, tenant, "ep_mixed", true, 1, th)
	require.NoError(t, err)
	require.NotNil(t, fx.Recovered, "the reset cleared the mark")
	require.True(t, fx.FailingSince.IsZero())
	require.Equal(t, store.HealthEffect{Recovered: fx.Recovered, Failures: 1}, fx, "one failure after the reset: below FailingAfter, nothing moved")
	ep, err = s.Endpoint(ctx, tenant, "ep_mixed")
	require.NoError(t, err)
	require.Equal(t, 1, ep.ConsecutiveFailures)
	require.Nil(t, ep.FailingSince)
	require.Nil(t, ep.BreakerUntil)
	require.NotNil(t, ep.FailuresSince)
	require.True(t, u.clock.Now().Equal(*ep.FailuresSince), "the new run starts at the write: %s", *ep.FailuresSince)
	fx, err = s.RecordEndpointHealth(ctx, tenant, "ep_mixed", true, 3, th)
	require.NoError(t, err)
	require.Nil(t, fx.Recovered, "no mark to clear")
	require.Equal(t, 3, fx.Failures, "the count is the batch's, not added to the last")
	require.True(t, fx.Failing, "past FailingAfter after the reset")

	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_gone", URL: "https://example.com"}))
	disabled, err := s.DisableEndpoint(ctx, tenant, "ep_gone", domain.DisabledEndpointGone)
	require.NoError(t, err)
	require.True(t, disabled)
	disabled, err = s.DisableEndpoint(ctx, tenant, "ep_gone", domain.DisabledEndpointGone)
	require.NoError(t, err)
	require.False(t, disabled, "disabled once")
	ep, err = s.Endpoint(ctx, tenant, "ep_gone")
	require.NoError(t, err)
	require.True(t, ep.Disabled)
	require.Equal(t, domain.DisabledEndpointGone, ep.DisabledReason)
	require.NotNil(t, ep.DisabledAt)
	require.NotNil(t, ep.FailingSince, "a disabled endpoint is failing until a success")

	for name, call := range map[string]func() error{
		"RecordEndpointHealth (count)": func() error { _, err := countFailures(ctx, s, tenant, "ep_missing", 1, th); return err },
		"RecordEndpointHealth (reset)": func() error { _, err := resetFailures(ctx, s, tenant, "ep_missing"); return err },
		"RecordEndpointHealth (both)": func() error {
			_, err := s.RecordEndpointHealth(ctx, tenant, "ep_missing", true, 1, th)
			return err
		},
		"DisableEndpoint": func() error {
			_, err := s.DisableEndpoint(ctx, tenant, "ep_missing", domain.DisabledEndpointGone)
			return err
		},
	} {
		require.Error(t, call(), "%s of a missing endpoint", name)
		_, err = s.Endpoint(ctx, tenant, "ep_missing")
		require.ErrorIs(t, err, store.ErrNotFound, "%s must not create an endpoint", name)
	}
}

func deadWindows(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_window")
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	end := start.Add(5 * time.Minute)
	_, err := s.DeadWindow(ctx, tenant, "ep", start)
	require.ErrorIs(t, err, store.ErrNotFound)
	total := domain.OpDeadSample + 5
	for i := 1; i <= total; i++ {
		reason := domain.ReasonAttemptsExhausted
		if i%3 == 0 {
			reason = domain.ReasonEndpointDisabled
		}
		n, err := s.AddDeath(ctx, tenant, "ep", start, end, domain.OpDeath{DeliveryID: fmt.Sprintf("d%02d", i), EventID: "e", EventType: "order.paid", Reason: reason, Attempts: 4})
		require.NoError(t, err)
		require.Equal(t, i, n, "the count says which death opened the window")
	}
	n, err := s.AddDeath(ctx, tenant, "ep", end, end.Add(5*time.Minute), domain.OpDeath{DeliveryID: "next", Reason: domain.ReasonAttemptsExhausted})
	require.NoError(t, err)
	require.Equal(t, 1, n, "the next window is another")
	w, err := s.DeadWindow(ctx, tenant, "ep", start)
	require.NoError(t, err)
	require.Equal(t, total, w.Count)
	require.Equal(t, map[domain.DeadReason]int{domain.ReasonAttemptsExhausted: total - total/3, domain.ReasonEndpointDisabled: total / 3}, w.Reasons)
	require.Len(t, w.Deaths, domain.OpDeadSample, "the first deaths are kept, the rest counted")
	require.Equal(t, "d01", w.Deaths[0].DeliveryID)
	require.Equal(t, fmt.Sprintf("d%02d", domain.OpDeadSample), w.Deaths[domain.OpDeadSample-1].DeliveryID)
	require.Equal(t, 4, w.Deaths[0].Attempts)
}

func firstAttempt(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_first")
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com/ep"}))
	d := u.delivery(tenant, "ep", "evt_first")
	_, err := s.Delivery(ctx, d.DeliveryID)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing before the first attempt")
	require.NoError(t, s.RecordAttempt(ctx, u.current(t, d), domain.Attempt{Number: 1, At: u.clock.Now(), Status: 503, Error: "http_503"}, domain.Outcome{State: domain.StatePending}))
	first, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, first.State)
	require.Equal(t, 1, first.Attempts)
	require.Equal(t, 503, first.LastStatus)
	require.Equal(t, "http_503", first.LastError)
	require.Equal(t, []string{d.DeliveryID, tenant, "ep", d.EventID, "a.b"}, []string{first.DeliveryID, first.TenantID, first.EndpointID, first.EventID, first.EventType})
	require.True(t, u.clock.Now().Equal(first.CreatedAt))
	require.Nil(t, first.EnqueuedAt, "enqueue records nothing, and no attempt claims it did")

	u.clock.Advance(time.Hour) // a rewrite of the creation attributes would show
	require.NoError(t, s.RecordAttempt(ctx, u.current(t, d), domain.Attempt{Number: 2, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	got, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Equal(t, 2, got.Attempts)
	require.True(t, first.CreatedAt.Equal(got.CreatedAt), "the creation time is the first attempt's")
	require.NotNil(t, got.DeliveredAt)
	require.True(t, u.clock.Now().Equal(*got.DeliveredAt))

	// A delivery of the same event to an endpoint that does not exist:
	// readable by id, not listed under its event.
	gone := d
	gone.EndpointID, gone.DeliveryID = "ep_deleted", domain.DeliveryID(d.TenantID, d.EventID, "ep_deleted", eventAt)
	require.NoError(t, s.RecordAttempt(ctx, gone, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	_, err = s.Delivery(ctx, gone.DeliveryID)
	require.NoError(t, err)
	var listed []domain.Delivery
	require.Eventually(t, func() bool { // the endpoints' query is eventually consistent
		listed, err = s.DeliveriesOfEvent(ctx, tenant, event(d))
		return err == nil && len(listed) > 0
	}, 10*time.Second, 100*time.Millisecond)
	require.Len(t, listed, 1, "the delivery to the missing endpoint is not listed")
	require.Equal(t, d.DeliveryID, listed[0].DeliveryID)
	listed, err = s.DeliveriesOfEvent(ctx, u.id("t_other"), event(d))
	require.NoError(t, err)
	require.Empty(t, listed, "another tenant lists nothing of it")

	// Several events at once: each event's deliveries under its id, none
	// for an event without any, none for another tenant.
	byEvent, err := s.DeliveriesOfEvents(ctx, tenant, []domain.Event{event(d), {ID: "evt_none", OccurredAt: eventAt}})
	require.NoError(t, err)
	require.Len(t, byEvent, 1)
	require.Len(t, byEvent[d.EventID], 1)
	require.Equal(t, d.DeliveryID, byEvent[d.EventID][0].DeliveryID)
	byEvent, err = s.DeliveriesOfEvents(ctx, u.id("t_other"), []domain.Event{event(d)})
	require.NoError(t, err)
	require.Empty(t, byEvent, "another tenant lists nothing of it")
}

func attempts(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_att")
	d := u.delivery(tenant, "ep", "evt_att")
	now := u.clock.Now()
	record := func(a domain.Attempt, o domain.Outcome) {
		t.Helper()
		require.NoError(t, s.RecordAttempt(ctx, u.current(t, d), a, o))
	}
	record(domain.Attempt{Number: 1, At: now, Status: 500, Error: "http_500", LatencyMS: 12}, domain.Outcome{State: domain.StatePending})
	require.Zero(t, u.depth(t, tenant))
	record(domain.Attempt{Number: 2, At: now, Status: 400, Error: "http_400"}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: `{"m":1}`})
	got, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, got.State)
	require.Equal(t, domain.Rejected(400), got.DeadReason)
	require.Equal(t, `{"m":1}`, got.Message)
	require.NotNil(t, got.DeadAt)
	require.True(t, now.Equal(*got.DeadAt))
	require.Equal(t, 2, got.Attempts)
	require.Len(t, got.AttemptLog, 2)
	require.Equal(t, 500, got.AttemptLog[0].Status)
	require.Equal(t, int64(12), got.AttemptLog[0].LatencyMS)
	require.Equal(t, 1, u.depth(t, tenant))
	var listed []string
	require.Eventually(t, func() bool { // the index is eventually consistent
		listed, _ = u.dead(t, tenant, domain.DeadFilter{}, 10)
		return len(listed) > 0
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, []string{d.DeliveryID}, listed)
	// The listing holds what the dead index projects: not the message nor
	// the attempt log, which a replay reads from the table.
	page, _, err := s.ListDead(ctx, tenant, domain.DeadFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, store.DeadListed(got), page[0], "listed as store.DeadListed has it")
	require.Empty(t, page[0].Message)
	require.Empty(t, page[0].AttemptLog)
	other, _ := u.dead(t, u.id("t_other"), domain.DeadFilter{}, 10)
	require.Empty(t, other, "listed under its tenant only")

	record(domain.Attempt{Number: 3, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered})
	require.Zero(t, u.depth(t, tenant), "out of dead, out of the count")
	got, err = s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Empty(t, got.Message, "the stored message goes with the death")
	require.Empty(t, got.DeadReason)
	require.Nil(t, got.DeadAt)
	record(domain.Attempt{Number: 4, At: now, Status: 500}, domain.Outcome{State: domain.StatePending})
	require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 5, At: now, Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400)}))
	got, err = s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State, "a late attempt cannot undo a delivery")
	require.Equal(t, 3, got.Attempts)
	listed, _ = u.dead(t, tenant, domain.DeadFilter{}, 10)
	require.Empty(t, listed)
	require.Zero(t, u.depth(t, tenant))
}

func attemptLog(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	d := u.delivery(u.id("t_log"), "ep", "evt_log")
	for i := 1; i <= store.MaxAttemptLog+5; i++ {
		require.NoError(t, s.RecordAttempt(ctx, u.current(t, d), domain.Attempt{Number: i, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
	}
	got, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, store.MaxAttemptLog+5, got.Attempts, "every attempt is counted")
	require.Len(t, got.AttemptLog, store.MaxAttemptLog)
	require.Equal(t, 6, got.AttemptLog[0].Number, "the oldest entries are dropped")
	require.Equal(t, store.MaxAttemptLog+5, got.AttemptLog[store.MaxAttemptLog-1].Number)
}

func batchRead(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_load")
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_l", URL: "https://example.com/l"}))
	var ids []string
	for i := range 120 { // over BatchGetItem's 100 keys
		d := u.delivery(tenant, "ep_l", fmt.Sprintf("evt_load_%d", i))
		ids = append(ids, d.DeliveryID)
		if i%2 == 0 { // every other one exists
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		}
	}
	refs := []store.EndpointRef{{TenantID: tenant, EndpointID: "ep_l"}, {TenantID: tenant, EndpointID: "ep_l"}, {TenantID: tenant, EndpointID: "ep_gone"}}
	snap, err := s.Load(ctx, append(ids, ids[0]), refs)
	require.NoError(t, err)
	require.Len(t, snap.Deliveries, 60)
	for i, id := range ids {
		d, ok := snap.Deliveries[id]
		require.Equal(t, i%2 == 0, ok, "delivery %d", i)
		if ok {
			require.Equal(t, domain.StatePending, d.State)
			require.Equal(t, id, d.DeliveryID)
		}
	}
	require.Len(t, snap.Endpoints, 1)
	require.Equal(t, "https://example.com/l", snap.Endpoints[store.EndpointRef{TenantID: tenant, EndpointID: "ep_l"}].URL)
	require.Eventually(t, func() bool { // eventually consistent reads
		snap, err := s.LoadWith(ctx, store.LoadOptions{Eventual: true}, ids, refs)
		return err == nil && len(snap.Deliveries) == 60 && len(snap.Endpoints) == 1
	}, 10*time.Second, 100*time.Millisecond)
	snap, err = s.Load(ctx, nil, nil)
	require.NoError(t, err)
	require.Empty(t, snap.Deliveries)
	require.Empty(t, snap.Endpoints)
}

func deathBeforeLastAttempt(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_last")
	listed := func(id string) bool {
		t.Helper()
		ids, _ := u.dead(t, tenant, domain.DeadFilter{}, 100)
		return slices.Contains(ids, id)
	}
	now := u.clock.Now()

	// No record yet: the advance death writes a complete, listed one.
	d1 := u.delivery(tenant, "ep", "evt_last_1")
	require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d1, domain.ReasonAttemptsExhausted, `{"m":1}`, now))
	got, err := s.Delivery(ctx, d1.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, got.State)
	require.Equal(t, `{"m":1}`, got.Message)
	require.Equal(t, domain.ReasonAttemptsExhausted, got.DeadReason)
	require.Equal(t, tenant, got.TenantID)
	require.Equal(t, d1.EventID, got.EventID)
	require.False(t, got.CreatedAt.IsZero())
	require.True(t, listed(d1.DeliveryID))
	require.Equal(t, 1, u.depth(t, tenant))
	// The last attempt fails: dead still, counted once.
	require.NoError(t, s.RecordAttempt(ctx, got, domain.Attempt{Number: 4, At: now, Status: 500, Error: "http_500"}, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: `{"m":1}`}))
	require.Equal(t, 1, u.depth(t, tenant), "not counted twice")

	// A pending delivery whose last attempt succeeds: the advance death is
	// undone, listing and count included.
	d2 := u.delivery(tenant, "ep", "evt_last_2")
	require.NoError(t, s.RecordAttempt(ctx, d2, domain.Attempt{Number: 1, At: now, Status: 503}, domain.Outcome{State: domain.StatePending}))
	require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d2, domain.ReasonAttemptsExhausted, `{"m":2}`, now))
	require.Equal(t, 2, u.depth(t, tenant))
	require.True(t, listed(d2.DeliveryID))
	require.NoError(t, s.RecordAttempt(ctx, u.current(t, d2), domain.Attempt{Number: 2, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	got, err = s.Delivery(ctx, d2.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Empty(t, got.Message)
	require.Empty(t, got.DeadReason)
	require.False(t, listed(d2.DeliveryID))
	require.Equal(t, 1, u.depth(t, tenant))

	// A dead delivery that another copy of it retries leaves the index and
	// the count.
	d3 := u.delivery(tenant, "ep", "evt_last_3")
	require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d3, domain.ReasonAttemptsExhausted, `{"m":3}`, now))
	require.Equal(t, 2, u.depth(t, tenant))
	require.NoError(t, s.RecordAttempt(ctx, d3, domain.Attempt{Number: 1, At: now, Status: 503}, domain.Outcome{State: domain.StatePending}))
	require.False(t, listed(d3.DeliveryID))
	require.Equal(t, 1, u.depth(t, tenant))

	// A delivered one, and a dead one, are left alone.
	require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d2, domain.ReasonAttemptsExhausted, `{"m":2}`, now))
	got, err = s.Delivery(ctx, d2.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.NoError(t, s.MarkDeadBeforeLastAttempt(ctx, d1, domain.ReasonAttemptsExhausted, `{"m":"again"}`, now))
	got, err = s.Delivery(ctx, d1.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, `{"m":1}`, got.Message)
	require.Equal(t, 1, u.depth(t, tenant))
}

func concurrentAttempts(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_dup")
	for i := range 5 {
		d := u.delivery(tenant, "ep", fmt.Sprintf("evt_dup_%d", i))
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		stale := u.current(t, d) // both copies read it before either writes
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = s.RecordAttempt(ctx, stale, domain.Attempt{Number: 2 + w, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending})
			}()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		got, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, 3, got.Attempts, "delivery %d", i)
		var ns []int
		for _, a := range got.AttemptLog {
			ns = append(ns, a.Number)
		}
		require.ElementsMatch(t, []int{1, 2, 3}, ns, "delivery %d: no entry lost", i)
	}
}

func unchangedOnly(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_cond")
	d := u.delivery(tenant, "ep", "evt_cond")
	// The sweep read it as missing; an attempt made the record meanwhile.
	require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
	before, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	death := domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: `{"m":1}`}
	err = s.RecordAttemptIfUnchanged(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Error: "death_not_recorded"}, death)
	require.ErrorIs(t, err, store.ErrConflict)
	after, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, before, after, "the record made meanwhile is as it was")
	require.Zero(t, u.depth(t, tenant), "nothing counted")
	// A record read before another attempt: refused too.
	require.NoError(t, s.RecordAttempt(ctx, after, domain.Attempt{Number: 2, At: u.clock.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
	require.ErrorIs(t, s.RecordAttemptIfUnchanged(ctx, after, domain.Attempt{Number: 3, At: u.clock.Now()}, death), store.ErrConflict)

	// On the record as it is, the death is recorded and counted once.
	cur := u.current(t, d)
	require.NoError(t, s.RecordAttemptIfUnchanged(ctx, cur, domain.Attempt{Number: 3, At: u.clock.Now(), Error: "death_not_recorded"}, death))
	got, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, got.State)
	require.Len(t, got.AttemptLog, 3)
	require.Equal(t, 1, u.depth(t, tenant))
	// A delivery with no record, read as such: written.
	e := u.delivery(tenant, "ep", "evt_cond_new")
	require.NoError(t, s.RecordAttemptIfUnchanged(ctx, e, domain.Attempt{Number: 1, At: u.clock.Now()}, death))
	require.Equal(t, 2, u.depth(t, tenant))
}

func claims(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_claim")
	mk := func(n string) domain.Delivery {
		d := u.delivery(tenant, "ep", "evt_claim_"+n)
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: `{"m":"` + n + `"}`}))
		return d
	}
	d := mk("1")
	require.Equal(t, 1, u.depth(t, tenant))
	_, err := claimByID(ctx, s, d.DeliveryID, u.id("t_other"), "job_x", time.Hour)
	require.ErrorIs(t, err, store.ErrNotFound, "another tenant's delivery is as good as missing")
	_, err = claimByID(ctx, s, u.id("dlv_missing"), tenant, "job_x", time.Hour)
	require.ErrorIs(t, err, store.ErrNotFound)
	got, err := claimByID(ctx, s, d.DeliveryID, tenant, "job_a", time.Hour)
	require.NoError(t, err)
	require.Equal(t, domain.StatePending, got.State)
	require.Equal(t, `{"m":"1"}`, got.Message, "the claim returns the message to send")
	require.Equal(t, "job_a", got.ReplayClaimedBy)
	require.NotNil(t, got.ReplayedAt)
	require.True(t, u.clock.Now().Equal(*got.ReplayedAt))
	require.Zero(t, u.depth(t, tenant), "a claimed delivery is no longer dead")
	ids, _ := u.dead(t, tenant, domain.DeadFilter{}, 10)
	require.Empty(t, ids, "nor listed")
	_, err = claimByID(ctx, s, d.DeliveryID, tenant, "job_b", time.Hour)
	require.ErrorIs(t, err, store.ErrReplayInFlight, "a second job loses")
	_, err = claimByID(ctx, s, d.DeliveryID, tenant, "job_a", time.Hour)
	require.NoError(t, err, "the same job resumes its claim")
	require.NoError(t, s.ReleaseReplay(ctx, []string{d.DeliveryID}, "job_b"), "another job's release is a no-op")
	read, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, "job_a", read.ReplayClaimedBy)
	require.NoError(t, s.ReleaseReplay(ctx, []string{d.DeliveryID}, "job_a"))
	_, err = claimByID(ctx, s, d.DeliveryID, tenant, "job_a", time.Hour)
	require.ErrorIs(t, err, store.ErrNotDead, "released and pending: nothing to replay")
	read, err = s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, "job_a", read.ReplayedBy)
	require.Empty(t, read.ReplayClaimedBy)
	require.Nil(t, read.ReplayClaimedAt)

	// A job that claimed and stopped: its claim goes stale and another
	// (the operator's redrive, tenant "") takes it over.
	e := mk("2")
	_, err = claimByID(ctx, s, e.DeliveryID, "", "job_dead", time.Hour)
	require.NoError(t, err)
	_, err = claimByID(ctx, s, e.DeliveryID, "", "job_redrive", time.Hour)
	require.ErrorIs(t, err, store.ErrReplayInFlight, "not stale yet")
	u.clock.Advance(time.Hour + time.Second)
	got, err = claimByID(ctx, s, e.DeliveryID, "", "job_redrive", time.Hour)
	require.NoError(t, err, "a stale claim on a never-sent delivery is taken over")
	require.Equal(t, "job_redrive", got.ReplayClaimedBy)
	require.Zero(t, u.depth(t, tenant), "counted out once")

	// A delivered delivery is never claimed.
	f := mk("3")
	require.NoError(t, s.RecordAttempt(ctx, u.current(t, f), domain.Attempt{Number: 2, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	_, err = claimByID(ctx, s, f.DeliveryID, tenant, "job_c", time.Hour)
	require.ErrorIs(t, err, store.ErrNotDead)

	// A chunk claimed at once, as read: the dead ones claimed together,
	// the rest answered in their place, and one changed since it was read
	// (another job's claim) left to that job while the others are still
	// claimed.
	var chunk []domain.Delivery
	for _, n := range []string{"4", "5", "6", "7"} {
		chunk = append(chunk, u.current(t, mk(n)))
	}
	require.Equal(t, 4, u.depth(t, tenant))
	_, err = claimByID(ctx, s, chunk[2].DeliveryID, tenant, "job_e", time.Hour)
	require.NoError(t, err)
	chunk = append(chunk, u.current(t, f))
	ds, errs := s.ClaimForReplay(ctx, chunk, tenant, "job_d", time.Hour)
	require.Len(t, errs, 5)
	for _, i := range []int{0, 1, 3} {
		require.NoError(t, errs[i])
		require.Equal(t, "job_d", ds[i].ReplayClaimedBy)
		require.Equal(t, domain.StatePending, u.current(t, chunk[i]).State)
	}
	require.ErrorIs(t, errs[2], store.ErrReplayInFlight, "claimed by another job since it was read")
	require.ErrorIs(t, errs[4], store.ErrNotDead)
	require.Zero(t, u.depth(t, tenant), "each counted out once")
}

func deadListing(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_dlq")
	base := u.clock.Now().Truncate(time.Second)
	var all []string
	byEndpoint, byType := map[string][]string{}, map[string][]string{}
	for i := range 7 { // deaths a minute apart, written out of order
		n := (i * 3) % 7
		ep, typ := []string{"ep_a", "ep_b"}[n%2], []string{"x.created", "x.deleted", "y.z"}[n%3]
		d := u.delivery(tenant, ep, fmt.Sprintf("evt_dlq_%d", n))
		d.EventType = typ
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: base.Add(time.Duration(n) * time.Minute), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: "{}"}))
	}
	for n := range 7 {
		d := u.delivery(tenant, []string{"ep_a", "ep_b"}[n%2], fmt.Sprintf("evt_dlq_%d", n))
		all = append(all, d.DeliveryID)
		byEndpoint[d.EndpointID] = append(byEndpoint[d.EndpointID], d.DeliveryID)
		byType[[]string{"x.created", "x.deleted", "y.z"}[n%3]] = append(byType[[]string{"x.created", "x.deleted", "y.z"}[n%3]], d.DeliveryID)
	}
	require.Eventually(t, func() bool { // the index is eventually consistent
		ids, _ := u.dead(t, tenant, domain.DeadFilter{}, 100)
		return len(ids) == 7
	}, 10*time.Second, 100*time.Millisecond)

	for _, tc := range []struct {
		name string
		f    domain.DeadFilter
		want []string
	}{
		{"all", domain.DeadFilter{}, all},
		{"one endpoint", domain.DeadFilter{EndpointID: "ep_b"}, byEndpoint["ep_b"]},
		{"one type", domain.DeadFilter{EventType: "x.deleted"}, byType["x.deleted"]},
		{"endpoint and type", domain.DeadFilter{EndpointID: "ep_a", EventType: "x.created"}, []string{all[0], all[6]}},
		{"since, inclusive", domain.DeadFilter{Since: base.Add(5 * time.Minute)}, all[5:]},
		{"until, inclusive", domain.DeadFilter{Until: base.Add(2 * time.Minute)}, all[:3]},
		{"a range", domain.DeadFilter{Since: base.Add(time.Minute), Until: base.Add(3 * time.Minute)}, all[1:4]},
		{"a range with nothing in it", domain.DeadFilter{Since: base.Add(time.Hour)}, nil},
		{"another endpoint", domain.DeadFilter{EndpointID: "ep_none"}, nil},
	} {
		for _, limit := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100} { // every page size up to 10
			ids, pages := u.dead(t, tenant, tc.f, limit)
			require.Equal(t, tc.want, ids, "%s, %d a page: oldest death first, each once", tc.name, limit)
			require.GreaterOrEqual(t, pages, (len(tc.want)+limit-1)/limit, tc.name)
		}
	}
	ids, _ := u.dead(t, u.id("t_other"), domain.DeadFilter{}, 100)
	require.Empty(t, ids, "another tenant's listing is its own")

	// A cursor is bound to its query and to what this store makes.
	_, cursor, err := s.ListDead(ctx, tenant, domain.DeadFilter{}, 2, "")
	require.NoError(t, err)
	require.NotEmpty(t, cursor)
	_, _, err = s.ListDead(ctx, tenant, domain.DeadFilter{EndpointID: "ep_a"}, 2, cursor)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor under another filter")
	_, _, err = s.ListDead(ctx, tenant, domain.DeadFilter{Since: base.Add(6 * time.Minute)}, 2, cursor)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor outside the range")
	for _, bad := range []string{"!!", "e30", "bm90IGpzb24"} {
		_, _, err = s.ListDead(ctx, tenant, domain.DeadFilter{}, 2, bad)
		require.ErrorIs(t, err, store.ErrBadCursor, "cursor %q", bad)
	}
	page, _, err := s.ListDead(ctx, u.id("t_other"), domain.DeadFilter{}, 10, cursor)
	require.NoError(t, err, "a cursor is a position, not a tenant")
	require.Empty(t, page, "and cannot reach another tenant's deliveries")

	for name, f := range map[string]domain.DeadFilter{
		"until before since": {Since: base.Add(time.Hour), Until: base},
		"a year past 9999":   {Since: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"a year before 0":    {Until: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, _, err := s.ListDead(ctx, tenant, f, 10, "")
		require.ErrorIs(t, err, store.ErrBadFilter, name)
	}
}

func reconcile(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_rec")
	check, err := s.ReconcileDLQDepth(ctx, tenant)
	require.NoError(t, err)
	require.Equal(t, store.DepthCheck{TenantID: tenant}, check, "no counter, nothing dead: nothing to do")
	for i := range 2 {
		d := u.delivery(tenant, "ep", fmt.Sprintf("evt_rec_%d", i))
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: "{}"}))
	}
	check, err = s.ReconcileDLQDepth(ctx, tenant)
	require.NoError(t, err)
	require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 2, Deferred: true}, check, "a counter that just moved is left for the next run")
	u.clock.Advance(store.DefaultDepthSettle + time.Second)
	require.Eventually(t, func() bool { // the index is eventually consistent
		check, err = s.ReconcileDLQDepth(ctx, tenant)
		return err == nil && check.Indexed == 2
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 2, Indexed: 2}, check, "every move kept the counter: nothing corrected")
	require.Equal(t, 2, u.depth(t, tenant))
}

// depthBurst kills many deliveries of one tenant at once, then claims them
// all for replay at once: every move lands (on whichever item of the
// counter), and the counter agrees with the dead index.
func depthBurst(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, n := u.id("t_burst"), 64
	all := func(f func(d domain.Delivery) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- f(u.delivery(tenant, "ep", fmt.Sprintf("evt_burst_%d", i)))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
	all(func(d domain.Delivery) error {
		return s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: "{}"})
	})
	require.Equal(t, n, u.depth(t, tenant))
	u.clock.Advance(store.DefaultDepthSettle + time.Second)
	var check store.DepthCheck
	require.Eventually(t, func() bool { // the index is eventually consistent
		var err error
		check, err = s.ReconcileDLQDepth(ctx, tenant)
		return err == nil && check.Indexed == n
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: n, Indexed: n}, check, "nothing to correct")

	all(func(d domain.Delivery) error {
		_, err := claimByID(ctx, s, d.DeliveryID, tenant, "job_burst", time.Hour)
		return err
	})
	require.Zero(t, u.depth(t, tenant))
	depths, err := s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Contains(t, depths, tenant, "listed, at 0")
}

func rejections(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, key := u.id("t_rej"), u.id("evt_rej")
	r := domain.Rejection{Key: key, EventID: key, TenantID: tenant, Reason: domain.RejectUnknownTenant, Field: "payload", Detail: "is not JSON"}
	require.NoError(t, s.PutRejection(ctx, r))
	got, err := s.Rejection(ctx, key)
	require.NoError(t, err)
	r.RejectedAt = u.clock.Now()
	require.True(t, r.RejectedAt.Equal(got.RejectedAt))
	got.RejectedAt = r.RejectedAt
	require.Equal(t, r, got)
	u.clock.Advance(time.Second)
	require.NoError(t, s.PutRejection(ctx, r), "the same item rejected twice is one record")
	_, err = s.Rejection(ctx, "nope_"+key)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// jobArgs are a kind's arguments as a job package writes them
// (replay.IDs, say): attributes of the job's record beside its own.
type jobArgs struct {
	IDs   []string `dynamodbav:"ids,omitempty"`
	Waits int      `dynamodbav:"waits,omitempty"`
}

func (jobArgs) JobKind() domain.JobKind { return domain.KindIDs }

// clashingArgs would overwrite the job's status.
type clashingArgs struct {
	Status string `dynamodbav:"status"`
}

func (clashingArgs) JobKind() domain.JobKind { return domain.KindIDs }

// decodeArgs decodes the arguments of job j as the store read them.
func decodeArgs(t *testing.T, j domain.Job) *jobArgs {
	t.Helper()
	stored, ok := j.Args.(domain.StoredArgs)
	require.True(t, ok, "a job read holds its arguments as stored: %T", j.Args)
	a := &jobArgs{}
	require.NoError(t, stored.DecodeArgs(a))
	return a
}

func jobs(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_jobs")
	saved := u.clock.Now()

	// A job saved, read, saved again; a stale copy loses.
	j := &domain.Job{JobID: u.id("job_1"), TenantID: tenant, Kind: domain.KindIDs, Args: &jobArgs{IDs: []string{"d1", "d2"}}, Status: domain.StatusQueued}
	require.NoError(t, s.SaveJob(ctx, j))
	require.Equal(t, 1, j.Version)
	require.True(t, saved.Equal(j.CreatedAt))
	stale := *j
	u.clock.Advance(time.Second)
	j.Status, j.Replayed, j.Skipped = domain.StatusRunning, 1, map[string]int{"not_dead": 1}
	require.NoError(t, s.SaveJob(ctx, j))
	require.Equal(t, 2, j.Version)
	got, err := s.Job(ctx, j.JobID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusRunning, got.Status)
	require.Equal(t, &jobArgs{IDs: []string{"d1", "d2"}}, decodeArgs(t, got), "its kind's arguments, as written")
	require.Equal(t, map[string]int{"not_dead": 1}, got.Skipped)
	require.Equal(t, 2, got.Version)
	require.True(t, saved.Equal(got.CreatedAt), "created once")
	require.True(t, u.clock.Now().Equal(got.UpdatedAt))
	require.ErrorIs(t, s.SaveJob(ctx, &stale), store.ErrConflict, "saved by another since it was read")
	require.Equal(t, 1, stale.Version, "a refused save leaves the version as it was")
	dup := &domain.Job{JobID: j.JobID, TenantID: tenant, Kind: domain.KindIDs}
	require.ErrorIs(t, s.SaveJob(ctx, dup), store.ErrConflict, "a new job with an existing id")

	// A job read and saved again without its arguments decoded keeps them
	// as they were; those decoded and changed are saved changed; and
	// arguments that would overwrite a job's own attribute are refused.
	got.Replayed = 2
	require.NoError(t, s.SaveJob(ctx, &got))
	again, err := s.Job(ctx, j.JobID)
	require.NoError(t, err)
	require.Equal(t, 2, again.Replayed)
	require.Equal(t, &jobArgs{IDs: []string{"d1", "d2"}}, decodeArgs(t, again), "kept through a save that did not decode them")
	again.Args = &jobArgs{IDs: []string{"d1"}, Waits: 3}
	require.NoError(t, s.SaveJob(ctx, &again))
	again, err = s.Job(ctx, j.JobID)
	require.NoError(t, err)
	require.Equal(t, &jobArgs{IDs: []string{"d1"}, Waits: 3}, decodeArgs(t, again))
	require.Equal(t, domain.KindIDs, again.Args.JobKind())
	j = &again
	bad := &domain.Job{JobID: u.id("job_bad"), TenantID: tenant, Kind: domain.KindIDs, Args: clashingArgs{Status: "x"}}
	require.ErrorContains(t, s.SaveJob(ctx, bad), `attribute "status" is a job's own`)
	_, err = s.Job(ctx, bad.JobID)
	require.ErrorIs(t, err, store.ErrNotFound, "arguments refused, nothing written")
	_, err = s.Job(ctx, u.id("job_missing"))
	require.ErrorIs(t, err, store.ErrNotFound)

	// Slots: at most limit of a tenant's jobs open at once.
	open := func() []string {
		t.Helper()
		ids, err := s.TenantJobs(ctx, tenant)
		require.NoError(t, err)
		slices.Sort(ids)
		return ids
	}
	require.Empty(t, open())
	a, b, c := &domain.Job{JobID: u.id("job_a"), TenantID: tenant, Kind: domain.KindFilter}, &domain.Job{JobID: u.id("job_b"), TenantID: tenant, Kind: domain.KindFilter}, &domain.Job{JobID: u.id("job_c"), TenantID: tenant, Kind: domain.KindFilter}
	require.NoError(t, s.CreateJob(ctx, a, 2))
	require.Equal(t, 1, a.Version)
	require.NoError(t, s.CreateJob(ctx, b, 2))
	require.ErrorIs(t, s.CreateJob(ctx, c, 2), store.ErrTooManyJobs)
	require.Zero(t, c.Version)
	_, err = s.Job(ctx, c.JobID)
	require.ErrorIs(t, err, store.ErrNotFound, "a refused job is not written")
	require.Equal(t, []string{a.JobID, b.JobID}, open())
	other := &domain.Job{JobID: u.id("job_other"), TenantID: u.id("t_jobs_other"), Kind: domain.KindFilter}
	require.NoError(t, s.CreateJob(ctx, other, 2), "slots are per tenant")
	require.NoError(t, s.ReleaseJob(ctx, tenant, a.JobID))
	require.NoError(t, s.ReleaseJob(ctx, tenant, a.JobID), "releasing twice is harmless")
	require.Equal(t, []string{b.JobID}, open())
	require.NoError(t, s.CreateJob(ctx, c, 2))
	sameID := &domain.Job{JobID: a.JobID, TenantID: tenant, Kind: domain.KindFilter}
	require.NoError(t, s.ReleaseJob(ctx, tenant, c.JobID))
	require.ErrorIs(t, s.CreateJob(ctx, sameID, 2), store.ErrConflict, "an existing id")
	require.Equal(t, []string{b.JobID}, open(), "and its slot is not taken")
	require.ErrorIs(t, s.CreateJob(ctx, a, 2), store.ErrConflict, "a job already saved")
	redrive := &domain.Job{JobID: u.id("job_redrive"), Kind: domain.KindRedrive}
	require.NoError(t, s.CreateJob(ctx, redrive, 2), "the operator's job takes no tenant's slot")

	// Idle: not completed and not saved since.
	idle := func(before time.Time) []string {
		t.Helper()
		js, err := s.IdleJobs(ctx, before, 1000)
		require.NoError(t, err)
		var ids []string
		for _, j := range js {
			require.Nil(t, j.CompletedAt)
			require.True(t, j.UpdatedAt.Before(before))
			if j.TenantID == tenant {
				ids = append(ids, j.JobID)
			}
		}
		return ids
	}
	// Every open job was last saved at t1.
	t1 := u.clock.Now()
	require.Empty(t, idle(t1), "saved at before is not before it")
	require.Equal(t, []string{j.JobID, a.JobID, b.JobID, c.JobID}, idle(t1.Add(time.Second)), "saved before it, the tenant's released ones too")
	u.clock.Advance(time.Second)
	require.NoError(t, s.SaveJob(ctx, b))
	require.Equal(t, []string{j.JobID, a.JobID, c.JobID}, idle(u.clock.Now()), "a job saved since is not idle")
	require.Equal(t, []string{j.JobID, a.JobID, c.JobID, b.JobID}, idle(u.clock.Now().Add(time.Second)), "least recently saved first")
	js, err := s.IdleJobs(ctx, u.clock.Now().Add(time.Second), 1)
	require.NoError(t, err)
	require.Len(t, js, 1, "at most limit")
	done := u.clock.Now()
	j.Status, j.CompletedAt = domain.StatusCompleted, &done
	require.NoError(t, s.SaveJob(ctx, j))
	require.NotContains(t, idle(u.clock.Now().Add(time.Second)), j.JobID, "a completed job is never idle")
}

func sweep(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	ok, err := s.ClaimSweep(ctx, 0)
	require.NoError(t, err)
	require.True(t, ok, "no gap: always")
	ok, err = s.ClaimSweep(ctx, time.Hour)
	require.NoError(t, err)
	require.False(t, ok, "swept within the gap")
	u.clock.Advance(time.Second)
	ok, err = s.ClaimSweep(ctx, time.Second)
	require.NoError(t, err)
	require.True(t, ok, "a gap since the last")
}

func breaker(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_breaker")
	pol := domain.Breaker{Cooldown: 10 * time.Second, MaxCooldown: 30 * time.Second}
	th := store.HealthThresholds{FailingAfter: 2, DisableAfter: 100, Breaker: pol, Retryable: true}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com"}))
	fx, err := countFailures(ctx, s, tenant, "ep", 1, th)
	require.NoError(t, err)
	require.Nil(t, fx.BreakerUntil, "below the threshold the breaker stays closed")
	ep, err := s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.NotNil(t, ep.FailuresSince, "the run's clock starts at its first failure")
	require.Equal(t, domain.BreakerClosed, ep.Breaker(u.clock.Now()))

	u.clock.Advance(time.Second)
	fx, err = countFailures(ctx, s, tenant, "ep", 1, th)
	require.NoError(t, err)
	require.True(t, fx.Failing, "the breaker opens with the failing mark")
	require.NotNil(t, fx.BreakerUntil)
	require.WithinDuration(t, u.clock.Now().Add(10*time.Second), *fx.BreakerUntil, time.Millisecond)
	ep, err = s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.Equal(t, domain.BreakerOpen, ep.Breaker(u.clock.Now()))
	require.Equal(t, domain.BreakerHalfOpen, ep.Breaker(u.clock.Now().Add(10*time.Second)))

	fx, err = countFailures(ctx, s, tenant, "ep", 1, th)
	require.NoError(t, err)
	require.Nil(t, fx.BreakerUntil, "a failure that is not the probe's leaves the open breaker as it is")
	require.False(t, fx.Failing, "marked once")

	for i, want := range []time.Duration{20 * time.Second, 30 * time.Second, 30 * time.Second} {
		u.clock.Advance(time.Minute)
		fx, err = countFailures(ctx, s, tenant, "ep", 1, store.HealthThresholds{FailingAfter: 2, DisableAfter: 100, Breaker: pol, Probe: true, Retryable: true})
		require.NoError(t, err)
		require.NotNil(t, fx.BreakerUntil, "probe %d failed: opened again", i)
		require.WithinDuration(t, u.clock.Now().Add(want), *fx.BreakerUntil, time.Millisecond, "probe %d", i)
	}
	ep, err = s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.Equal(t, 3, ep.BreakerTrips)

	since, err := resetFailures(ctx, s, tenant, "ep")
	require.NoError(t, err)
	require.NotNil(t, since, "closing the breaker is the recovery")

	// Permanent failures mark the endpoint failing, never open the breaker.
	for i := 1; i <= 3; i++ {
		fx, err := countFailures(ctx, s, tenant, "ep", 1, store.HealthThresholds{FailingAfter: 2, DisableAfter: 100, Breaker: pol})
		require.NoError(t, err)
		require.Nil(t, fx.BreakerUntil, "a rejection opens no breaker")
		require.Equal(t, i == 2, fx.Failing, "marked failing at the threshold, once")
	}
	ep, err = s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.Equal(t, domain.BreakerClosed, ep.Breaker(u.clock.Now()))
	fx, err = countFailures(ctx, s, tenant, "ep", 1, th)
	require.NoError(t, err)
	require.NotNil(t, fx.BreakerUntil, "a retryable failure past the threshold opens it")
	require.False(t, fx.Failing, "already marked")
	_, err = resetFailures(ctx, s, tenant, "ep")
	require.NoError(t, err)
	ep, err = s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.Equal(t, domain.BreakerClosed, ep.Breaker(u.clock.Now()))
	require.Nil(t, ep.BreakerUntil)
	require.Nil(t, ep.FailuresSince)
	require.Zero(t, ep.BreakerTrips)
}

func patientDisable(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_patient")
	th := store.HealthThresholds{FailingAfter: 2, DisableAfter: 3, DisableAfterFor: time.Hour}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com"}))
	for i := 1; i <= 10; i++ {
		u.clock.Advance(time.Minute)
		fx, err := countFailures(ctx, s, tenant, "ep", 1, th)
		require.NoError(t, err)
		require.False(t, fx.Disabled, "failure %d: the run is %d minutes old, not an hour", i, i-1)
	}
	u.clock.Advance(51 * time.Minute)
	fx, err := countFailures(ctx, s, tenant, "ep", 1, th)
	require.NoError(t, err)
	require.True(t, fx.Disabled, "past the count and the hour")
	ep, err := s.Endpoint(ctx, tenant, "ep")
	require.NoError(t, err)
	require.True(t, ep.Disabled)
	require.Equal(t, domain.DisabledConsecutiveFailures, ep.DisabledReason)

	// A success starts the clock again.
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep2", URL: "https://example.com"}))
	for range 5 {
		_, err := countFailures(ctx, s, tenant, "ep2", 1, th)
		require.NoError(t, err)
	}
	u.clock.Advance(2 * time.Hour)
	_, err = resetFailures(ctx, s, tenant, "ep2")
	require.NoError(t, err)
	for range 5 {
		fx, err := countFailures(ctx, s, tenant, "ep2", 1, th)
		require.NoError(t, err)
		require.False(t, fx.Disabled, "the new run began now")
	}
}

func gateSlots(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_gate")
	now := u.clock.Now()
	until := now.Add(20 * time.Second)
	ask := func(start int, at time.Time) store.GateAsk {
		return store.GateAsk{Slots: 2, Fast: 4, Start: start, Now: at, Until: at.Add(20 * time.Second)}
	}
	take := func(endpoint string, a store.GateAsk) (store.Hold, bool) {
		t.Helper()
		h, ok, err := s.TakeGate(ctx, tenant, endpoint, a)
		require.NoError(t, err)
		return h, ok
	}
	var holds []store.Hold
	for i := range 2 {
		h, ok := take("ep", ask(3, now)) // slot 3 is a fast slot: not yet
		require.True(t, ok, "slot %d of 2", i)
		require.Less(t, h.Slot, 2, "an endpoint not shown fast gets the few slots")
		holds = append(holds, h)
	}
	require.NotEqual(t, holds[0].Slot, holds[1].Slot)
	_, ok := take("ep", ask(1, now))
	require.False(t, ok, "both slots held")
	_, ok = take("ep_other", ask(0, now))
	require.True(t, ok, "another endpoint's gate is its own")

	probe, ok := take("ep", store.GateAsk{Slots: 2, Probe: true, Now: now, Until: until})
	require.True(t, ok, "the probe has a slot of its own")
	require.Equal(t, store.ProbeSlot, probe.Slot)
	_, ok = take("ep", store.GateAsk{Slots: 2, Probe: true, Now: now, Until: until})
	require.False(t, ok, "one probe at a time")
	require.NoError(t, s.ReleaseGate(ctx, tenant, "ep", probe, nil))

	// A fast release opens the fast slots until the time it names.
	fast := now.Add(5 * time.Second)
	require.NoError(t, s.ReleaseGate(ctx, tenant, "ep", holds[1], &fast))
	for range 3 {
		_, ok := take("ep", ask(2, now))
		require.True(t, ok, "shown fast: up to 4 slots")
	}
	_, ok = take("ep", ask(0, now))
	require.False(t, ok, "4 held")

	// Holds run out by themselves; an old holder's release leaves the slot
	// a new holder took alone.
	later := until.Add(time.Second)
	stale, ok := take("ep", ask(holds[0].Slot, later))
	require.True(t, ok, "a hold that ran out frees its slot")
	require.Equal(t, holds[0].Slot, stale.Slot)
	require.NoError(t, s.ReleaseGate(ctx, tenant, "ep", holds[0], nil), "the old holder's release")
	other, ok := take("ep", ask(holds[0].Slot, later))
	require.True(t, ok)
	require.NotEqual(t, stale.Slot, other.Slot, "an old holder's release leaves the new holder's slot alone")
	require.Less(t, other.Slot, 2, "no longer fast (fast_until passed, and a slow release clears it)")

	_, _, err := s.TakeGate(ctx, tenant, "ep", store.GateAsk{Slots: 0, Now: now, Until: until})
	require.Error(t, err, "a gate has at least one slot")

	// The batch read shows until when an endpoint is fast; MarkGate moves it.
	ref := store.EndpointRef{TenantID: tenant, EndpointID: "ep_fast"}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_fast", URL: "https://example.com"}))
	snap, err := s.Load(ctx, nil, []store.EndpointRef{ref})
	require.NoError(t, err)
	require.NotContains(t, snap.FastUntil, ref, "never shown fast")
	fastUntil := now.Add(5 * time.Second)
	require.NoError(t, s.MarkGate(ctx, tenant, "ep_fast", &fastUntil))
	snap, err = s.Load(ctx, nil, []store.EndpointRef{ref})
	require.NoError(t, err)
	require.Equal(t, fastUntil.UnixMilli(), snap.FastUntil[ref].UnixMilli())
	require.Contains(t, snap.Endpoints, ref, "the gate's item is not taken for the endpoint's")
	require.NoError(t, s.MarkGate(ctx, tenant, "ep_fast", nil))
	snap, err = s.Load(ctx, nil, []store.EndpointRef{ref})
	require.NoError(t, err)
	require.NotContains(t, snap.FastUntil, ref, "cleared")
}

func tenantGate(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, other := u.id("t_share"), u.id("t_share_other")
	now := u.clock.Now()
	ask := func(at time.Time) store.GateAsk {
		return store.GateAsk{Slots: 1, Now: at, Until: at.Add(20 * time.Second)}
	}
	take := func(ref store.EndpointRef, a store.GateAsk) (store.Hold, bool) {
		t.Helper()
		h, ok, err := s.TakeGate(ctx, ref.TenantID, ref.EndpointID, a)
		require.NoError(t, err)
		return h, ok
	}
	gate := store.TenantGate(tenant)
	require.Equal(t, store.EndpointRef{TenantID: tenant, EndpointID: store.TenantGateID}, gate)
	h, ok := take(gate, ask(now))
	require.True(t, ok, "the tenant's one slot")
	_, ok = take(gate, ask(now))
	require.False(t, ok, "one slot, held")
	_, ok = take(store.EndpointRef{TenantID: tenant, EndpointID: "ep"}, ask(now))
	require.True(t, ok, "an endpoint's gate is not its tenant's")
	_, ok = take(store.TenantGate(other), ask(now))
	require.True(t, ok, "another tenant's gate is its own")

	// A slow batch's release rests the slot: held until its rest ends,
	// whatever its hold asked for.
	released := now.Add(2 * time.Second)
	h.RestUntil = released.Add(4 * time.Second)
	require.NoError(t, s.ReleaseGate(ctx, tenant, store.TenantGateID, h, nil))
	_, ok = take(gate, ask(released.Add(time.Second)))
	require.False(t, ok, "resting")
	rested, ok := take(gate, ask(h.RestUntil.Add(time.Millisecond)))
	require.True(t, ok, "free once the rest has passed")

	// Released at once (no rest), it is free at once.
	at := h.RestUntil.Add(time.Millisecond)
	require.NoError(t, s.ReleaseGate(ctx, tenant, store.TenantGateID, rested, nil))
	_, ok = take(gate, ask(at))
	require.True(t, ok, "a release without a rest frees the slot at once")
}

// countFailures and resetFailures are RecordEndpointHealth's two halves,
// each alone: a batch that only failed, and one that only succeeded after
// failures (the mark cleared, nil when none).
func countFailures(ctx context.Context, s Store, tenant, endpointID string, n int, th store.HealthThresholds) (store.HealthEffect, error) {
	return s.RecordEndpointHealth(ctx, tenant, endpointID, false, n, th)
}

func resetFailures(ctx context.Context, s Store, tenant, endpointID string) (*time.Time, error) {
	fx, err := s.RecordEndpointHealth(ctx, tenant, endpointID, true, 0, store.HealthThresholds{})
	return fx.Recovered, err
}

// claimByID reads delivery id strongly, as a replay step does, and claims
// it for job alone (store.ClaimForReplay with one delivery).
func claimByID(ctx context.Context, s Store, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	d, err := s.Delivery(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return d, err
	}
	d.DeliveryID = id
	ds, errs := s.ClaimForReplay(ctx, []domain.Delivery{d}, tenantID, job, stale)
	return ds[0], errs[0]
}
