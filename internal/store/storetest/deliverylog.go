package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// logged lists every delivery of tenant that f selects from the delivery
// log, page by page of limit, and the number of pages read.
func (u *suite) logged(t *testing.T, tenant string, f domain.DeliveryFilter, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	cursor, pages := "", 0
	for {
		ds, next, err := u.s.ListDeliveries(context.Background(), tenant, f, limit, cursor)
		require.NoError(t, err)
		require.LessOrEqual(t, len(ds), limit)
		pages++
		for _, d := range ds {
			require.Equal(t, tenant, d.TenantID)
			require.Empty(t, d.AttemptLog, "the listing carries no attempt log")
			require.Empty(t, d.Message, "nor a message")
			ids = append(ids, d.DeliveryID)
		}
		if next == "" {
			return ids, pages
		}
		require.Less(t, pages, 100, "the cursors run in a circle")
		cursor = next
	}
}

// logOutcome is one delivery of the log case: its endpoint, type and its
// attempts' answers and final state.
type logOutcome struct {
	endpoint, typ string
	answers       []domain.Attempt
	state         domain.DeliveryState
}

// logOutcomes are the log case's deliveries, created a minute apart in this
// order (the listing returns them the other way round).
var logOutcomes = []logOutcome{
	{"ep_a", "order.created", []domain.Attempt{{Status: 200}}, domain.StateDelivered},
	{"ep_a", "order.created", []domain.Attempt{{Status: 503, Error: "http_503"}}, domain.StatePending},
	{"ep_b", "order.paid", []domain.Attempt{{Status: 401, Error: "http_401"}}, domain.StateDead},
	{"ep_a", "order.paid", []domain.Attempt{{Error: domain.ErrorTimeout}}, domain.StatePending},
	{"ep_b", "order.created", []domain.Attempt{{Error: "connection_refused"}}, domain.StatePending},
	{"ep_a", "order.paid", []domain.Attempt{{Status: 401, Error: "http_401"}}, domain.StateDead},
	{"ep_b", "order.paid", []domain.Attempt{{Error: domain.ErrorForbiddenAddress}}, domain.StateDead},
	{"ep_a", "order.created", []domain.Attempt{{Status: 500, Error: "http_500"}, {Status: 204}}, domain.StateDelivered},
}

// seedLog records the log case's deliveries and returns their ids, newest
// first, and the creation time of the first.
func seedLog(t *testing.T, u *suite, tenant string) ([]string, time.Time) {
	ctx := context.Background()
	base := u.clock.Now()
	var ids []string
	for i, o := range logOutcomes {
		d := u.delivery(tenant, o.endpoint, fmt.Sprintf("evt_log_%d", i))
		// Its event occurred as it was created: listed by that time, or,
		// the fourth, made before ids carried the time, by its creation,
		// through the delivery log's index.
		d.DeliveryID = domain.DeliveryID(tenant, d.EventID, o.endpoint, u.clock.Now())
		if i == 3 {
			d.DeliveryID = domain.LegacyDeliveryID(d.EventID, o.endpoint)
		}
		d.EventType = o.typ
		for n, a := range o.answers {
			a.Number, a.At = n+1, u.clock.Now()
			out := domain.Outcome{State: domain.StatePending}
			if n == len(o.answers)-1 {
				out.State = o.state
			}
			if out.State == domain.StateDead {
				out.DeadReason, out.Message = domain.Rejected(a.Status), "{}"
			}
			require.NoError(t, u.s.RecordAttempt(ctx, u.current(t, d), a, out))
		}
		ids = append(ids, d.DeliveryID)
		u.clock.Advance(time.Minute)
	}
	slices.Reverse(ids)
	return ids, base
}

