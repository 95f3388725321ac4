package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// apiRate: a tenant's window of expensive API requests grants limit of
// them, then refuses; the next second's window grants again; another
// tenant's window is its own.
func apiRate(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant, other := u.id("t_api"), u.id("t_api_other")
	w := u.clock.Now().Truncate(time.Second)
	for i := range 3 {
		ok, err := s.TakeAPIRequest(ctx, tenant, w.Add(time.Duration(i)*100*time.Millisecond), 3)
		require.NoError(t, err)
		require.True(t, ok, "request %d of 3", i)
	}
	ok, err := s.TakeAPIRequest(ctx, tenant, w.Add(900*time.Millisecond), 3)
	require.NoError(t, err)
	require.False(t, ok, "the fourth in the same second")
	ok, err = s.TakeAPIRequest(ctx, other, w.Add(900*time.Millisecond), 3)
	require.NoError(t, err)
	require.True(t, ok, "another tenant's window")
	ok, err = s.TakeAPIRequest(ctx, tenant, w.Add(time.Second), 3)
	require.NoError(t, err)
	require.True(t, ok, "the next second")
}
