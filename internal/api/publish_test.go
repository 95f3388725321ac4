package api_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/trace"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

const fakeOutboxTable = "outbox"

// maxItemBytes is DynamoDB's item size limit, which the fake enforces.
const maxItemBytes = 400 << 10

// fakeOutbox is the outbox table as DynamoDB answers the API's calls:
// PutItem with attribute_not_exists(#id) fails with
// ConditionalCheckFailedException when the id exists, an item over 400 KB
// is refused, GetItem reads by id. fail makes every call fail.
type fakeOutbox struct {
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue
	puts  int
	fail  error
}

func newFakeOutbox() *fakeOutbox {
	return &fakeOutbox{items: map[string]map[string]types.AttributeValue{}}
}

func (f *fakeOutbox) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	if aws.ToString(in.TableName) != fakeOutboxTable {
		return nil, errors.New("ResourceNotFoundException: no table " + aws.ToString(in.TableName))
	}
	if aws.ToString(in.ConditionExpression) != "attribute_not_exists(#id)" || in.ExpressionAttributeNames["#id"] != outbox.AttrID {
		return nil, errors.New("the API writes every event with attribute_not_exists(id)")
	}
	size := 0
	for k, v := range in.Item {
		size += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			size += len(v.Value)
		case *types.AttributeValueMemberN:
			size += len(v.Value)
		}
	}
	if size > maxItemBytes {
		return nil, errors.New("ValidationException: Item size has exceeded the maximum allowed size")
	}
	id := in.Item[outbox.AttrID].(*types.AttributeValueMemberS).Value
	if _, ok := f.items[id]; ok {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	f.items[id] = maps.Clone(in.Item)
	f.puts++
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeOutbox) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	id := in.Key[outbox.AttrID].(*types.AttributeValueMemberS).Value
	return &dynamodb.GetItemOutput{Item: maps.Clone(f.items[id])}, nil
}

func (f *fakeOutbox) get(id string) (map[string]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	item, ok := f.items[id]
	out := map[string]string{}
	for k, v := range item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			out[k] = v.Value
		case *types.AttributeValueMemberN:
			out[k] = v.Value
		}
	}
	return out, ok
}

func (e *env) outbox() *fakeOutbox { return e.srv.Outbox.(*fakeOutbox) }

func TestPublishWritesTheEventIntoTheOutbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	rec := e.do("POST", "/v1/events", key, `{"id":"evt_1","type":"order.created","payload":{"order":1, "note": null},"endpoint_id":"`+ep.ID+`","sequence":7}`, "traceparent", tp)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"id":"acme:evt_1","type":"order.created","occurred_at":"2026-03-14T15:09:26Z","endpoint_id":"`+ep.ID+`","sequence":7,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`, rec.Body.String(),
		"the id given, in the tenant's namespace, in the producer's trace")
	require.Equal(t, "acme:evt_1", api.TenantEventID("acme", "evt_1"))
	require.Empty(t, rec.Header().Get(api.ReplayedHeader))
	item, ok := e.outbox().get("acme:evt_1")
	require.True(t, ok)
	stored, ok := trace.Parse(item[outbox.AttrTraceParent])
	require.True(t, ok)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", stored.TraceIDHex())
	require.NotEqual(t, "00f067aa0ba902b7", stored.SpanIDHex(), "the publish's span, a child of the producer's")
	delete(item, outbox.AttrTraceParent)
	require.Equal(t, map[string]string{
		outbox.AttrID: "acme:evt_1", outbox.AttrTenantID: "acme", outbox.AttrType: "order.created",
		outbox.AttrPayload: `{"order":1, "note": null}`, outbox.AttrOccurredAt: "2026-03-14T15:09:26Z",
		outbox.AttrEndpointID: ep.ID, outbox.AttrSequence: "7",
		outbox.AttrExpiresAt: strconv.FormatInt(t0.Add(outbox.DefaultRetention).Unix(), 10),
	}, item, "the payload as sent, the tenant from the key, expiring, in no index (enqueue lists it in the message log's pages)")

	t.Run("without an id, a new one each time", func(t *testing.T) {
		a := decodeJSON[api.PublishedEventView](t, e.do("POST", "/v1/events", key, `{"type":"order.created","payload":[1,2],"occurred_at":"2026-01-02T03:04:05.123+01:00"}`))
		b := decodeJSON[api.PublishedEventView](t, e.do("POST", "/v1/events", key, `{"type":"order.created","payload":[1,2]}`))
		require.NotEqual(t, a.ID, b.ID)
		require.True(t, strings.HasPrefix(a.ID, "evt_"), a.ID)
		require.Equal(t, "2026-01-02T02:04:05.123Z", a.OccurredAt.Format("2006-01-02T15:04:05.000Z07:00"))
		stored, _ := e.outbox().get(a.ID)
		require.Equal(t, "[1,2]", stored[outbox.AttrPayload])
	})
}

func TestPublishIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, keyB := e.newTenant("acme"), e.newTenant("other")
	body := `{"id":"evt_same","type":"order.created","payload":{"n":1}}`
	first := e.do("POST", "/v1/events", key, body)
	require.Equal(t, http.StatusAccepted, first.Code, first.Body.String())
	e.clock.Advance(3e9) // a retry some seconds later: occurred_at stays the first one's
	again := e.do("POST", "/v1/events", key, body)
	require.Equal(t, http.StatusAccepted, again.Code)
	require.Equal(t, first.Body.String(), again.Body.String(), "the same request answers the same")
	require.Equal(t, "true", again.Header().Get(api.ReplayedHeader))
	require.Equal(t, 1, e.outbox().puts, "one event")

	conflict := e.do("POST", "/v1/events", key, `{"id":"evt_same","type":"order.created","payload":{"n":2}}`)
	pc := requireProblem(t, conflict, http.StatusConflict)
	require.Contains(t, pc.Detail, "acme:evt_same")
	for _, b := range []string{
		`{"id":"evt_same","type":"order.updated","payload":{"n":1}}`,
		`{"id":"evt_same","type":"order.created","payload":{"n":1},"sequence":1}`,
		`{"id":"evt_same","type":"order.created","payload":{"n":1},"occurred_at":"2020-01-01T00:00:00Z"}`,
	} {
		requireProblem(t, e.do("POST", "/v1/events", key, b), http.StatusConflict)
	}

	// Another tenant's publish under the same id is answered exactly as a
	// new event is (issue 23: ids cannot be probed across tenants): ids are
	// in each tenant's namespace, so it is one, written beside A's.
	fresh := e.newTenant("other2")
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" // one trace: the answers compare equal
	cross := e.do("POST", "/v1/events", keyB, body, "traceparent", tp)
	require.Equal(t, http.StatusAccepted, cross.Code, cross.Body.String())
	never := e.do("POST", "/v1/events", fresh, body, "traceparent", tp)
	require.Equal(t, http.StatusAccepted, never.Code, never.Body.String())
	require.Equal(t, strings.ReplaceAll(never.Body.String(), "other2:", "other:"), cross.Body.String(), "as an id no tenant used")
	require.Equal(t, never.Header(), cross.Header())
	require.NotContains(t, cross.Body.String(), "acme")
	require.JSONEq(t, `{"id":"other:evt_same","type":"order.created","occurred_at":"2026-03-14T15:09:29Z","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`, cross.Body.String())
	item, _ := e.outbox().get("acme:evt_same")
	require.Equal(t, "acme", item[outbox.AttrTenantID], "A's event is unchanged")
	item, _ = e.outbox().get("other:evt_same")
	require.Equal(t, "other", item[outbox.AttrTenantID], "B's is its own")
	require.Equal(t, 3, e.outbox().puts)

	// A producer writing the outbox directly is not namespaced: an event
	// it wrote under the id a tenant's publish takes answers as any
	// conflict, showing nothing of it.
	e.outbox().items["other:evt_direct"] = map[string]types.AttributeValue{
		outbox.AttrID: &types.AttributeValueMemberS{Value: "other:evt_direct"}, outbox.AttrTenantID: &types.AttributeValueMemberS{Value: "acme"},
		outbox.AttrType: &types.AttributeValueMemberS{Value: "order.created"}, outbox.AttrPayload: &types.AttributeValueMemberS{Value: `{"n":1}`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: "2026-03-14T15:09:26Z"},
	}
	direct := e.do("POST", "/v1/events", keyB, `{"id":"evt_direct","type":"order.created","payload":{"n":1}}`)
	p := requireProblem(t, direct, http.StatusConflict)
	require.NotContains(t, direct.Body.String(), "acme")
	require.Contains(t, p.Detail, "other:evt_direct")
}

