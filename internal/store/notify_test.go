package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
)

// A notification address is stored, listed, verified once (a second
// verification conflicts), unsubscribed and deleted; another tenant's is
// never listed.
func TestNotifyEmailLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(newFakeDB())
	for _, id := range []string{"t1", "t2"} {
		_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: id, Name: id})
		require.NoError(t, err)
	}
	_, err := s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "nope", ID: "ne_1", Address: "a@example.com", Status: domain.NotifyPending})
	require.ErrorIs(t, err, ErrNotFound, "no such tenant")
	n, err := s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "t1", ID: "ne_1", Address: "ops@example.com", Status: domain.NotifyPending, VerifyHash: "h", UnsubscribeToken: "u"})
	require.NoError(t, err)
	require.False(t, n.CreatedAt.IsZero())
	_, err = s.PutNotifyEmail(ctx, domain.NotifyEmail{TenantID: "t2", ID: "ne_2", Address: "x@example.com", Status: domain.NotifyPending})
	require.NoError(t, err)

	list, err := s.NotifyEmails(ctx, "t1")
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "ops@example.com", list[0].Address)

	v, err := s.SetNotifyStatus(ctx, "t1", "ne_1", domain.NotifyPending, domain.NotifyVerified)
	require.NoError(t, err)
	require.Equal(t, domain.NotifyVerified, v.Status)
	require.Empty(t, v.VerifyHash, "a verification link works once")
	require.NotNil(t, v.VerifiedAt)
	_, err = s.SetNotifyStatus(ctx, "t1", "ne_1", domain.NotifyPending, domain.NotifyVerified)
	require.ErrorIs(t, err, ErrConflict)
	_, err = s.SetNotifyStatus(ctx, "t1", "ne_9", domain.NotifyPending, domain.NotifyVerified)
	require.ErrorIs(t, err, ErrConflict, "none: nothing to move")
	_, err = s.SetNotifyStatus(ctx, "t1", "ne_1", domain.NotifyVerified, domain.NotifyUnsubscribed)
	require.NoError(t, err)

	require.NoError(t, s.DeleteNotifyEmail(ctx, "t1", "ne_1"))
	require.ErrorIs(t, s.DeleteNotifyEmail(ctx, "t1", "ne_1"), ErrNotFound)
}

// The notices of a tenant's hour are counted up to the limit, never past
// it; the next hour starts again; another tenant has its own count.
func TestTakeNoticesIsBoundedPerTenantHour(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newTestStore(newFakeDB())
	at := time.Date(2026, 12, 7, 10, 15, 0, 0, time.UTC)
	ok, err := s.TakeNotices(ctx, "t1", at, 3, 5)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.TakeNotices(ctx, "t1", at.Add(10*time.Minute), 2, 5)
	require.NoError(t, err)
	require.True(t, ok, "exactly at the limit")
	ok, err = s.TakeNotices(ctx, "t1", at.Add(20*time.Minute), 1, 5)
	require.NoError(t, err)
	require.False(t, ok, "past the limit")
	ok, err = s.TakeNotices(ctx, "t2", at, 5, 5)
	require.NoError(t, err)
	require.True(t, ok, "another tenant's count")
	ok, err = s.TakeNotices(ctx, "t1", at.Add(time.Hour), 1, 5)
	require.NoError(t, err)
	require.True(t, ok, "the next hour")
}
