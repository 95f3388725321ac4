package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// tenantData is what erasure writes of one tenant: every kind of item.
type tenantData struct {
	tenant, keyHash         string
	linkHash                string
	delivered, dead, orphan domain.Delivery
	completedJob, opened    string
	window                  time.Time
	rejection               string
}

// seedTenant writes every kind of item of a tenant: its item, a key, two
// endpoints, a delivered and a dead delivery (so a DLQ depth), a
// rejection, a completed and an open job, a dead window and hourly
// counters of both endpoints (hour items and items by event type).
func seedTenant(t *testing.T, u *suite, name string) tenantData {
	ctx, s := context.Background(), u.s
	d := tenantData{tenant: u.id(name), keyHash: u.id("h_" + name), linkHash: u.id("hl_" + name), rejection: u.id("rej_" + name)}
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: d.tenant})
	require.NoError(t, err)
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k1", TenantID: d.tenant, Hash: d.keyHash})
	require.NoError(t, err)
	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_1", TenantID: d.tenant, Hash: d.linkHash, ExpiresAt: u.clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	for _, ep := range []string{"ep_a", "ep_b"} {
		_, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: d.tenant, EndpointID: ep, URL: "https://example.com/" + ep, SealedSecrets: []string{"s"}})
		require.NoError(t, err)
		var st domain.AttemptStats
		st.Count(domain.ClassDelivered, time.Millisecond, u.clock.Now(), 200, "")
		require.NoError(t, s.AddEndpointStats(ctx, d.tenant, ep, u.clock.Now(), st))
		require.NoError(t, s.AddEndpointStats(ctx, d.tenant, ep, u.clock.Now().Add(-time.Hour), st))
		for _, typ := range []string{"order.created", "order.paid"} {
			require.NoError(t, s.AddEndpointTypeStats(ctx, d.tenant, ep, typ, u.clock.Now(), st))
		}
	}
	d.delivered = u.delivery(d.tenant, "ep_a", "ev_ok_"+name)
	require.NoError(t, s.RecordAttempt(ctx, d.delivered, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	// A delivery to an endpoint deleted since: only the delivery log
	// leads to it.
	d.orphan = u.delivery(d.tenant, "ep_deleted", "ev_orphan_"+name)
	require.NoError(t, s.RecordAttempt(ctx, d.orphan, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	d.dead = u.delivery(d.tenant, "ep_b", "ev_dead_"+name)
	require.NoError(t, s.RecordAttempt(ctx, d.dead, domain.Attempt{Number: 1, At: u.clock.Now(), Status: 410}, domain.Outcome{State: domain.StateDead, DeadReason: "gone", Message: "{}"}))
	require.NoError(t, s.PutRejection(ctx, domain.Rejection{Key: d.rejection, EventID: d.rejection, TenantID: d.tenant, Reason: domain.RejectNoEndpoint, Detail: "x"}))
	done := domain.Job{JobID: u.id("job_done_" + name), TenantID: d.tenant, Kind: domain.KindIDs, Status: domain.StatusQueued}
	require.NoError(t, s.CreateJob(ctx, &done, 3))
	now := u.clock.Now()
	done.Status, done.CompletedAt = domain.StatusCompleted, &now
	require.NoError(t, s.SaveJob(ctx, &done))
	require.NoError(t, s.ReleaseJob(ctx, d.tenant, done.JobID))
	d.completedJob = done.JobID
	open := domain.Job{JobID: u.id("job_open_" + name), TenantID: d.tenant, Kind: domain.KindIDs, Status: domain.StatusQueued}
	require.NoError(t, s.CreateJob(ctx, &open, 3))
	d.opened = open.JobID
	d.window = u.clock.Now().Truncate(time.Minute)
	_, err = s.AddDeath(ctx, d.tenant, "ep_b", d.window, d.window.Add(5*time.Minute), domain.OpDeath{DeliveryID: d.dead.DeliveryID, Reason: "gone"})
	require.NoError(t, err)
	return d
}

// erasure: a tombstone revokes the tenant's keys and shows in
// TenantEndpoints and Load at once; the Erase methods then delete every
// kind of its items (counted), the tombstone stays, and another tenant's
// items are all still there.
func erasure(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	gone, kept := seedTenant(t, u, "t_gone"), seedTenant(t, u, "t_kept")

	require.ErrorIs(t, s.Tombstone(ctx, u.id("t_nobody")), store.ErrNotFound)
	before, err := s.Erased(ctx, gone.tenant)
	require.NoError(t, err)
	require.False(t, before)
	require.NoError(t, s.Tombstone(ctx, gone.tenant))
	for tenant, want := range map[string]bool{gone.tenant: true, kept.tenant: false} {
		erased, err := s.Erased(ctx, tenant)
		require.NoError(t, err)
		require.Equal(t, want, erased, tenant)
	}
	require.NoError(t, s.Tombstone(ctx, gone.tenant), "twice is harmless")
	_, err = s.TenantForKey(ctx, gone.keyHash)
	require.ErrorIs(t, err, store.ErrNotFound, "its keys stop authenticating at once")
	link, err := s.PortalLink(ctx, gone.linkHash)
	require.NoError(t, err)
	require.NotNil(t, link.RevokedAt, "its portal links are revoked at once")
	link, err = s.PortalLink(ctx, kept.linkHash)
	require.NoError(t, err)
	require.Nil(t, link.RevokedAt, "another tenant's are not")
	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_late", TenantID: gone.tenant, Hash: u.id("hl_late"), ExpiresAt: u.clock.Now().Add(time.Hour)})
	require.ErrorIs(t, err, store.ErrNotFound, "no new portal link while it is erased")
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k_late", TenantID: gone.tenant, Hash: u.id("h_late")})
	require.ErrorIs(t, err, store.ErrNotFound, "no new key while it is erased")
	eps, erased, err := s.TenantEndpoints(ctx, gone.tenant)
	require.NoError(t, err)
	require.True(t, erased)
	require.Empty(t, eps)
	eps, erased, err = s.TenantEndpoints(ctx, kept.tenant)
	require.NoError(t, err)
	require.False(t, erased)
	require.Len(t, eps, 2)
	snap, err := s.Load(ctx, nil, []store.EndpointRef{{TenantID: gone.tenant, EndpointID: "ep_a"}, {TenantID: kept.tenant, EndpointID: "ep_a"}})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{gone.tenant: true}, snap.Erased)
	require.Len(t, snap.Endpoints, 2, "the tombstone is not an endpoint")

	erasedN := map[string]int{}
	n, err := s.EraseDeliveries(ctx, gone.tenant, []string{gone.delivered.DeliveryID, kept.delivered.DeliveryID, "d_missing"})
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the tenant's own delivery")
	for _, kind := range []string{domain.EraseAPIKeys, domain.ErasePortalLinks, domain.EraseDeadDeliveries, domain.EraseRejections, domain.EraseJobs, domain.EraseDeadWindows} {
		for i := 0; ; i++ {
			require.Less(t, i, 10, kind)
			n, done, err := s.EraseIndexed(ctx, gone.tenant, kind, 1)
			require.NoError(t, err)
			erasedN[kind] += n
			if done {
				break
			}
		}
	}
	for i := 0; ; i++ { // what is left of its deliveries, by the delivery log
		require.Less(t, i, 10)
		n, done, err := s.EraseIndexed(ctx, gone.tenant, domain.EraseDeliveries, 1)
		require.NoError(t, err)
		erasedN[domain.EraseDeliveries] += n
		if done {
			break
		}
	}
	require.Equal(t, 1, erasedN[domain.EraseDeliveries], "the delivery no event leads to any more")
	for _, ep := range []string{"ep_a", "ep_b"} {
		for i := 0; ; i++ {
			require.Less(t, i, 10)
			n, done, err := s.EraseStats(ctx, gone.tenant, ep, 1)
			require.NoError(t, err)
			erasedN[domain.EraseStats] += n
			if done {
				break
			}
		}
	}
	for i := 0; ; i++ {
		require.Less(t, i, 10)
		counts, done, err := s.EraseTenantItems(ctx, gone.tenant, 1)
		require.NoError(t, err)
		for k, n := range counts {
			erasedN[k] += n
		}
		if done {
			break
		}
	}
	require.Equal(t, 1, erasedN[domain.EraseAPIKeys])
	require.Equal(t, 1, erasedN[domain.ErasePortalLinks])
	require.Equal(t, 1, erasedN[domain.EraseDeadDeliveries])
	require.Equal(t, 1, erasedN[domain.EraseRejections])
	require.Equal(t, 2, erasedN[domain.EraseJobs], "the completed job, by the index, and the open one, by its REPLAYJOBS item")
	require.Equal(t, 1, erasedN[domain.EraseDeadWindows])
	require.Equal(t, 8, erasedN[domain.EraseStats], "2 hour items and 2 items by type of each endpoint")
	require.Equal(t, 2, erasedN[domain.EraseEndpoints])
	require.GreaterOrEqual(t, erasedN[domain.EraseTenant], 2, "the tenant's item and its DLQ depth counter, at least")

	requireGone(t, u, gone)
	requireKept(t, u, kept)
	snap, err = s.Load(ctx, nil, []store.EndpointRef{{TenantID: gone.tenant, EndpointID: "ep_a"}})
	require.NoError(t, err)
	require.True(t, snap.Erased[gone.tenant], "the tombstone stays, until its TTL")
	_, err = s.CreateTenant(ctx, domain.Tenant{TenantID: gone.tenant})
	require.ErrorIs(t, err, store.ErrExists, "its id is not taken again while the tombstone lasts")
}

// requireGone checks that nothing of the tenant can be read.
func requireGone(t *testing.T, u *suite, d tenantData) {
	ctx, s := context.Background(), u.s
	_, err := s.Tenant(ctx, d.tenant)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.TenantForKey(ctx, d.keyHash)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.PortalLink(ctx, d.linkHash)
	require.ErrorIs(t, err, store.ErrNotFound)
	eps, err := s.Endpoints(ctx, d.tenant)
	require.NoError(t, err)
	require.Empty(t, eps)
	for _, del := range []domain.Delivery{d.delivered, d.dead, d.orphan} {
		_, err = s.Delivery(ctx, del.DeliveryID)
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	dead, _, err := s.ListDead(ctx, d.tenant, domain.DeadFilter{}, 10, "")
	require.NoError(t, err)
	require.Empty(t, dead)
	logged, _, err := s.ListDeliveries(ctx, d.tenant, domain.DeliveryFilter{}, 10, "")
	require.NoError(t, err)
	require.Empty(t, logged, "the delivery log's entries went with their records")
	_, err = s.Rejection(ctx, d.rejection)
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, j := range []string{d.completedJob, d.opened} {
		_, err = s.Job(ctx, j)
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	open, err := s.TenantJobs(ctx, d.tenant)
	require.NoError(t, err)
	require.Empty(t, open)
	_, err = s.DeadWindow(ctx, d.tenant, "ep_b", d.window)
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, ep := range []string{"ep_a", "ep_b"} {
		st, err := s.EndpointStats(ctx, d.tenant, ep, u.clock.Now().Add(-48*time.Hour), u.clock.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, st)
		byType, err := s.EndpointTypeStats(ctx, d.tenant, ep, u.clock.Now().Add(-48*time.Hour), u.clock.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, byType, "the counters by event type went with the others")
	}
	depths, err := s.DLQDepths(ctx)
	require.NoError(t, err)
	require.NotContains(t, depths, d.tenant)
}

// requireKept checks that every item of the tenant is still there.
func requireKept(t *testing.T, u *suite, d tenantData) {
	ctx, s := context.Background(), u.s
	_, err := s.Tenant(ctx, d.tenant)
	require.NoError(t, err)
	owner, err := s.TenantForKey(ctx, d.keyHash)
	require.NoError(t, err)
	require.Equal(t, d.tenant, owner)
	eps, err := s.Endpoints(ctx, d.tenant)
	require.NoError(t, err)
	require.Len(t, eps, 2)
	for _, del := range []domain.Delivery{d.delivered, d.dead, d.orphan} {
		_, err = s.Delivery(ctx, del.DeliveryID)
		require.NoError(t, err)
	}
	dead, _, err := s.ListDead(ctx, d.tenant, domain.DeadFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, dead, 1)
	logged, _, err := s.ListDeliveries(ctx, d.tenant, domain.DeliveryFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, logged, 3)
	_, err = s.Rejection(ctx, d.rejection)
	require.NoError(t, err)
	for _, j := range []string{d.completedJob, d.opened} {
		_, err = s.Job(ctx, j)
		require.NoError(t, err)
	}
	_, err = s.DeadWindow(ctx, d.tenant, "ep_b", d.window)
	require.NoError(t, err)
	for _, ep := range []string{"ep_a", "ep_b"} {
		st, err := s.EndpointStats(ctx, d.tenant, ep, u.clock.Now().Add(-48*time.Hour), u.clock.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Len(t, st, 2)
		byType, err := s.EndpointTypeStats(ctx, d.tenant, ep, u.clock.Now().Add(-48*time.Hour), u.clock.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Len(t, byType, 2)
	}
	depths, err := s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, depths[d.tenant])
}
