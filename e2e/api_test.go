//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/hookline/hookline/internal/signing"
	"github.com/stretchr/testify/require"
)

var operatorKey = sync.OnceValues(func() (string, error) {
	out, err := secretsmanager.NewFromConfig(env.cfg).GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: &env.out.OperatorKeySecretARN})
	if err != nil {
		return "", err
	}
	return *out.SecretString, nil
})

// call sends one API request through API Gateway on the local cloud and
// decodes the JSON answer (if any) into a map.
func call(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	var payload []byte
	if rd != nil {
		var err error
		payload, err = io.ReadAll(rd)
		require.NoError(t, err)
	}
	// A well-behaved client: a 429 of the tenant's limit of expensive
	// requests (not of its open jobs) is retried after Retry-After, a
	// few times; TestTenantLimitOnTheCloud sends its flood with sendOnce.
	var status int
	var raw []byte
	var hdr http.Header
	for try := 0; ; try++ {
		status, hdr, raw = sendOnce(t, method, path, key, payload, rd != nil)
		if status != http.StatusTooManyRequests || try == 5 || !bytes.Contains(raw, []byte("expensive requests a second")) {
			break
		}
		wait, _ := strconv.Atoi(hdr.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
	resp := struct {
		StatusCode int
		Header     http.Header
	}{status, hdr}
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "answer to %s %s is not JSON: %s", method, path, raw)
	}
	if resp.StatusCode >= 400 {
		require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), "errors are problem documents")
	}
	return resp.StatusCode, out
}

// sendOnce sends one API request (a body when hasBody) and answers its
// status, headers and body: no retry.
func sendOnce(t *testing.T, method, path, key string, body []byte, hasBody bool) (int, http.Header, []byte) {
	t.Helper()
	url := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID + path
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, raw
}

// apiTenant creates a tenant and a key for it through the operator routes.
func apiTenant(t *testing.T, name string) (id, key string) {
	t.Helper()
	op, err := operatorKey()
	require.NoError(t, err)
	id = fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	status, body := call(t, "POST", "/v1/admin/tenants", op, map[string]any{"tenant_id": id, "name": name})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = call(t, "POST", "/v1/admin/tenants/"+id+"/keys", op, nil)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	return id, body["key"].(string)
}

func apiEndpoint(t *testing.T, key, url string, types ...string) (id, secret string) {
	t.Helper()
	in := map[string]any{"url": url, "description": "e2e"}
	if len(types) > 0 {
		in["event_types"] = types
	}
	status, body := call(t, "POST", "/v1/endpoints", key, in)
	require.Equal(t, http.StatusCreated, status, "%v", body)
	return body["id"].(string), body["secret"].(string)
}

// createEndpoints creates n endpoints of a tenant, body(i) the i-th's
// request, four at a time, and requires each created.
func createEndpoints(t *testing.T, key string, n int, body func(i int) map[string]any) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			codes[i], _ = call(t, "POST", "/v1/endpoints", key, body(i))
		}()
	}
	wg.Wait()
	for i, c := range codes {
		require.Equal(t, http.StatusCreated, c, "endpoint %d of %d", i, n)
	}
}

