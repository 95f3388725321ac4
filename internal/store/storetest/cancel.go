package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// cancels: CancelDelivery takes a pending delivery or one without a record
// (created whole, as an attempt would), never a delivered, dead or
// cancelled one; an attempt that read the delivery pending and records
// after the cancel is logged and counted, and the delivery stays
// cancelled; one that read it cancelled (a replay's) moves it on; the DLQ
// depth never moves for a cancel.
func cancels(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_cancel")
	now := u.clock.Now()
	at := now.Truncate(time.Millisecond)

	unrecorded := u.delivery(tenant, "ep", "evt_c1")
	_, ok, err := s.CancelDelivery(ctx, unrecorded, "cj_1", at)
	require.NoError(t, err)
	require.True(t, ok, "no record yet: cancelled")
	got := u.current(t, unrecorded)
	require.Equal(t, domain.StateCancelled, got.State)
	require.Equal(t, "cj_1", got.CancelledBy)
	require.True(t, at.Equal(*got.CancelledAt))
	require.Equal(t, tenant, got.TenantID)
	require.Equal(t, unrecorded.EventID, got.EventID)
	require.Equal(t, "ep", got.EndpointID)
	require.False(t, got.CreatedAt.IsZero(), "created as an attempt would")

	again, ok, err := s.CancelDelivery(ctx, unrecorded, "cj_2", at)
	require.NoError(t, err)
	require.False(t, ok, "cancelled once")
	require.Equal(t, "cj_1", again.CancelledBy, "the record as it is")

	// Pending, with an attempt under way that read it pending: the cancel
	// wins; the attempt is logged and counted, the delivery stays cancelled.
	pending := u.delivery(tenant, "ep", "evt_c2")
	require.NoError(t, s.RecordAttempt(ctx, pending, domain.Attempt{Number: 1, At: now, Status: 503}, domain.Outcome{State: domain.StatePending}))
	read := u.current(t, pending)
	_, ok, err = s.CancelDelivery(ctx, read, "cj_1", at)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.RecordAttempt(ctx, read, domain.Attempt{Number: 2, At: now, Status: 500}, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: "m"}))
	got = u.current(t, pending)
	require.Equal(t, domain.StateCancelled, got.State, "the cancel won: the late attempt's death does not stand")
	require.Equal(t, 2, got.Attempts)
	require.Len(t, got.AttemptLog, 2)
	require.Nil(t, got.DeadAt)
	require.Equal(t, 0, u.depth(t, tenant), "no death counted")

	// A replay's attempt, made on the record read cancelled: it moves on.
	require.NoError(t, s.RecordAttempt(ctx, got, domain.Attempt{Number: 3, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	require.Equal(t, domain.StateDelivered, u.current(t, pending).State)

	// Delivered or dead first: the attempt wins, the cancel leaves it.
	delivered := u.delivery(tenant, "ep", "evt_c3")
	require.NoError(t, s.RecordAttempt(ctx, delivered, domain.Attempt{Number: 1, At: now, Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	cur, ok, err := s.CancelDelivery(ctx, delivered, "cj_1", at)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, domain.StateDelivered, cur.State)

	dead := u.delivery(tenant, "ep", "evt_c4")
	require.NoError(t, s.RecordAttempt(ctx, dead, domain.Attempt{Number: 1, At: now, Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonEndpointGone, Message: "m"}))
	cur, ok, err = s.CancelDelivery(ctx, u.current(t, dead), "cj_1", at)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, domain.StateDead, cur.State)
	require.Equal(t, 1, u.depth(t, tenant), "the dead one alone is counted")
}
