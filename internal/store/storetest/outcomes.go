package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// packedOutcomes: deliveries delivered at their first attempt are written
// as outcome pages (RecordFirstAttempts), and every reader finds them as
// it found their records: Delivery, Load (not deliver's records-only
// LoadWith), the delivery log merged with the records (each delivery
// once, its filters and cursors), a resend (which then writes the
// record), and the tenant's erasure.
func packedOutcomes(t *testing.T, u *suite) {
	ctx := context.Background()
	tenant, other := u.id("tp"), u.id("tq")
	now := u.clock.Now()
	sec := now.Truncate(time.Second).Add(-time.Minute)
	type spec struct {
		endpoint, typ string
		status        int
		at            time.Time
	}
	var specs []spec
	for i := range 12 { // 8 in one second, 4 in the next
		specs = append(specs, spec{[]string{"ep_a", "ep_b"}[i%2], []string{"order.created", "order.paid"}[i%3%2], []int{200, 204}[i%4/3], sec.Add(time.Duration(i/8)*time.Second + time.Duration(i)*time.Millisecond)})
	}
	var firsts []store.FirstAttempt
	for i, sp := range specs {
		ev := u.id(fmt.Sprintf("pk%d", i))
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, sp.endpoint, sp.at), TenantID: tenant, EndpointID: sp.endpoint, EventID: ev, EventType: sp.typ}
		firsts = append(firsts, store.FirstAttempt{Delivery: d, Attempt: domain.Attempt{Number: 1, At: now, Status: sp.status, LatencyMS: 7, Excerpt: "ok"}})
	}
	// A cancel that raced the delivery of the last one: it created a
	// record with no attempt before the page was written.
	raced := firsts[len(firsts)-1].Delivery
	_, ok, err := u.s.CancelDelivery(ctx, raced, u.id("job"), now)
	require.NoError(t, err)
	require.True(t, ok)
	left, err := u.s.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Empty(t, left)
	// Records beside them: a pending delivery and one delivered at its
	// second attempt, in the same seconds.
	pending := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, u.id("pr0"), "ep_a", sec.Add(500*time.Millisecond)), TenantID: tenant, EndpointID: "ep_a", EventID: u.id("pr0"), EventType: "order.created"}
	require.NoError(t, u.s.RecordAttempt(ctx, pending, domain.Attempt{Number: 1, At: now, Status: 503, Error: "http_503"}, domain.Outcome{State: domain.StatePending}))
	retried := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, u.id("pr1"), "ep_b", sec.Add(1500*time.Millisecond)), TenantID: tenant, EndpointID: "ep_b", EventID: u.id("pr1"), EventType: "order.paid"}
	require.NoError(t, u.s.RecordAttempt(ctx, retried, domain.Attempt{Number: 1, At: now, Status: 503, Error: "http_503"}, domain.Outcome{State: domain.StatePending}))
	require.NoError(t, u.s.RecordAttempt(ctx, u.current(t, retried), domain.Attempt{Number: 2, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))

	var ids []string
	for _, f := range firsts {
		ids = append(ids, f.Delivery.DeliveryID)
		d, err := u.s.Delivery(ctx, f.Delivery.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, d.State, "the raced cancel's record loses to the delivered row")
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, f.Attempt.Status, d.LastStatus)
		require.Equal(t, tenant, d.TenantID)
		require.Equal(t, f.Delivery.EventType, d.EventType)
		require.Len(t, d.AttemptLog, 1)
		require.Equal(t, "ok", d.AttemptLog[0].Excerpt)
	}
	snap, err := u.s.Load(ctx, append(slices.Clone(ids), pending.DeliveryID, retried.DeliveryID), nil)
	require.NoError(t, err)
	require.Len(t, snap.Deliveries, len(ids)+2)
	require.Equal(t, domain.StatePending, snap.Deliveries[pending.DeliveryID].State)
	recordsOnly, err := u.s.LoadWith(ctx, store.LoadOptions{}, ids[:3], nil)
	require.NoError(t, err)
	require.Empty(t, recordsOnly.Deliveries, "deliver's read is of records only")

	// The delivery log: every delivery once, newest first, page by page.
	all := append(slices.Clone(ids), pending.DeliveryID, retried.DeliveryID)
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b string) int { return compareByTime(b, a) })
	for _, limit := range []int{3, 5, 100} {
		got, _ := u.logged(t, tenant, domain.DeliveryFilter{}, limit)
		require.Equal(t, want, got, "limit %d", limit)
	}
	pick := func(keep func(i int) bool) []string {
		var out []string
		for _, id := range want {
			if i := slices.Index(ids, id); i >= 0 && keep(i) {
				out = append(out, id)
			}
		}
		return out
	}
	got, _ := u.logged(t, tenant, domain.DeliveryFilter{EndpointID: "ep_a", State: domain.StateDelivered}, 2)
	require.Equal(t, pick(func(i int) bool { return specs[i].endpoint == "ep_a" }), got)
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{Status: 204}, 2)
	require.Equal(t, pick(func(i int) bool { return specs[i].status == 204 }), got)
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{EventType: "order.paid", Since: sec.Add(time.Second)}, 2)
	require.Equal(t, sortedByTime(append(pick(func(i int) bool { return specs[i].typ == "order.paid" && i >= 8 }), retried.DeliveryID)), got)
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{State: domain.StatePending}, 5)
	require.Equal(t, []string{pending.DeliveryID}, got, "no row is pending")
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{Until: sec.Add(3 * time.Millisecond)}, 5)
	require.Equal(t, pick(func(i int) bool { return i <= 3 }), got)
	got, _ = u.logged(t, other, domain.DeliveryFilter{}, 5)
	require.Empty(t, got, "another tenant's log")

	// A resend of a packed delivery writes its record, which keeps it
	// delivered with the resend's attempt logged.
	d, err := u.s.Delivery(ctx, ids[0])
	require.NoError(t, err)
	require.NoError(t, u.s.RecordResendAttempt(ctx, d, domain.Attempt{Number: 1, At: now, Status: 200}))
	d, err = u.s.Delivery(ctx, ids[0])
	require.NoError(t, err)
	require.False(t, d.Packed, "its record now")
	require.Equal(t, domain.StateDelivered, d.State)
	require.Equal(t, 1, d.Resends)
	require.Len(t, d.AttemptLog, 2)
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{}, 4)
	require.Equal(t, want, got, "the record and its row listed once")

	// Erasure: the tenant's pages go with its records.
	_, err = u.s.CreateTenant(ctx, domain.Tenant{TenantID: tenant})
	require.NoError(t, err)
	require.NoError(t, u.s.Tombstone(ctx, tenant))
	for range 50 {
		_, done, err := u.s.EraseIndexed(ctx, tenant, domain.EraseDeliveries, 3)
		require.NoError(t, err)
		if done {
			break
		}
	}
	for _, id := range ids {
		_, err := u.s.Delivery(ctx, id)
		require.True(t, errors.Is(err, store.ErrNotFound), "%s: %v", id, err)
	}
	got, _ = u.logged(t, tenant, domain.DeliveryFilter{}, 5)
	require.Empty(t, got)
}

// compareByTime orders delivery ids as the delivery log does: by their
// event's time, then by id.
func compareByTime(a, b string) int {
	pa, _ := domain.ParseDeliveryID(a)
	pb, _ := domain.ParseDeliveryID(b)
	if c := pa.At.Compare(pb.At); c != 0 {
		return c
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortedByTime is ids newest first.
func sortedByTime(ids []string) []string {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int { return compareByTime(b, a) })
	return out
}
