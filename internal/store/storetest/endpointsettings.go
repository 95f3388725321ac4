package storetest

import (
	"context"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// endpointSettingsFields: an endpoint's own retry schedule and request
// timeout are stored on create, replaced by an update (which leaves the
// other untouched), and removed by an update to an empty list and 0.
func endpointSettingsFields(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_eps")
	e, err := s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_1", URL: "https://example.com/x", RetrySchedule: []int{10, 60, 600}, TimeoutSeconds: 5})
	require.NoError(t, err)
	require.Equal(t, []int{10, 60, 600}, e.RetrySchedule)
	require.Equal(t, 5, e.TimeoutSeconds)

	short := []int{1, 1}
	e, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{RetrySchedule: &short})
	require.NoError(t, err)
	require.Equal(t, []int{1, 1}, e.RetrySchedule)
	require.Equal(t, 5, e.TimeoutSeconds, "a change of the schedule leaves the timeout")
	got, err := s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Equal(t, []int{1, 1}, got.RetrySchedule)

	eight := 8
	_, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{TimeoutSeconds: &eight})
	require.NoError(t, err)
	got, err = s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Equal(t, 8, got.TimeoutSeconds)
	require.Equal(t, []int{1, 1}, got.RetrySchedule, "a change of the timeout leaves the schedule")

	none, zero := []int{}, 0
	_, err = s.UpdateEndpoint(ctx, tenant, "ep_1", store.EndpointChange{RetrySchedule: &none, TimeoutSeconds: &zero})
	require.NoError(t, err)
	got, err = s.Endpoint(ctx, tenant, "ep_1")
	require.NoError(t, err)
	require.Empty(t, got.RetrySchedule, "back to the stack's schedule")
	require.Zero(t, got.TimeoutSeconds, "back to the stack's timeout")
}
