package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/outbox"
)

// testCatalog is a catalog of two types, one deprecated.
func testCatalog(tb testing.TB) *eventtypes.Catalog {
	tb.Helper()
	c, err := eventtypes.New([]eventtypes.Type{
		{Name: "payment.succeeded", Description: "A payment was captured.", Validation: eventtypes.ValidationReject,
			Schema:  json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer"}}}`),
			Example: json.RawMessage(`{"amount": 4200}`)},
		{Name: "order.created", Description: "An order was placed.", Deprecated: true,
			Schema: json.RawMessage(`{"type":"object"}`), Example: json.RawMessage(`{"order_id":"ord_1"}`)},
	})
	require.NoError(tb, err)
	return c
}

// GET /v1/event-types: without a catalog, [] and catalog false; with one,
// every type sorted by name with its schema, example, deprecation and
// validation, the same for every tenant credential.
func TestEventTypesList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	rec := e.do("GET", "/v1/event-types", key, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"data":[],"catalog":false}`, rec.Body.String())

	e.srv.EventTypes = testCatalog(t)
	link := e.mintPortalLink("acme", map[string]any{"scopes": []string{}})
	for _, cred := range []string{key, e.newTenant("globex"), link.Token} {
		v := decodeJSON[api.EventTypesView](t, e.do("GET", "/v1/event-types", cred, nil))
		require.True(t, v.Catalog)
		require.Len(t, v.Data, 2)
		require.Equal(t, "order.created", v.Data[0].Name)
		require.True(t, v.Data[0].Deprecated)
		require.Equal(t, eventtypes.ValidationOff, v.Data[0].Validation)
		require.Equal(t, "payment.succeeded", v.Data[1].Name)
		require.Equal(t, eventtypes.ValidationReject, v.Data[1].Validation)
		require.JSONEq(t, `{"amount":4200}`, string(v.Data[1].Example))
		require.JSONEq(t, `{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer"}}}`, string(v.Data[1].Schema))
	}
	requireProblem(t, e.do("GET", "/v1/event-types", "", nil), http.StatusUnauthorized)
}

// The catalog in pages: limit types after the cursor, the next cursor
// while more remain; every type once, in order; a bad limit or cursor is
// a 400 naming it.
func TestEventTypesListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	types := make([]eventtypes.Type, 7)
	for i := range types {
		types[i] = eventtypes.Type{Name: fmt.Sprintf("order.step%d", i), Schema: json.RawMessage(`{}`), Example: json.RawMessage(`{}`)}
	}
	c, err := eventtypes.New(types)
	require.NoError(t, err)
	e.srv.EventTypes = c

	var names []string
	cursor, pages := "", 0
	for {
		path := "/v1/event-types?limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		v := decodeJSON[api.EventTypesView](t, e.do("GET", path, key, nil))
		require.True(t, v.Catalog)
		require.LessOrEqual(t, len(v.Data), 3)
		for _, d := range v.Data {
			names = append(names, d.Name)
		}
		pages++
		if v.NextCursor == "" {
			break
		}
		require.Len(t, v.Data, 3, "a page with a next cursor is full")
		cursor = v.NextCursor
	}
	require.Equal(t, 3, pages)
	require.Equal(t, []string{"order.step0", "order.step1", "order.step2", "order.step3", "order.step4", "order.step5", "order.step6"}, names)

	// Without a limit, 50: the whole of this catalog, no cursor.
	v := decodeJSON[api.EventTypesView](t, e.do("GET", "/v1/event-types", key, nil))
	require.Len(t, v.Data, 7)
	require.Empty(t, v.NextCursor)
	// A cursor past the last type: an empty page.
	v = decodeJSON[api.EventTypesView](t, e.do("GET", "/v1/event-types?cursor=zzz", key, nil))
	require.Empty(t, v.Data)

	for q, field := range map[string]string{"limit=0": "limit", "limit=101": "limit", "cursor=a%20b": "cursor", "cursor=" + strings.Repeat("a", eventtypes.MaxNameBytes+1): "cursor"} {
		p := requireProblem(t, e.do("GET", "/v1/event-types?"+q, key, nil), http.StatusBadRequest)
		require.Contains(t, fields(p), field, q)
	}
}