// deliveryLog: every attempted delivery of a tenant is listed newest first
// by its event's time (a legacy record by its creation), each once, at
// every page size, under each filter; a state change shows and keeps its
// place; cursors are bound to their query and reach no other tenant.
func deliveryLog(t *testing.T, u *suite) {
	tenant := u.id("t_log")
	ids, base := seedLog(t, u, tenant)
	pick := func(is ...int) []string { // by creation order
		var out []string
		for _, i := range is {
			out = append(out, ids[len(ids)-1-i])
		}
		return out
	}
	require.Eventually(t, func() bool { // the index is eventually consistent
		got, _ := u.logged(t, tenant, domain.DeliveryFilter{}, 100)
		return len(got) == len(ids)
	}, 10*time.Second, 100*time.Millisecond)
	for _, tc := range []struct {
		name string
		f    domain.DeliveryFilter
		want []string
	}{
		{"all, newest first", domain.DeliveryFilter{}, ids},
		{"one endpoint", domain.DeliveryFilter{EndpointID: "ep_b"}, pick(6, 4, 2)},
		{"one type", domain.DeliveryFilter{EventType: "order.paid"}, pick(6, 5, 3, 2)},
		{"pending", domain.DeliveryFilter{State: domain.StatePending}, pick(4, 3, 1)},
		{"delivered", domain.DeliveryFilter{State: domain.StateDelivered}, pick(7, 0)},
		{"dead", domain.DeliveryFilter{State: domain.StateDead}, pick(6, 5, 2)},
		{"status 401", domain.DeliveryFilter{Status: 401}, pick(5, 2)},
		{"2xx (the last answer)", domain.DeliveryFilter{Class: domain.Status2xx}, pick(7, 0)},
		{"4xx", domain.DeliveryFilter{Class: domain.Status4xx}, pick(5, 2)},
		{"5xx", domain.DeliveryFilter{Class: domain.Status5xx}, pick(1)},
		{"timeout", domain.DeliveryFilter{Class: domain.StatusTimeout}, pick(3)},
		{"network", domain.DeliveryFilter{Class: domain.StatusNetwork}, pick(4)},
		{"refused", domain.DeliveryFilter{Class: domain.StatusRefused}, pick(6)},
		{"3xx: none", domain.DeliveryFilter{Class: domain.Status3xx}, nil},
		{"since, inclusive", domain.DeliveryFilter{Since: base.Add(5 * time.Minute)}, pick(7, 6, 5)},
		{"until, inclusive", domain.DeliveryFilter{Until: base.Add(2 * time.Minute)}, pick(2, 1, 0)},
		{"this endpoint, a 401, since then", domain.DeliveryFilter{EndpointID: "ep_a", Status: 401, Since: base.Add(time.Minute)}, pick(5)},
		{"a range with nothing in it", domain.DeliveryFilter{Since: base.Add(time.Hour)}, nil},
	} {
		for _, limit := range []int{1, 2, 3, 5, 8, 9, 100} {
			got, pages := u.logged(t, tenant, tc.f, limit)
			require.Equal(t, tc.want, got, "%s, %d a page", tc.name, limit)
			require.GreaterOrEqual(t, pages, (len(tc.want)+limit-1)/limit, tc.name)
		}
	}
	logChanges(t, u, tenant, ids)
	logCursors(t, u, tenant, base)
}

// logChanges: a delivery's later write shows in the listing (the index is
// kept by the record's own writes), in the same place.
func logChanges(t *testing.T, u *suite, tenant string, ids []string) {
	ctx := context.Background()
	pending := ids[len(ids)-1-1] // the 503, created second
	d, err := u.s.Delivery(ctx, pending)
	require.NoError(t, err)
	require.NoError(t, u.s.RecordAttempt(ctx, d, domain.Attempt{Number: 2, At: u.clock.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	require.Eventually(t, func() bool {
		got, _ := u.logged(t, tenant, domain.DeliveryFilter{State: domain.StateDelivered}, 100)
		return slices.Contains(got, pending)
	}, 10*time.Second, 100*time.Millisecond)
	all, _ := u.logged(t, tenant, domain.DeliveryFilter{}, 3)
	require.Equal(t, ids, all, "its place is its event's time")
	page, _, err := u.s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{EndpointID: "ep_a", State: domain.StateDelivered}, 10, "")
	require.NoError(t, err)
	require.Len(t, page, 3)
	got := page[1]
	require.Equal(t, pending, got.DeliveryID)
	require.Equal(t, 2, got.Attempts)
	require.NotZero(t, got.CreatedAt)
	require.Equal(t, 200, got.LastStatus)
	require.WithinDuration(t, u.clock.Now().Add(-time.Duration(len(logOutcomes)-1)*time.Minute), got.CreatedAt, time.Millisecond, "created by its first attempt")
	require.Equal(t, "order.created", got.EventType)
	require.NotEmpty(t, got.EventID)
}

// logCursors: cursors are bound to their query and to this store, and are
// positions that reach no other tenant; filters no key holds are refused.
func logCursors(t *testing.T, u *suite, tenant string, base time.Time) {
	ctx, s := context.Background(), u.s
	other := u.id("t_log_other")
	ids, _ := u.logged(t, other, domain.DeliveryFilter{}, 100)
	require.Empty(t, ids, "another tenant's log is its own")
	_, cursor, err := s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{}, 2, "")
	require.NoError(t, err)
	require.NotEmpty(t, cursor)
	_, _, err = s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{Status: 401}, 2, cursor)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor under another filter")
	_, _, err = s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{Until: base}, 2, cursor)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor outside the range")
	_, dlqCursor, err := s.ListDead(ctx, tenant, domain.DeadFilter{}, 1, "")
	require.NoError(t, err)
	require.NotEmpty(t, dlqCursor)
	_, _, err = s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{}, 2, dlqCursor)
	require.ErrorIs(t, err, store.ErrCursorMismatch, "a cursor of the dead-letter listing")
	for _, bad := range []string{"!!", "e30", "bm90IGpzb24"} {
		_, _, err = s.ListDeliveries(ctx, tenant, domain.DeliveryFilter{}, 2, bad)
		require.ErrorIs(t, err, store.ErrBadCursor, "cursor %q", bad)
	}
	page, _, err := s.ListDeliveries(ctx, other, domain.DeliveryFilter{}, 10, cursor)
	require.NoError(t, err, "a cursor is a position, not a tenant")
	require.Empty(t, page, "and cannot reach another tenant's deliveries")
	for name, f := range map[string]domain.DeliveryFilter{
		"until before since": {Since: base.Add(time.Hour), Until: base},
		"a year past 9999":   {Since: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, _, err := s.ListDeliveries(ctx, tenant, f, 10, "")
		require.ErrorIs(t, err, store.ErrBadFilter, name)
	}
}
