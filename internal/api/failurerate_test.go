package api_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// An endpoint's failure-rate alert: created with its defaults applied,
// shown, replaced whole, left by another change, removed by null; a
// change of it ends a degraded episode, which the health view shows.
func TestFailureRateAlertSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")

	v := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "failure_rate_alert": map[string]any{"threshold_percent": 25}})
	want := &api.FailureRateAlertView{ThresholdPercent: 25, WindowHours: domain.DefaultAlertWindowHours, MinAttempts: domain.DefaultAlertMinAttempts}
	require.Equal(t, want, v.FailureRateAlert, "the defaults applied")
	stored, _ := e.store.endpoint("acme", v.ID)
	require.Equal(t, &domain.FailureRateAlert{ThresholdPercent: 25, WindowHours: 1, MinAttempts: 20}, stored.FailureRateAlert)
	require.Equal(t, want, e.getEndpoint(key, v.ID).FailureRateAlert)

	patch := func(body string) api.EndpointView {
		t.Helper()
		rec := e.do("PATCH", "/v1/endpoints/"+v.ID, key, body)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decodeJSON[api.EndpointView](t, rec)
	}
	got := patch(`{"failure_rate_alert":{"threshold_percent":10,"window_hours":24,"min_attempts":10000}}`)
	require.Equal(t, &api.FailureRateAlertView{ThresholdPercent: 10, WindowHours: 24, MinAttempts: 10000}, got.FailureRateAlert)
	got = patch(`{"failure_rate_alert":{"threshold_percent":30}}`)
	require.Equal(t, &api.FailureRateAlertView{ThresholdPercent: 30, WindowHours: 1, MinAttempts: 20}, got.FailureRateAlert, "replaced whole: the absent fields at their defaults")

	// A degraded episode shows in the health; another change leaves the
	// alert and the episode; a change of the alert ends it.
	_, err := e.store.MarkEndpointDegraded(context.Background(), "acme", v.ID, true)
	require.NoError(t, err)
	require.NotNil(t, e.getEndpointWithHealth(key, v.ID).Health.DegradedSince)
	got = patch(`{"description":"d"}`)
	require.Equal(t, 30, got.FailureRateAlert.ThresholdPercent)
	require.NotNil(t, e.getEndpointWithHealth(key, v.ID).Health.DegradedSince)
	patch(`{"failure_rate_alert":{"threshold_percent":40}}`)
	require.Nil(t, e.getEndpointWithHealth(key, v.ID).Health.DegradedSince, "a new alert, a new episode")

	got = patch(`{"failure_rate_alert":null}`)
	require.Nil(t, got.FailureRateAlert)
	require.NotContains(t, rawJSON(t, e.do("GET", "/v1/endpoints/"+v.ID, key, nil)), "failure_rate_alert")
	stored, _ = e.store.endpoint("acme", v.ID)
	require.Nil(t, stored.FailureRateAlert)

	require.Nil(t, e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/y", "failure_rate_alert": nil}).FailureRateAlert, "null on create: none")
	require.Nil(t, e.createEndpoint(key, nil).FailureRateAlert)
}

// Each limit, named with its field in a 400, on create and on PATCH,
// which then changes nothing.
func TestFailureRateAlertLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	tests := []struct {
		name, alert, field, detail string
	}{
		{"no threshold", `{"window_hours":2}`, "failure_rate_alert.threshold_percent", "is required"},
		{"threshold 0", `{"threshold_percent":0}`, "failure_rate_alert.threshold_percent", "is 0, must be a whole number of percent from 1 to 100"},
		{"threshold over 100", `{"threshold_percent":101}`, "failure_rate_alert.threshold_percent", "from 1 to 100"},
		{"threshold a fraction", `{"threshold_percent":20.5}`, "failure_rate_alert.threshold_percent", "must be a whole number"},
		{"window 0", `{"threshold_percent":20,"window_hours":0}`, "failure_rate_alert.window_hours", "from 1 to 24 (the counters are hourly"},
		{"window over a day", `{"threshold_percent":20,"window_hours":25}`, "failure_rate_alert.window_hours", "is 25"},
		{"min_attempts 0", `{"threshold_percent":20,"min_attempts":0}`, "failure_rate_alert.min_attempts", "from 1 to 10000"},
		{"min_attempts over", `{"threshold_percent":20,"min_attempts":10001}`, "failure_rate_alert.min_attempts", "is 10001"},
		{"unknown field", `{"threshold_percent":20,"window_minutes":5}`, "failure_rate_alert.window_minutes", "is not a known field"},
		{"not an object", `20`, "failure_rate_alert", "must be an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := requireProblem(t, e.do("POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/x","failure_rate_alert":`+tc.alert+`}`), http.StatusBadRequest)
			require.Equal(t, []string{tc.field}, fields(p), p.Detail)
			require.Contains(t, p.Errors[0].Message, tc.detail)
		})
	}

	t.Run("on PATCH too, and nothing changes", func(t *testing.T) {
		v := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "failure_rate_alert": map[string]any{"threshold_percent": 20}})
		for _, tc := range tests {
			requireProblem(t, e.do("PATCH", "/v1/endpoints/"+v.ID, key, `{"description":"x","failure_rate_alert":`+tc.alert+`}`), http.StatusBadRequest)
		}
		got := e.getEndpoint(key, v.ID)
		require.Equal(t, 20, got.FailureRateAlert.ThresholdPercent)
		require.Empty(t, got.Description)
	})
}

// The view's schema in docs/openapi.yaml names exactly its fields, all
// required (as TestOpenAPISchemasMatchTypes holds the other views).
func TestOpenAPIFailureRateAlertViewMatchesItsType(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	s, err := resolve(doc, asMap(asMap(doc["components"])["schemas"])["FailureRateAlertView"])
	require.NoError(t, err)
	require.NotNil(t, s)
	var props, required []string
	for name := range asMap(s["properties"]) {
		props = append(props, name)
	}
	for _, r := range asList(s["required"]) {
		required = append(required, r.(string))
	}
	sort.Strings(props)
	sort.Strings(required)
	names, always := jsonNames(reflect.TypeFor[api.FailureRateAlertView]())
	require.Equal(t, names, props)
	require.Equal(t, always, required)
	require.True(t, slices.Contains(names, "threshold_percent"))
}
