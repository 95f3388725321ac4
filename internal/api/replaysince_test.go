package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// A replay since a time starts a job of kind since over the range asked
// for (until the request's time when not given), every state unless named.
func TestReplaySinceStartsAJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	since := t0.Add(-48 * time.Hour)

	rec := e.do("POST", "/v1/replays", key, map[string]any{"since": since.Format(time.RFC3339)})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := decodeJSON[api.JobView](t, rec)
	require.Equal(t, domain.KindSince, v.Kind)
	require.Equal(t, "/v1/replays/"+v.ID, rec.Header().Get("Location"))
	require.True(t, since.Equal(v.Range.Since))
	require.True(t, t0.Equal(v.Range.Until), "until: the request's time")
	require.Empty(t, v.Range.States, "every state")
	require.Equal(t, []string{}, v.CancelledIDs)

	rec = e.do("POST", "/v1/replays", key, map[string]any{"since": since.Format(time.RFC3339), "until": t0.Add(-time.Hour).Format(time.RFC3339),
		"endpoint_id": ep.ID, "event_type": "order.created", "states": []string{"delivered", "cancelled"}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v = decodeJSON[api.JobView](t, rec)
	require.Equal(t, ep.ID, v.Range.EndpointID)
	require.Equal(t, "order.created", v.Range.EventType)
	require.Equal(t, []domain.DeliveryState{domain.StateDelivered, domain.StateCancelled}, v.Range.States)

	got := decodeJSON[api.JobView](t, e.do("GET", "/v1/replays/"+v.ID, key, nil))
	require.Equal(t, v.ID, got.ID)
}

// Bad ranges and states are 400 with the field named, and no job is made.
func TestReplaySinceRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	past, future := t0.Add(-time.Hour).Format(time.RFC3339), t0.Add(time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no since", map[string]any{}, "since"},
		{"since not a time", map[string]any{"since": "yesterday"}, "since"},
		{"since in the future", map[string]any{"since": future}, "since"},
		{"until in the future", map[string]any{"since": past, "until": future}, "until"},
		{"until before since", map[string]any{"since": past, "until": t0.Add(-2 * time.Hour).Format(time.RFC3339)}, "until"},
		{"an unknown state", map[string]any{"since": past, "states": []string{"lost"}}, "states[0]"},
		{"a repeated state", map[string]any{"since": past, "states": []string{"dead", "dead"}}, "states[1]"},
		{"no states", map[string]any{"since": past, "states": []string{}}, "states"},
		{"an empty endpoint", map[string]any{"since": past, "endpoint_id": ""}, "endpoint_id"},
		{"a past year 9999", map[string]any{"since": "10000-01-01T00:00:00Z"}, "since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", "/v1/replays", key, tc.body), http.StatusBadRequest)
			require.NotEmpty(t, p.Errors)
			require.Equal(t, tc.field, p.Errors[0].Field, p.Detail)
			require.NotEmpty(t, p.Errors[0].Message)
		})
	}
	require.Empty(t, e.store.started, "no job was made")
}

// Tenant B can neither replay nor cancel through A's endpoint: it answers
// as a missing endpoint, and no job is made.
func TestReplaySinceAndCancelTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	keyA, keyB := e.newTenant("tenant-a"), e.newTenant("tenant-b")
	epA := e.createEndpoint(keyA, nil)
	e.createEndpoint(keyB, nil)
	since := t0.Add(-time.Hour).Format(time.RFC3339)

	cross := e.do("POST", "/v1/replays", keyB, map[string]any{"since": since, "endpoint_id": epA.ID})
	missing := e.do("POST", "/v1/replays", keyB, map[string]any{"since": since, "endpoint_id": "ep_aaaaaaaaaaaaaaaa"})
	pc, pm := requireProblem(t, cross, http.StatusNotFound), requireProblem(t, missing, http.StatusNotFound)
	require.NotContains(t, pc.Detail, "tenant-a")
	require.Equal(t, len(pm.Detail), len(pc.Detail)-len(epA.ID)+len("ep_aaaaaaaaaaaaaaaa"))

	requireProblem(t, e.do("POST", "/v1/endpoints/"+epA.ID+"/cancel-pending", keyB, map[string]any{}), http.StatusNotFound)
	require.Empty(t, e.store.started, "no job was made")

	// A's own requests are taken, and B cannot read A's job.
	rec := e.do("POST", "/v1/endpoints/"+epA.ID+"/cancel-pending", keyA, map[string]any{})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := decodeJSON[api.JobView](t, rec)
	requireProblem(t, e.do("GET", "/v1/replays/"+v.ID, keyB, nil), http.StatusNotFound)
}

// A cancel is a job of kind cancel over the endpoint's pending deliveries:
// before defaults to the request's time, since to before less the age cap.
func TestCancelPendingStartsAJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)

	rec := e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := decodeJSON[api.JobView](t, rec)
	require.Equal(t, domain.KindCancel, v.Kind)
	require.Equal(t, ep.ID, v.Range.EndpointID)
	require.Equal(t, []domain.DeliveryState{domain.StatePending}, v.Range.States)
	require.True(t, t0.Equal(v.Range.Until))
	require.True(t, t0.Add(-24*time.Hour).Equal(v.Range.Since), "the age cap: older deliveries are dead")

	before := t0.Add(-time.Hour)
	rec = e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{"before": before.Format(time.RFC3339)})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.True(t, before.Equal(decodeJSON[api.JobView](t, rec).Range.Until))

	p := requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{"before": t0.Add(time.Hour).Format(time.RFC3339)}), http.StatusBadRequest)
	require.Equal(t, "before", p.Errors[0].Field)
	p = requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{"before": before.Format(time.RFC3339), "since": t0.Format(time.RFC3339)}), http.StatusBadRequest)
	require.Equal(t, "before", p.Errors[0].Field, "before earlier than since")
	requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{"after": "x"}), http.StatusBadRequest)

	// Bounded by the tenant's jobs, as every replay is.
	e.store.full = map[string]bool{"acme": true}
	rec = e.do("POST", "/v1/endpoints/"+ep.ID+"/cancel-pending", key, map[string]any{})
	requireProblem(t, rec, http.StatusTooManyRequests)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	requireProblem(t, e.do("POST", "/v1/replays", key, map[string]any{"since": before.Format(time.RFC3339)}), http.StatusTooManyRequests)
}