// With a catalog an endpoint's event_types must name its types (exactly,
// or a prefix matching one, or *), hookline's own operational types
// included; a deprecated type may be subscribed to; an entry that names
// none is a 400 naming it, on create and on PATCH. Without a catalog,
// anything goes, as before.
func TestSubscriptionsAreHeldToTheCatalog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	free := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/a", "event_types": []string{"anything.goes"}})
	require.Equal(t, []string{"anything.goes"}, free.EventTypes)

	e.srv.EventTypes = testCatalog(t)
	for _, ok := range [][]string{{"payment.succeeded"}, {"order.created"}, {"payment.*"}, {"*"}, {"endpoint.disabled", "delivery.*"}} {
		e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/b", "event_types": ok})
	}
	p := requireProblem(t, e.do("POST", "/v1/endpoints", key, map[string]any{"url": "https://hooks.example.com/c",
		"event_types": []string{"payment.succeeded", "payment.refunded", "invoice.*"}}), http.StatusBadRequest)
	require.Equal(t, []string{"event_types[1]", "event_types[2]"}, fields(p))
	require.Contains(t, p.Errors[0].Message, `"payment.refunded" names no type of this stack's event-type catalog`)
	p = requireProblem(t, e.do("PATCH", "/v1/endpoints/"+free.ID, key, map[string]any{"event_types": []string{"anything.goes"}}), http.StatusBadRequest)
	require.Equal(t, []string{"event_types[0]"}, fields(p))
	rec := e.do("PATCH", "/v1/endpoints/"+free.ID, key, map[string]any{"description": "kept its old types"})
	require.Equal(t, http.StatusOK, rec.Code, "a change that leaves event_types alone is not held to the catalog")
}

// POST /v1/endpoints/{id}/test with {"event_type": T} writes an ordinary
// event of the catalog type T, its example as the payload, addressed to
// that endpoint alone; no body is a hookline.test event as before; a type
// the catalog does not have, or no catalog, is a 400 naming event_type.
func TestTestEventOfACatalogType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "event_types": []string{"order.*"}})
	p := requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, map[string]any{"event_type": "payment.succeeded"}), http.StatusBadRequest)
	require.Equal(t, []string{"event_type"}, fields(p))
	require.Contains(t, p.Errors[0].Message, "no event-type catalog")

	e.srv.EventTypes = testCatalog(t)
	rec := e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, map[string]any{"event_type": "payment.succeeded"})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := decodeJSON[api.TestEventView](t, rec)
	require.Equal(t, "payment.succeeded", v.Type, "sent although the endpoint subscribes to order.* only")
	require.Equal(t, ep.ID, v.EndpointID)
	require.True(t, strings.HasPrefix(v.ID, api.ReservedIDPrefix+"test_"), v.ID)
	item, ok := e.outbox().get(v.ID)
	require.True(t, ok)
	require.Equal(t, "payment.succeeded", item[outbox.AttrType])
	require.Equal(t, ep.ID, item[outbox.AttrEndpointID])
	require.JSONEq(t, `{"amount":4200}`, item[outbox.AttrPayload])

	p = requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, map[string]any{"event_type": "payment.refunded"}), http.StatusBadRequest)
	require.Equal(t, []string{"event_type"}, fields(p))
	requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, map[string]any{"type": "x"}), http.StatusBadRequest)
	for _, body := range []any{nil, map[string]any{}, map[string]any{"event_type": nil}} {
		rec = e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, body)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		require.Equal(t, "hookline.test", decodeJSON[api.TestEventView](t, rec).Type)
	}
}

// A page of the largest catalog New accepts, every character one JSON
// escapes, stays under Lambda's 6 MB response (6,291,456 bytes) as the
// API Gateway proxy response that carries it: the body escaped twice.
func TestTheLargestEventTypesPageFitsALambdaResponse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	var types []eventtypes.Type
	total := 0
	for i := 0; ; i++ {
		name := fmt.Sprintf("t.%03d", i)
		// A schema and example of '<' strings within the type's bound.
		schema := `{"description":"` + strings.Repeat("<", 1024) + `"}`
		room := min(eventtypes.MaxTypeBytes-len(schema), eventtypes.MaxCatalogBytes-total-len(name)-eventtypes.MaxDescriptionBytes-len(schema)) - 2
		if room < 1 {
			break
		}
		example := `"` + strings.Repeat("<", room) + `"`
		types = append(types, eventtypes.Type{Name: name, Description: strings.Repeat("&", eventtypes.MaxDescriptionBytes),
			Schema: json.RawMessage(schema), Example: json.RawMessage(example)})
		total += len(name) + eventtypes.MaxDescriptionBytes + len(schema) + len(example)
	}
	c, err := eventtypes.New(types)
	require.NoError(t, err, "the catalog is within every bound")
	require.Greater(t, total, eventtypes.MaxCatalogBytes-100, "and at the catalog's")
	e.srv.EventTypes = c

	rec := e.do("GET", "/v1/event-types?limit=100", key, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	v := decodeJSON[api.EventTypesView](t, rec)
	require.Len(t, v.Data, len(types), "one page holds the whole catalog")
	proxied, err := json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: rec.Code, Body: rec.Body.String()})
	require.NoError(t, err)
	require.Greater(t, len(proxied), 5*eventtypes.MaxCatalogBytes, "the escaping is counted")
	require.Less(t, len(proxied), 6<<20, "Lambda's response limit")
}
