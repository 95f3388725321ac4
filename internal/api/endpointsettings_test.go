package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/retry"
	"github.com/stretchr/testify/require"
)

// An endpoint's own retry schedule and timeout: created, shown, changed
// and returned to the stack's.
func TestEndpointSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")

	v := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "retry_schedule": []int{10, 60, 600}, "timeout_seconds": 5})
	require.Equal(t, []int{10, 60, 600}, v.RetrySchedule)
	require.Equal(t, 5, v.TimeoutSeconds)
	stored, _ := e.store.endpoint("acme", v.ID)
	require.Equal(t, []int{10, 60, 600}, stored.RetrySchedule)
	require.Equal(t, 5, stored.TimeoutSeconds)
	got := e.getEndpoint(key, v.ID)
	require.Equal(t, []int{10, 60, 600}, got.RetrySchedule)
	require.Equal(t, 5, got.TimeoutSeconds)

	// Absent and null leave them; a new value replaces them.
	patch := func(body string) api.EndpointView {
		t.Helper()
		rec := e.do("PATCH", "/v1/endpoints/"+v.ID, key, body)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decodeJSON[api.EndpointView](t, rec)
	}
	got = patch(`{"description":"d","retry_schedule":null,"timeout_seconds":null}`)
	require.Equal(t, []int{10, 60, 600}, got.RetrySchedule)
	require.Equal(t, 5, got.TimeoutSeconds)
	got = patch(`{"retry_schedule":[1,1],"timeout_seconds":15}`)
	require.Equal(t, []int{1, 1}, got.RetrySchedule)
	require.Equal(t, 15, got.TimeoutSeconds)

	// An empty list and 0 return to the stack's: absent from the view and
	// from the record.
	got = patch(`{"retry_schedule":[],"timeout_seconds":0}`)
	require.Nil(t, got.RetrySchedule)
	require.Zero(t, got.TimeoutSeconds)
	raw := rawJSON(t, e.do("GET", "/v1/endpoints/"+v.ID, key, nil))
	require.NotContains(t, raw, "retry_schedule")
	require.NotContains(t, raw, "timeout_seconds")
	stored, _ = e.store.endpoint("acme", v.ID)
	require.Empty(t, stored.RetrySchedule)
	require.Zero(t, stored.TimeoutSeconds)

	// An endpoint created without them has the stack's.
	plain := e.createEndpoint(key, nil)
	require.Nil(t, plain.RetrySchedule)
	require.Zero(t, plain.TimeoutSeconds)
}

// The limits, each named with its field in a 400.
func TestEndpointSettingsLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // the default stack: 8 attempts, a 24 h age cap, 15 s at most
	key := e.newTenant("acme")
	url := `"url":"https://hooks.example.com/x"`
	tests := []struct {
		name, body, field, detail string
	}{
		{"delay over SQS's 12 h", `{` + url + `,"retry_schedule":[5,60,600,50000]}`, "retry_schedule[3]", "50000 s exceeds SQS's 43200 s visibility limit"},
		{"negative delay", `{` + url + `,"retry_schedule":[-1]}`, "retry_schedule[0]", "is negative"},
		{"more retries than the queue's receives", `{` + url + `,"retry_schedule":[1,1,1,1,1,1,1,1]}`, "retry_schedule", "has 8 retries, at most 7: the delivery queue moves a message to the DLQ after 8 receives"},
		{"past the age cap", `{` + url + `,"retry_schedule":[43200,43200,60]}`, "retry_schedule", "adds up to 86460 s, more than the stack's 86400 s age cap"},
		{"empty on create", `{` + url + `,"retry_schedule":[]}`, "retry_schedule", "must list at least one retry delay (an empty list on update returns to the stack's schedule)"},
		{"fraction", `{` + url + `,"retry_schedule":[1.5]}`, "retry_schedule", "must be a number"},
		{"null delay", `{` + url + `,"retry_schedule":[1,null]}`, "retry_schedule[1]", "null"},
		{"not a list", `{` + url + `,"retry_schedule":10}`, "retry_schedule", ""},
		{"timeout over the max", `{` + url + `,"timeout_seconds":16}`, "timeout_seconds", "16 s exceeds the stack's 15 s max request timeout"},
		{"timeout 0 on create", `{` + url + `,"timeout_seconds":0}`, "timeout_seconds", "from 1 to 15 (0 on update returns to the stack's timeout)"},
		{"timeout negative", `{` + url + `,"timeout_seconds":-1}`, "timeout_seconds", "from 1 to 15"},
		{"timeout fraction", `{` + url + `,"timeout_seconds":1.5}`, "timeout_seconds", "must be a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", "/v1/endpoints", key, tc.body), http.StatusBadRequest)
			require.Equal(t, []string{tc.field}, fields(p), p.Detail)
			require.Contains(t, p.Errors[0].Message+" "+p.Detail, tc.detail)
		})
	}

	t.Run("on PATCH too, and nothing changes", func(t *testing.T) {
		v := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "retry_schedule": []int{10}})
		for _, body := range []string{`{"description":"x","retry_schedule":[50000]}`, `{"description":"x","timeout_seconds":99}`, `{"timeout_seconds":-1}`} {
			requireProblem(t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, body), http.StatusBadRequest)
		}
		got := e.getEndpoint(key, v.ID)
		require.Equal(t, []int{10}, got.RetrySchedule)
		require.Empty(t, got.Description)
	})
}

// The limits are the stack's: its attempts, age cap and max request
// timeout, as the api function reads them.
func TestEndpointSettingsFollowTheStack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Retry = retry.Policy{Schedule: []time.Duration{0, time.Second, 4 * time.Second, 10 * time.Second}, MaxAge: time.Hour}
	e.srv.MaxRequestTimeout = 40 * time.Second
	key := e.newTenant("acme")
	v := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "retry_schedule": []int{1, 1, 1}, "timeout_seconds": 40})
	require.Equal(t, 40, v.TimeoutSeconds)

	p := requireProblem(t, e.do("POST", "/v1/endpoints", key, map[string]any{"url": "https://hooks.example.com/x", "retry_schedule": []int{1, 1, 1, 1}}), http.StatusBadRequest)
	require.Contains(t, p.Errors[0].Message, "has 4 retries, at most 3: the delivery queue moves a message to the DLQ after 4 receives")
	p = requireProblem(t, e.do("POST", "/v1/endpoints", key, map[string]any{"url": "https://hooks.example.com/x", "retry_schedule": []int{3600, 1}}), http.StatusBadRequest)
	require.Contains(t, p.Errors[0].Message, "more than the stack's 3600 s age cap")
	p = requireProblem(t, e.do("POST", "/v1/endpoints", key, map[string]any{"url": "https://hooks.example.com/x", "timeout_seconds": 41}), http.StatusBadRequest)
	require.Contains(t, p.Errors[0].Message, "41 s exceeds the stack's 40 s max request timeout")
}
