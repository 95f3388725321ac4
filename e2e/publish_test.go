//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// post sends a POST through API Gateway on the local cloud with the body as
// it is and the headers given (name, value pairs), and returns the status,
// the headers and the body.
func post(t *testing.T, path, key, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	url := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID + path
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode >= 400 {
		require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "%s", raw)
	}
	return resp.StatusCode, resp.Header, raw
}

// webhookBody is the body hookline POSTs to an endpoint.
type webhookBody struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func decodeWebhook(t *testing.T, r received) webhookBody {
	t.Helper()
	var b webhookBody
	require.NoError(t, json.Unmarshal(r.Body, &b))
	return b
}

// An event published over HTTP is delivered, signed, once, however often
// the same request is sent, under its id in the tenant's namespace; the
// same id with another body is 409; another tenant's same id is its own
// event.
func TestPublishDeliversSignedOnce(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "publisher")
	rcv := newReceiver(t, status(200))
	ep, secret := apiEndpoint(t, key, rcv.URL+"/hook", "order.*")

	id := fmt.Sprintf("evt_pub_%d", time.Now().UnixNano())
	body := `{"id":"` + id + `","type":"order.created","payload":{"order":"o_1","lines":[1,2],"note":null},"sequence":3}`
	code, h1, first := post(t, "/v1/events", key, body)
	require.Equal(t, http.StatusAccepted, code, "%s", first)
	require.Empty(t, h1.Get("Idempotent-Replayed"))
	var view map[string]any
	require.NoError(t, json.Unmarshal(first, &view))
	require.Equal(t, tenant+":"+id, view["id"], "the id given, in the tenant's namespace")
	require.EqualValues(t, 3, view["sequence"])

	code, h2, again := post(t, "/v1/events", key, body)
	require.Equal(t, http.StatusAccepted, code, "%s", again)
	require.Equal(t, string(first), string(again), "the same request answers the same")
	require.Equal(t, "true", h2.Get("Idempotent-Replayed"))

	got := rcv.waitFor(t, 1, 30*time.Second)
	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)
	require.NoError(t, v.VerifyRequest(got[0].Header, got[0].Body), "signed with the endpoint's secret")
	require.Equal(t, deliveryID(t, tenant+":"+id, ep), got[0].Header.Get("webhook-id"))
	wb := decodeWebhook(t, got[0])
	require.Equal(t, tenant+":"+id, wb.ID)
	require.JSONEq(t, `{"order":"o_1","lines":[1,2],"note":null}`, string(wb.Data), "the payload unchanged")

	code, _, conflict := post(t, "/v1/events", key, strings.Replace(body, "o_1", "o_2", 1))
	require.Equal(t, http.StatusConflict, code, "%s", conflict)
	time.Sleep(3 * time.Second) // nothing more may arrive
	require.Len(t, rcv.requests(), 1, "one event, one delivery")

	// Another tenant publishing under the id: a new event of its own,
	// answered as one, showing nothing of the first (issue 23).
	tenantB, keyB := apiTenant(t, "other")
	code, hb, cross := post(t, "/v1/events", keyB, body)
	require.Equal(t, http.StatusAccepted, code, "%s", cross)
	require.Empty(t, hb.Get("Idempotent-Replayed"))
	var crossView map[string]any
	require.NoError(t, json.Unmarshal(cross, &crossView))
	require.Equal(t, tenantB+":"+id, crossView["id"])
	require.NotContains(t, string(cross), tenant)
}

// Without an id, the Idempotency-Key header makes a publish idempotent.
func TestPublishWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "keyed")
	rcv := newReceiver(t, status(200))
	apiEndpoint(t, key, rcv.URL+"/hook")
	idem := fmt.Sprintf("order-%d-created", time.Now().UnixNano())
	body := `{"type":"order.created","payload":{"n":1}}`
	code, _, first := post(t, "/v1/events", key, body, "Idempotency-Key", idem)
	require.Equal(t, http.StatusAccepted, code, "%s", first)
	code, h, again := post(t, "/v1/events", key, body, "Idempotency-Key", idem)
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, string(first), string(again))
	require.Equal(t, "true", h.Get("Idempotent-Replayed"))
	var view map[string]any
	require.NoError(t, json.Unmarshal(first, &view))

	got := rcv.waitFor(t, 1, 30*time.Second)
	require.Equal(t, view["id"], decodeWebhook(t, got[0]).ID)
	time.Sleep(3 * time.Second)
	require.Len(t, rcv.requests(), 1)
}