// Two tenants, endpoints with filters: events fan out to exactly the matching
// endpoints of their own tenant.
func TestAPIFanOutToMatchingEndpoints(t *testing.T) {
	t.Parallel()
	tenantA, keyA := apiTenant(t, "acme")
	tenantB, keyB := apiTenant(t, "globex")
	orders, payments, all, other := newReceiver(t, status(200)), newReceiver(t, status(200)), newReceiver(t, status(200)), newReceiver(t, status(200))
	epOrders, _ := apiEndpoint(t, keyA, orders.URL+"/orders", "order.*")
	epPayments, _ := apiEndpoint(t, keyA, payments.URL+"/payments", "payment.succeeded")
	epAll, secretAll := apiEndpoint(t, keyA, all.URL+"/all")
	apiEndpoint(t, keyB, other.URL+"/b")

	events := map[string]string{"order.created": "", "payment.succeeded": "", "payment.refunded": ""}
	for typ := range events {
		id := fmt.Sprintf("evt_%s_%s", strings.ReplaceAll(typ, ".", "_"), tenantA)
		events[typ] = id
		write(t, event(tenant{ID: tenantA}, id, typ, `{"k":"v"}`))
	}
	orders.waitFor(t, 1, 30*time.Second)
	payments.waitFor(t, 1, 30*time.Second)
	all.waitFor(t, 3, 30*time.Second)
	time.Sleep(3 * time.Second) // nothing more may arrive
	require.Equal(t, []string{"order.created"}, eventTypes(orders.requests()))
	require.Equal(t, []string{"payment.succeeded"}, eventTypes(payments.requests()))
	require.Equal(t, []string{"order.created", "payment.refunded", "payment.succeeded"}, eventTypes(all.requests()))
	require.Empty(t, other.requests(), "tenant B's endpoint gets none of tenant A's events")

	v, err := signing.NewVerifier(secretAll)
	require.NoError(t, err)
	for _, r := range all.requests() {
		require.NoError(t, v.VerifyRequest(r.Header, r.Body), "signed with the secret the API returned")
	}

	// A delivery is listed once its first attempt is recorded, which
	// deliver writes after the receiver answered: poll until both are.
	want := []string{epOrders, epAll}
	sort.Strings(want)
	var endpoints []string
	require.Eventually(t, func() bool {
		status, body := call(t, "GET", "/v1/events/"+events["order.created"]+"/deliveries", keyA, nil)
		if status != http.StatusOK {
			return false
		}
		endpoints = nil
		for _, d := range body["data"].([]any) {
			endpoints = append(endpoints, d.(map[string]any)["endpoint_id"].(string))
		}
		sort.Strings(endpoints)
		return len(endpoints) == len(want)
	}, 15*time.Second, 200*time.Millisecond, "both deliveries listed under their event")
	require.Equal(t, want, endpoints)
	_ = epPayments

	id := deliveryID(t, events["order.created"], epOrders)
	var status int
	var got map[string]any
	require.Eventually(t, func() bool {
		status, got = call(t, "GET", "/v1/deliveries/"+id, keyA, nil)
		return status == http.StatusOK && got["state"] == "delivered"
	}, 15*time.Second, 200*time.Millisecond)
	log := got["attempt_log"].([]any)
	require.Len(t, log, 1)
	require.EqualValues(t, 200, log[0].(map[string]any)["status"])

	// Tenant B sees none of it.
	status, _ = call(t, "GET", "/v1/deliveries/"+id, keyB, nil)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = call(t, "GET", "/v1/events/"+events["order.created"]+"/deliveries", keyB, nil)
	require.Equal(t, http.StatusNotFound, status, "another tenant's event is not found, as a missing one")
	_ = tenantB
}

func eventTypes(rs []received) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Header.Get("X-Event-Type"))
	}
	sort.Strings(out)
	return out
}

// Tenant B can neither read nor change tenant A's endpoints: every attempt
// answers 404, as for an endpoint that does not exist.
func TestAPITenantIsolation(t *testing.T) {
	t.Parallel()
	_, keyA := apiTenant(t, "owner")
	_, keyB := apiTenant(t, "intruder")
	rcv := newReceiver(t, status(200))
	ep, secret := apiEndpoint(t, keyA, rcv.URL+"/hook", "order.*")

	_, missing := call(t, "GET", "/v1/endpoints/ep_doesnotexist", keyB, nil)
	for _, attempt := range []struct{ method, path string }{
		{"GET", "/v1/endpoints/" + ep},
		{"PATCH", "/v1/endpoints/" + ep},
		{"DELETE", "/v1/endpoints/" + ep},
		{"POST", "/v1/endpoints/" + ep + "/rotate-secret"},
		{"POST", "/v1/endpoints/" + ep + "/disable"},
		{"POST", "/v1/endpoints/" + ep + "/enable"},
	} {
		var body any
		if attempt.method == "PATCH" {
			body = map[string]any{"url": "https://attacker.example/steal"}
		}
		status, got := call(t, attempt.method, attempt.path, keyB, body)
		require.Equal(t, http.StatusNotFound, status, "%s %s by another tenant", attempt.method, attempt.path)
		require.Equal(t, missing["title"], got["title"])
	}
	status, body := call(t, "GET", "/v1/endpoints", keyB, nil)
	require.Equal(t, http.StatusOK, status)
	require.Empty(t, body["data"], "tenant B lists none of A's endpoints")

	status, body = call(t, "GET", "/v1/endpoints/"+ep, keyA, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, rcv.URL+"/hook", body["url"], "A's endpoint is unchanged")
	require.Equal(t, false, body["disabled"])
	require.Nil(t, body["secret"], "the secret is never shown again")
	require.Nil(t, body["previous_secret_until"], "no rotation happened")
	_ = secret
}

