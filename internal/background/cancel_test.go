package background_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/cancel"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

// A cancel marks the endpoint's pending deliveries cancelled, and those
// without a record whose event went to it (addressed to it, or of a type
// it takes and matched by its payload filter); a delivered or dead one
// is left (not_pending), another endpoint's and another tenant's are not
// touched, the events before since or after before neither. The job
// names what it cancelled, and a replay since a time sends them again.
func TestCancelPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := storefake.NewMessageLog()
	e.w.MessageLog = log
	e.st.putEndpoint(domain.Endpoint{TenantID: tenantA, EndpointID: "ep_f", URL: "https://r.example", EventTypes: []string{"order.*"}, Filter: `{"event":["evt_match"]}`})
	in := e.t0.Add(-time.Hour)
	for _, ev := range []string{"evt_pend", "evt_new", "evt_del", "evt_dead", "evt_match", "evt_nomatch", "evt_legacy"} {
		event(log, ev, tenantA, "order.created", in)
	}
	event(log, "evt_user", tenantA, "user.created", in)
	event(log, "evt_late", tenantA, "order.created", e.t0.Add(time.Hour))
	event(log, "evt_b", tenantB, "order.created", in)
	pend := e.delivery("evt_pend", tenantA, "ep_f", domain.StatePending)
	del := e.delivery("evt_del", tenantA, "ep_f", domain.StateDelivered)
	dead := e.delivery("evt_dead", tenantA, "ep_f", domain.StateDead)
	otherEp := e.delivery("evt_pend", tenantA, "ep_1", domain.StatePending)
	otherTenant := e.delivery("evt_b", tenantB, "ep_1", domain.StatePending)
	// Made before delivery ids carried the time: cancelled under its own id.
	legacy := e.deliveryAs(domain.LegacyDeliveryID("evt_legacy", "ep_f"), "evt_legacy", tenantA, "ep_f", domain.StatePending)
	// Without records: evt_new and evt_nomatch do not match the filter,
	// evt_match does; evt_user is not of a type ep_f takes.
	match := e.deliveryID("evt_match", tenantA, "ep_f")

	id := e.start(t, domain.Job{JobID: "rj_cancel", TenantID: tenantA, Kind: domain.KindCancel,
		Args: &cancel.Args{Range: domain.Range{EndpointID: "ep_f", Since: e.t0.Add(-24 * time.Hour), States: []domain.DeliveryState{domain.StatePending}}}})
	e.run(t, e.w, id)

	j := e.st.job(id)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Equal(t, 3, argsOf[cancel.Args](t, j).Cancelled)
	require.ElementsMatch(t, []string{pend, match, legacy}, argsOf[cancel.Args](t, j).CancelledIDs)
	require.Equal(t, map[string]int{domain.SkipNotPending: 2}, j.Skipped)
	for _, c := range []struct {
		id   string
		want domain.DeliveryState
	}{{pend, domain.StateCancelled}, {match, domain.StateCancelled}, {legacy, domain.StateCancelled}, {del, domain.StateDelivered}, {dead, domain.StateDead},
		{otherEp, domain.StatePending}, {otherTenant, domain.StatePending}} {
		d, _ := e.st.get(c.id)
		require.Equal(t, c.want, d.State, c.id)
	}
	got, _ := e.st.get(match)
	require.Equal(t, tenantA, got.TenantID, "a record made whole")
	require.Equal(t, "evt_match", got.EventID)
	require.Equal(t, id, got.CancelledBy)
	for _, ev := range []string{"evt_new", "evt_nomatch", "evt_user", "evt_late", "evt_legacy"} {
		_, err := e.st.Store.Delivery(context.Background(), e.deliveryID(ev, tenantA, "ep_f"))
		require.ErrorIs(t, err, store.ErrNotFound, "%s: no delivery of it was made", ev)
	}
	require.Empty(t, e.q.sentTo(deliveryURL), "a cancel sends nothing")

	// Replayed later: the cancelled deliveries are sent, as replays made
	// after the cancel, which deliver attempts.
	r := e.start(t, domain.Job{JobID: "rj_again", TenantID: tenantA, Kind: domain.KindSince,
		Args: &replay.Since{Range: domain.Range{Since: e.t0.Add(-2 * time.Hour), States: []domain.DeliveryState{domain.StateCancelled}}}})
	e.clk.Advance(time.Second)
	e.run(t, e.w, r)
	sent := e.sentMessages(t)
	require.Len(t, sent, 3)
	for _, did := range []string{pend, match, legacy} {
		d, _ := e.st.get(did)
		require.True(t, d.Revives(sent[did][0].ReplayedAt), did)
	}
}

// A cancel of many deliveries runs in steps; a step that stops after its
// writes (its checkpoint lost) runs again and counts each delivery once.
func TestCancelResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := storefake.NewMessageLog()
	e.w.MessageLog = log
	var ids []string
	for i := range 1200 {
		ev := fmt.Sprintf("evt_%04d", i)
		event(log, ev, tenantA, "order.created", e.t0.Add(-time.Duration(i+1)*time.Second))
		ids = append(ids, e.delivery(ev, tenantA, "ep_1", domain.StatePending))
	}
	e.st.fail(fault{method: "SaveJob", call: 3}) // the first step's checkpoint (after the start's and the recorded job)
	id := e.start(t, domain.Job{JobID: "rj_many", TenantID: tenantA, Kind: domain.KindCancel,
		Args: &cancel.Args{Range: domain.Range{EndpointID: "ep_1", Since: e.t0.Add(-24 * time.Hour), States: []domain.DeliveryState{domain.StatePending}}}})
	ctx := context.Background()
	failures := 0
	for n := 0; n < 20 && e.st.job(id).Status != domain.StatusCompleted; n++ {
		if err := e.w.Step(ctx, id); err != nil {
			failures++
		}
	}
	require.Equal(t, 1, failures)
	j := e.st.job(id)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Equal(t, 1200, argsOf[cancel.Args](t, j).Cancelled, "each counted once")
	require.Len(t, argsOf[cancel.Args](t, j).CancelledIDs, cancel.MaxCancelledIDs, "named up to the bound")
	require.GreaterOrEqual(t, j.Steps, 3)
	for _, did := range ids {
		d, _ := e.st.get(did)
		require.Equal(t, domain.StateCancelled, d.State)
	}
}

// Cancels and replays since a time share the tenant's job places.
func TestCancelBoundedByTheTenantsJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.w.MaxOpenJobs = 2
	rg := func() *domain.Range { return &domain.Range{EndpointID: "ep_1", Since: e.t0.Add(-time.Hour)} }
	e.start(t, domain.Job{JobID: "rj_1", TenantID: tenantA, Kind: domain.KindCancel, Args: &cancel.Args{Range: *rg()}})
	e.start(t, domain.Job{JobID: "rj_2", TenantID: tenantA, Kind: domain.KindSince, Args: &replay.Since{Range: *rg()}})
	j := domain.Job{JobID: "rj_3", TenantID: tenantA, Kind: domain.KindCancel, Args: &cancel.Args{Range: *rg()}, Status: domain.StatusQueued}
	require.ErrorIs(t, e.w.Start(context.Background(), &j), store.ErrTooManyJobs)
	b := domain.Job{JobID: "rj_b", TenantID: tenantB, Kind: domain.KindCancel, Args: &cancel.Args{Range: *rg()}, Status: domain.StatusQueued}
	require.NoError(t, e.w.Start(context.Background(), &b), "another tenant's places are its own")
}