// Bad input answers a 4xx that names the field and the outbox's reason.
func TestPublishBadInputNamesTheFault(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "badpub")
	for _, tc := range []struct {
		name, body    string
		status        int
		field, reason string
	}{
		{"reserved type", `{"type":"endpoint.disabled","payload":{}}`, 400, "type", outbox.ReasonReservedType},
		{"test type", `{"type":"hookline.test","payload":{}}`, 400, "type", outbox.ReasonReservedType},
		{"no payload", `{"type":"order.created"}`, 400, "payload", outbox.ReasonMissingField},
		{"bad time", `{"type":"order.created","payload":1,"occurred_at":"soon"}`, 400, "occurred_at", outbox.ReasonInvalidTime},
		{"payload too large", `{"type":"order.created","payload":"` + strings.Repeat("a", outbox.MaxPayloadBytes) + `"}`, 413, "payload", outbox.ReasonTooLarge},
		{"no such endpoint", `{"type":"order.created","payload":1,"endpoint_id":"ep_nope"}`, 422, "endpoint_id", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, raw := post(t, "/v1/events", key, tc.body)
			require.Equal(t, tc.status, code, "%s", raw)
			var p struct {
				Detail string `json:"detail"`
				Errors []struct {
					Field  string `json:"field"`
					Reason string `json:"reason"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal(raw, &p))
			require.Len(t, p.Errors, 1, "%s", raw)
			require.Equal(t, tc.field, p.Errors[0].Field)
			require.Equal(t, tc.reason, p.Errors[0].Reason)
		})
	}
	code, _, raw := post(t, "/v1/events", key, `{"type":"order.created","payload":`)
	require.Equal(t, http.StatusBadRequest, code, "%s", raw)
}

// A test event reaches the endpoint it names, signed, and no other of the
// tenant's, even one that takes every type; its delivery id resolves.
// Another tenant's endpoint answers 404, a disabled one 409.
func TestTestEventReachesThatEndpointOnly(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "tester")
	target, bystander := newReceiver(t, status(200)), newReceiver(t, status(200))
	ep, secret := apiEndpoint(t, key, target.URL+"/hook", "order.*")
	apiEndpoint(t, key, bystander.URL+"/all") // no filter: every business event

	code, _, raw := post(t, "/v1/endpoints/"+ep+"/test", key, "")
	require.Equal(t, http.StatusAccepted, code, "%s", raw)
	var view struct {
		ID, Type, EndpointID, DeliveryID string
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	view.ID, view.Type, view.EndpointID, view.DeliveryID = m["id"].(string), m["type"].(string), m["endpoint_id"].(string), m["delivery_id"].(string)
	require.Equal(t, domain.TestEventType, view.Type)
	require.Equal(t, ep, view.EndpointID)
	require.Equal(t, deliveryID(t, view.ID, ep), view.DeliveryID)

	got := target.waitFor(t, 1, 30*time.Second)
	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)
	require.NoError(t, v.VerifyRequest(got[0].Header, got[0].Body))
	require.Equal(t, domain.TestEventType, got[0].Header.Get("X-Event-Type"))
	require.Equal(t, view.DeliveryID, got[0].Header.Get("webhook-id"))
	var data domain.TestEvent
	require.NoError(t, json.Unmarshal(decodeWebhook(t, got[0]).Data, &data))
	require.Equal(t, ep, data.EndpointID)

	var d map[string]any
	require.Eventually(t, func() bool {
		var s int
		s, d = call(t, "GET", "/v1/deliveries/"+view.DeliveryID, key, nil)
		return s == http.StatusOK && d["state"] == "delivered"
	}, 15*time.Second, 200*time.Millisecond, "the delivery id resolves")
	require.Equal(t, domain.TestEventType, d["event_type"])
	time.Sleep(3 * time.Second)
	require.Empty(t, bystander.requests(), "the tenant's other endpoint gets no test event")
	require.Len(t, target.requests(), 1)

	_, keyB := apiTenant(t, "intruder")
	code, _, cross := post(t, "/v1/endpoints/"+ep+"/test", keyB, "")
	require.Equal(t, http.StatusNotFound, code, "%s", cross)
	code, _, missing := post(t, "/v1/endpoints/ep_aaaaaaaaaaaaaaaa/test", keyB, "")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, strings.ReplaceAll(string(missing), "ep_aaaaaaaaaaaaaaaa", ep), string(cross), "another tenant's endpoint answers as a missing one")

	status, _ := call(t, "POST", "/v1/endpoints/"+ep+"/disable", key, nil)
	require.Equal(t, http.StatusOK, status)
	code, _, raw = post(t, "/v1/endpoints/"+ep+"/test", key, "")
	require.Equal(t, http.StatusConflict, code, "%s", raw)
}