func TestAPIAuthentication(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "auth")
	op, err := operatorKey()
	require.NoError(t, err)
	for name, k := range map[string]string{"missing": "", "wrong": "hk_aaaaaaaaaaaa_" + strings.Repeat("x", 43), "operator key on a tenant route": op} {
		status, body := call(t, "GET", "/v1/endpoints", k, nil)
		require.Equal(t, http.StatusUnauthorized, status, name)
		require.NotEmpty(t, body["detail"])
	}
	status, _ := call(t, "POST", "/v1/admin/tenants", key, map[string]any{"name": "x"})
	require.Equal(t, http.StatusUnauthorized, status, "a tenant key does not reach admin routes")

	status, body := call(t, "POST", "/v1/admin/tenants/"+tenantID+"/keys", op, nil)
	require.Equal(t, http.StatusCreated, status)
	second := body["key"].(string)
	status, _ = call(t, "GET", "/v1/endpoints", second, nil)
	require.Equal(t, http.StatusOK, status)
	status, _ = call(t, "DELETE", "/v1/admin/tenants/"+tenantID+"/keys/"+body["key_id"].(string), op, nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = call(t, "GET", "/v1/endpoints", second, nil)
	require.Equal(t, http.StatusUnauthorized, status, "a revoked key is refused")
	status, _ = call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "the tenant's other key still works")
}

func TestAPIBadInputGets4xx(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "badinput")
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"malformed JSON", `{"url": `, ""},
		{"unknown field", map[string]any{"url": "https://example.com/x", "colour": "red"}, "colour"},
		{"url of wrong type", map[string]any{"url": 5}, "url"},
		{"internal address", map[string]any{"url": "http://10.0.0.1/hook"}, "url"},
		{"metadata address", map[string]any{"url": "http://169.254.169.254/latest"}, "url"},
		{"user info", map[string]any{"url": "https://u:p@example.com/"}, "url"},
		{"bad event type", map[string]any{"url": "https://example.com/x", "event_types": []string{"bad type!"}}, "event_types[0]"},
		{"reserved header", map[string]any{"url": "https://example.com/x", "headers": map[string]string{"webhook-signature": "forged"}}, "headers.webhook-signature"},
	}
	for _, tc := range cases {
		status, body := call(t, "POST", "/v1/endpoints", key, tc.body)
		require.Equal(t, http.StatusBadRequest, status, tc.name)
		require.NotEmpty(t, body["detail"], tc.name)
		if tc.field != "" {
			require.Contains(t, fmt.Sprint(body["errors"]), tc.field, "%s: the error names the field", tc.name)
		}
	}
}

// After a rotation a receiver verifies with either secret during the grace
// period, and only with the new one after it.
func TestAPISecretRotation(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "rotate")
	rcv := newReceiver(t, status(200))
	ep, oldSecret := apiEndpoint(t, key, rcv.URL+"/hook")
	requireNoPlaintextSecret(t, endpointItem(t, tenantID, ep), oldSecret)
	status, body := call(t, "POST", "/v1/endpoints/"+ep+"/rotate-secret", key, map[string]any{"grace_seconds": 4})
	require.Equal(t, http.StatusOK, status, "%v", body)
	newSecret := body["secret"].(string)
	require.NotEqual(t, oldSecret, newSecret)
	require.NotNil(t, body["previous_secret_until"])
	// At rest, both secrets are sealed: the state table holds no plaintext.
	item := endpointItem(t, tenantID, ep)
	requireNoPlaintextSecret(t, item, oldSecret, newSecret)
	require.Contains(t, item, "sealed_retiring_secret")
	// And no route reads a secret back.
	status, body = call(t, "GET", "/v1/endpoints/"+ep, key, nil)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, fmt.Sprint(body), "whsec_")

	oldV, err := signing.NewVerifier(oldSecret)
	require.NoError(t, err)
	newV, err := signing.NewVerifier(newSecret)
	require.NoError(t, err)

	write(t, event(tenant{ID: tenantID}, "evt_rot_1_"+tenantID, "order.created", `{}`))
	r := rcv.waitFor(t, 1, 30*time.Second)[0]
	require.Len(t, strings.Fields(r.Header.Get("webhook-signature")), 2, "both secrets sign during the grace period")
	require.NoError(t, oldV.VerifyRequest(r.Header, r.Body), "the old secret still verifies")
	require.NoError(t, newV.VerifyRequest(r.Header, r.Body), "the new secret verifies")

	time.Sleep(5 * time.Second)
	write(t, event(tenant{ID: tenantID}, "evt_rot_2_"+tenantID, "order.created", `{}`))
	r = rcv.waitFor(t, 2, 30*time.Second)[1]
	require.NoError(t, newV.VerifyRequest(r.Header, r.Body), "the new secret verifies")
	require.ErrorIs(t, oldV.VerifyRequest(r.Header, r.Body), signing.ErrNoMatch, "the old secret no longer does")
}
