package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// degradedMarks: an endpoint's failure-rate alert is stored on create and
// changed by an update; its degraded mark is set once per episode (a
// second verdict of degraded moves nothing), removed once, set again by a
// new episode with its own start, removed by any change of the alert, and
// never creates a deleted endpoint's item. None of the marks is a
// revision.
func degradedMarks(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_degraded")
	alert := domain.FailureRateAlert{ThresholdPercent: 20, WindowHours: 1, MinAttempts: 20}
	e, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep", URL: "https://example.com/x", FailureRateAlert: &alert})
	require.NoError(t, err)
	require.Equal(t, &alert, e.FailureRateAlert)

	mark := func(degraded bool) store.DegradedEffect {
		t.Helper()
		fx, err := s.MarkEndpointDegraded(ctx, tenant, "ep", degraded)
		require.NoError(t, err)
		return fx
	}
	require.False(t, mark(false).Moved, "nothing to clear")
	start := u.clock.Now()
	fx := mark(true)
	require.True(t, fx.Moved)
	require.True(t, start.Equal(fx.Since), "the episode starts now: %s", fx.Since)
	u.clock.Advance(time.Minute)
	require.Equal(t, store.DegradedEffect{}, mark(true), "once per episode")
	got := u.endpoint(t, tenant)
	require.True(t, start.Equal(*got.DegradedSince))
	require.Zero(t, got.Revision, "a health write, no revision")

	fx = mark(false)
	require.True(t, fx.Moved)
	require.True(t, start.Equal(fx.Since), "the episode that ended: %s", fx.Since)
	require.False(t, mark(false).Moved, "cleared once")
	require.Nil(t, u.endpoint(t, tenant).DegradedSince)

	u.clock.Advance(time.Minute)
	fx = mark(true)
	require.True(t, fx.Moved, "a new episode")
	require.True(t, u.clock.Now().Equal(fx.Since))

	// A change of the alert ends the episode; so does its removal.
	stricter := domain.FailureRateAlert{ThresholdPercent: 50, WindowHours: 6, MinAttempts: 100}
	e, err = s.UpdateEndpoint(ctx, tenant, "ep", store.EndpointChange{FailureRateAlert: &stricter})
	require.NoError(t, err)
	require.Equal(t, &stricter, e.FailureRateAlert)
	require.Nil(t, e.DegradedSince, "the mark goes with the alert it was of")
	require.True(t, mark(true).Moved)
	e, err = s.UpdateEndpoint(ctx, tenant, "ep", store.EndpointChange{FailureRateAlert: &domain.FailureRateAlert{}})
	require.NoError(t, err)
	require.Nil(t, e.FailureRateAlert, "removed")
	require.Nil(t, e.DegradedSince)
	desc := "d"
	e, err = s.UpdateEndpoint(ctx, tenant, "ep", store.EndpointChange{Description: &desc})
	require.NoError(t, err)
	require.Nil(t, e.FailureRateAlert, "another change leaves it as it is")

	// A deleted endpoint: nothing moves, nothing is created.
	require.NoError(t, s.DeleteEndpoint(ctx, tenant, "ep"))
	require.Equal(t, store.DegradedEffect{}, mark(true))
	_, err = s.Endpoint(ctx, tenant, "ep")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// endpoint reads the tenant's endpoint "ep".
func (u *suite) endpoint(t *testing.T, tenant string) domain.Endpoint {
	t.Helper()
	e, err := u.s.Endpoint(context.Background(), tenant, "ep")
	require.NoError(t, err)
	return e
}
