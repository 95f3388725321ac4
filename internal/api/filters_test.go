package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// An endpoint's filter is taken on create, shown compact, left by a PATCH
// without it, replaced by one with it and removed by null; a filter that
// breaks a rule is 400 naming the path in it.
func TestEndpointFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	body := validEndpoint()
	body["filter"] = json.RawMessage(`{ "country" : [ "DE" ] }`)
	ep := e.createEndpoint(key, body)
	require.JSONEq(t, `{"country":["DE"]}`, string(ep.Filter))
	require.Equal(t, `{"country":["DE"]}`, string(e.getEndpoint(key, ep.ID).Filter), "stored compact")

	rec := e.do("PATCH", "/v1/endpoints/"+ep.ID, key, map[string]any{"description": "x"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, `{"country":["DE"]}`, string(e.getEndpoint(key, ep.ID).Filter), "absent: left as it is")

	rec = e.do("PATCH", "/v1/endpoints/"+ep.ID, key, `{"filter":{"amount":[{"numeric":[">=",100]}]}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"amount":[{"numeric":[">=",100]}]}`, string(e.getEndpoint(key, ep.ID).Filter))

	rec = e.do("PATCH", "/v1/endpoints/"+ep.ID, key, `{"filter":null}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), `"filter"`)
	require.Empty(t, e.getEndpoint(key, ep.ID).Filter, "null removes it")

	for _, tc := range []struct{ body, field, message string }{
		{`{"filter":{"amount":[{"numeric":[">="]}]}}`, "filter.amount[0].numeric", "numeric needs an operator and a number"},
		{`{"filter":{"country":"DE"}}`, "filter.country", "must be an array of values"},
		{`{"filter":["DE"]}`, "filter", "must be a JSON object"},
		{`{"filter":{}}`, "filter", "names no field"},
	} {
		for _, route := range []string{"POST /v1/endpoints", "PATCH /v1/endpoints/" + ep.ID} {
			method, path, _ := cut(route)
			b := tc.body
			if method == "POST" {
				b = `{"url":"https://hooks.example.com/x",` + b[1:]
			}
			p := requireProblem(t, e.do(method, path, key, b), http.StatusBadRequest)
			require.Len(t, p.Errors, 1, "%s %s", route, tc.body)
			require.Equal(t, tc.field, p.Errors[0].Field)
			require.Contains(t, p.Errors[0].Message, tc.message)
		}
	}
	require.Empty(t, e.getEndpoint(key, ep.ID).Filter, "a refused filter changes nothing")
}

// The message log's one event says which endpoints it matched and which
// it was filtered out for, from the endpoints' filters and its payload.
func TestEventSaysWhichEndpointsFilteredItOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	mk := func(filter string, types ...string) string {
		body := validEndpoint()
		body["event_types"] = types
		if filter != "" {
			body["filter"] = json.RawMessage(filter)
		}
		return e.createEndpoint(key, body).ID
	}
	de, big, all := mk(`{"country":["DE"]}`), mk(`{"amount":[{"numeric":[">=",100]}]}`), mk("")
	mk(`{"country":["FR"]}`, "payment.*") // not subscribed: in neither list
	e.messageLog().Put(domain.Event{ID: "evt_fr", TenantID: "acme", Type: "order.created", OccurredAt: t0.Add(-time.Hour), Payload: json.RawMessage(`{"country":"FR","amount":500}`)})
	e.messageLog().Put(domain.Event{ID: "evt_to", TenantID: "acme", Type: "order.created", OccurredAt: t0.Add(-time.Hour), EndpointID: de, Payload: json.RawMessage(`{"country":"FR"}`)})

	got := decodeRouting(t, e.do("GET", "/v1/events/evt_fr", key, nil))
	require.ElementsMatch(t, []string{big, all}, got.Matched)
	require.Equal(t, []string{de}, got.FilteredOut)

	got = decodeRouting(t, e.do("GET", "/v1/events/evt_to", key, nil))
	require.Equal(t, []string{de}, got.Matched, "addressed: whatever its filter")
	require.Empty(t, got.FilteredOut)
}

type routing struct {
	Matched     []string `json:"matched"`
	FilteredOut []string `json:"filtered_out"`
}

func decodeRouting(t *testing.T, rec interface{ Result() *http.Response }) routing {
	t.Helper()
	res := rec.Result()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var r routing
	require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
	require.NotNil(t, r.Matched)
	require.NotNil(t, r.FilteredOut)
	return r
}

func cut(route string) (method, path string, ok bool) {
	for i := range route {
		if route[i] == ' ' {
			return route[:i], route[i+1:], true
		}
	}
	return route, "", false
}