// An id in a tenant's namespace is at most outbox.MaxIDBytes long: the id
// given may take what the tenant id and the colon leave.
func TestPublishIDFitsTheNamespace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	room := outbox.MaxIDBytes - len("acme:")
	ok := e.do("POST", "/v1/events", key, `{"id":"`+strings.Repeat("i", room)+`","type":"a","payload":{}}`)
	require.Equal(t, http.StatusAccepted, ok.Code, ok.Body.String())
	p := requireProblem(t, e.do("POST", "/v1/events", key, `{"id":"`+strings.Repeat("i", room+1)+`","type":"a","payload":{}}`), http.StatusBadRequest)
	require.Equal(t, outbox.ReasonTooLarge, p.Errors[0].Reason)
	require.Contains(t, p.Errors[0].Message, "at most 251 bytes")
}

func TestPublishWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, keyB := e.newTenant("acme"), e.newTenant("other")
	body := `{"type":"order.created","payload":{"n":1}}`
	first := e.do("POST", "/v1/events", key, body, "Idempotency-Key", "order-1-created")
	require.Equal(t, http.StatusAccepted, first.Code, first.Body.String())
	id := decodeJSON[api.PublishedEventView](t, first).ID
	require.Equal(t, api.KeyedEventID("acme", "order-1-created"), id)
	e.clock.Advance(5e9)
	again := e.do("POST", "/v1/events", key, body, "Idempotency-Key", "order-1-created")
	require.Equal(t, http.StatusAccepted, again.Code)
	require.Equal(t, first.Body.String(), again.Body.String())
	require.Equal(t, 1, e.outbox().puts)

	requireProblem(t, e.do("POST", "/v1/events", key, `{"type":"order.created","payload":{"n":2}}`, "Idempotency-Key", "order-1-created"), http.StatusConflict)

	other := e.do("POST", "/v1/events", keyB, body, "Idempotency-Key", "order-1-created")
	require.Equal(t, http.StatusAccepted, other.Code, "another tenant's key of the same name is its own")
	require.NotEqual(t, id, decodeJSON[api.PublishedEventView](t, other).ID)

	// An id in the body wins over the key.
	withID := decodeJSON[api.PublishedEventView](t, e.do("POST", "/v1/events", key, `{"id":"evt_mine","type":"a","payload":1}`, "Idempotency-Key", "k2"))
	require.Equal(t, "acme:evt_mine", withID.ID)
}

func TestPublishValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key, keyB := e.newTenant("acme"), e.newTenant("other")
	epB := e.createEndpoint(keyB, nil)
	big := `"` + strings.Repeat("a", outbox.MaxPayloadBytes) + `"`
	cases := []struct {
		name, body string
		hdr        []string
		status     int
		field      string
		reason     string
	}{
		{"no type", `{"payload":{}}`, nil, 400, "type", outbox.ReasonMissingField},
		{"null type", `{"type":null,"payload":{}}`, nil, 400, "type", outbox.ReasonMissingField},
		{"no payload", `{"type":"a.b"}`, nil, 400, "payload", outbox.ReasonMissingField},
		{"reserved type", `{"type":"endpoint.disabled","payload":{}}`, nil, 400, "type", outbox.ReasonReservedType},
		{"test type", `{"type":"hookline.test","payload":{}}`, nil, 400, "type", outbox.ReasonReservedType},
		{"type with a control character", `{"type":"a\u0000b","payload":{}}`, nil, 400, "type", outbox.ReasonInvalidChars},
		{"type too long", `{"type":"` + strings.Repeat("t", 300) + `","payload":{}}`, nil, 400, "type", outbox.ReasonTooLarge},
		{"empty id", `{"id":"","type":"a","payload":{}}`, nil, 400, "id", outbox.ReasonMissingField},
		{"id with a newline", `{"id":"a\nb","type":"a","payload":{}}`, nil, 400, "id", outbox.ReasonInvalidChars},
		{"bad time", `{"type":"a","payload":{},"occurred_at":"yesterday"}`, nil, 400, "occurred_at", outbox.ReasonInvalidTime},
		{"payload with U+FFFF", `{"type":"a","payload":"\uffff"}`, nil, 201, "", ""}, // escaped: JSON text SQS takes
		{"payload with a raw U+FFFE", "{\"type\":\"a\",\"payload\":\"\uFFFE\"}", nil, 400, "payload", outbox.ReasonInvalidChars},
		{"payload nested too deep", `{"type":"a","payload":` + strings.Repeat("[", outbox.MaxPayloadDepth+1) + strings.Repeat("]", outbox.MaxPayloadDepth+1) + `}`, nil, 400, "payload", outbox.ReasonTooDeep},
		{"payload too large", `{"type":"a","payload":` + big + `}`, nil, 413, "payload", outbox.ReasonTooLarge},
		{"reserved id prefix", `{"id":"hl_x","type":"a","payload":{}}`, nil, 400, "id", ""},
		{"bad Idempotency-Key", `{"type":"a","payload":{}}`, []string{"Idempotency-Key", "a\x01b"}, 400, "Idempotency-Key", ""},
		{"Idempotency-Key too long beside an id", `{"id":"evt_k","type":"a","payload":{}}`, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, "Idempotency-Key", ""},
		{"unknown field", `{"type":"a","payload":{},"data":{}}`, nil, 400, "data", ""},
		{"sequence not an integer", `{"type":"a","payload":{},"sequence":1.5}`, nil, 400, "sequence", ""},
		{"empty endpoint id", `{"type":"a","payload":{},"endpoint_id":""}`, nil, 400, "endpoint_id", ""},
		{"no such endpoint", `{"type":"a","payload":{},"endpoint_id":"ep_nope"}`, nil, 422, "endpoint_id", ""},
		{"another tenant's endpoint", `{"type":"a","payload":{},"endpoint_id":"` + epB.ID + `"}`, nil, 422, "endpoint_id", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := e.outbox().puts
			rec := e.do("POST", "/v1/events", key, tc.body, tc.hdr...)
			if tc.status == 201 {
				require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
				return
			}
			p := requireProblem(t, rec, tc.status)
			require.Len(t, p.Errors, 1, rec.Body.String())
			require.Equal(t, tc.field, p.Errors[0].Field)
			require.Equal(t, tc.reason, p.Errors[0].Reason)
			require.Contains(t, p.Detail, tc.field)
			require.Equal(t, before, e.outbox().puts, "nothing written")
		})
	}
	t.Run("the cross-tenant endpoint answers as a missing one", func(t *testing.T) {
		missing := e.do("POST", "/v1/events", key, `{"type":"a","payload":{},"endpoint_id":"ep_nope"}`)
		cross := e.do("POST", "/v1/events", key, `{"type":"a","payload":{},"endpoint_id":"`+epB.ID+`"}`)
		require.Equal(t, missing.Body.String(), strings.ReplaceAll(cross.Body.String(), epB.ID, "ep_nope"))
	})
	t.Run("a body over the cap is 413", func(t *testing.T) {
		huge := `{"type":"a","payload":"` + strings.Repeat("a", api.MaxPublishBodyBytes) + `"}`
		p := requireProblem(t, e.do("POST", "/v1/events", key, huge), http.StatusRequestEntityTooLarge)
		require.Contains(t, p.Detail, "over")
	})
	t.Run("the outbox unreachable is 500 without detail", func(t *testing.T) {
		e.outbox().fail = errTableDown
		defer func() { e.outbox().fail = nil }()
		p := requireProblem(t, e.do("POST", "/v1/events", key, `{"type":"a","payload":{}}`), http.StatusInternalServerError)
		require.Equal(t, "internal error; try again", p.Detail)
	})
}

func TestTestEventGoesToTheEndpointOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, map[string]any{"url": "https://hooks.example.com/x", "event_types": []string{"order.*"}})
	rec := e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	v := decodeJSON[api.TestEventView](t, rec)
	require.Equal(t, domain.TestEventType, v.Type)
	require.Equal(t, ep.ID, v.EndpointID)
	require.Equal(t, domain.DeliveryID("acme", v.ID, ep.ID, v.OccurredAt), v.DeliveryID)
	require.True(t, strings.HasPrefix(v.ID, api.ReservedIDPrefix+"test_"), v.ID)
	require.True(t, v.OccurredAt.Equal(t0))
	item, ok := e.outbox().get(v.ID)
	require.True(t, ok)
	require.Equal(t, opevent.Origin, item[opevent.AttrOrigin], "hookline's marker: enqueue accepts the reserved type")
	require.Equal(t, ep.ID, item[outbox.AttrEndpointID], "to that endpoint only")
	require.Equal(t, domain.TestEventType, item[outbox.AttrType])
	require.NotContains(t, item, outbox.AttrLogKey, "in no index: enqueue lists it in the message log's pages")
	require.Contains(t, item[outbox.AttrPayload], domain.TestEventMessage)

	second := decodeJSON[api.TestEventView](t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, nil))
	require.NotEqual(t, v.ID, second.ID, "each test is an event of its own")

	require.Equal(t, http.StatusOK, e.do("POST", "/v1/endpoints/"+ep.ID+"/disable", key, nil).Code)
	p := requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, nil), http.StatusConflict)
	require.Contains(t, p.Detail, "disabled")
	requireProblem(t, e.do("POST", "/v1/endpoints/ep_nope/test", key, nil), http.StatusNotFound)
	require.Equal(t, 2, e.outbox().puts)
}

func TestEventRoutesWithoutAnOutboxAnswer503(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	e.srv.Outbox = nil
	e.h = e.srv.Handler()
	requireProblem(t, e.do("POST", "/v1/events", key, `{"type":"a","payload":{}}`), http.StatusServiceUnavailable)
	requireProblem(t, e.do("POST", "/v1/endpoints/"+ep.ID+"/test", key, nil), http.StatusServiceUnavailable)
}

// A publish without a traceparent, or with a hostile one, starts a trace:
// never a 4xx or 5xx for it; the answer names the trace, which the outbox
// item carries.
func TestPublishTraceParent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	e.createEndpoint(key, nil)
	for i, h := range []string{"", "garbage", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "<script>alert(1)</script>", strings.Repeat("a", 8000)} {
		var hdr []string
		if h != "" {
			hdr = []string{"traceparent", h}
		}
		rec := e.do("POST", "/v1/events", key, `{"id":"evt_t`+strconv.Itoa(i)+`","type":"order.created","payload":{}}`, hdr...)
		require.Equal(t, http.StatusAccepted, rec.Code, "%q: %s", h, rec.Body.String())
		v := decodeJSON[api.PublishedEventView](t, rec)
		require.Len(t, v.TraceID, 32, "%q: a fresh trace", h)
		require.NotEqual(t, "4bf92f3577b34da6a3ce929d0e0e4736", v.TraceID)
		item, _ := e.outbox().get(v.ID)
		c, ok := trace.Parse(item[outbox.AttrTraceParent])
		require.True(t, ok)
		require.Equal(t, v.TraceID, c.TraceIDHex())
	}
}
