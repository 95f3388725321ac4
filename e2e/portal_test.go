//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// A portal link minted through the API signs in as its tenant on the
// deployed stack: its tenant's routes answer, another tenant's resource is
// 404, an operator route 401; its console URL is the local cloud's; a
// revoked link, and one that expired (the local deployment's least life is
// 1 s), answer their own 401.
func TestPortalLinks(t *testing.T) {
	op, err := operatorKey()
	require.NoError(t, err)
	tenant, key := apiTenant(t, "portal")
	_, otherKey := apiTenant(t, "portal_other")
	status, ep := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": "http://127.0.0.1:9/x"})
	require.Equal(t, http.StatusCreated, status, "%v", ep)
	status, otherEp := call(t, "POST", "/v1/endpoints", otherKey, map[string]any{"url": "http://127.0.0.1:9/y"})
	require.Equal(t, http.StatusCreated, status, "%v", otherEp)

	status, link := call(t, "POST", "/v1/admin/tenants/"+tenant+"/portal-links", op, map[string]any{"ttl_seconds": 600})
	require.Equal(t, http.StatusCreated, status, "%v", link)
	token := link["token"].(string)
	require.True(t, strings.HasPrefix(token, "plt_"))
	base := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID
	require.Equal(t, base+"/console/#portal="+token, link["url"], "the console as this client reaches it")

	status, got := call(t, "GET", "/v1/endpoints/"+ep["id"].(string), token, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	status, got = call(t, "GET", "/v1/endpoints/"+otherEp["id"].(string), token, nil)
	require.Equal(t, http.StatusNotFound, status, "another tenant's endpoint: %v", got)
	status, got = call(t, "GET", "/v1/admin/stats", token, nil)
	require.Equal(t, http.StatusUnauthorized, status, "an operator route: %v", got)
	// Minted without scopes: it reads and replays, and writes nothing.
	require.Equal(t, []any{}, link["scopes"])
	status, got = call(t, "POST", "/v1/endpoints", token, map[string]any{"url": "http://127.0.0.1:9/z"})
	require.Equal(t, http.StatusForbidden, status, "a write without its scope: %v", got)
	require.Equal(t, "endpoints:write", got["missing_scope"])
	status, got = call(t, "POST", "/v1/endpoints/"+ep["id"].(string)+"/rotate-secret", token, nil)
	require.Equal(t, http.StatusForbidden, status, "%v", got)
	require.Equal(t, "secrets:rotate", got["missing_scope"])
	// Nor does it replay since a time (delivered deliveries included):
	// that needs deliveries:replay.
	status, got = call(t, "POST", "/v1/replays", token, map[string]any{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, http.StatusForbidden, status, "%v", got)
	require.Equal(t, "deliveries:replay", got["missing_scope"])
	// It sees a custom header's name, not its value (often the
	// receiver's credentials); the key sees the value.
	status, got = call(t, "PATCH", "/v1/endpoints/"+ep["id"].(string), key, map[string]any{"headers": map[string]string{"Authorization": "Bearer receiver-secret"}})
	require.Equal(t, http.StatusOK, status, "%v", got)
	status, got = call(t, "GET", "/v1/endpoints/"+ep["id"].(string), token, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.Equal(t, map[string]any{"Authorization": "[redacted]"}, got["headers"])
	require.Equal(t, true, got["headers_redacted"])
	status, got = call(t, "GET", "/v1/session", token, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.Equal(t, "portal_link", got["credential"])
	require.Equal(t, []any{}, got["scopes"])
	status, scoped := call(t, "POST", "/v1/admin/tenants/"+tenant+"/portal-links", op, map[string]any{"ttl_seconds": 600, "scopes": []string{"secrets:rotate"}})
	require.Equal(t, http.StatusCreated, status, "%v", scoped)
	status, got = call(t, "POST", "/v1/endpoints/"+ep["id"].(string)+"/rotate-secret", scoped["token"].(string), nil)
	require.Equal(t, http.StatusOK, status, "a link with secrets:rotate rotates: %v", got)

	status, _ = call(t, "DELETE", "/v1/admin/tenants/"+tenant+"/portal-links/"+link["id"].(string), op, nil)
	require.Equal(t, http.StatusNoContent, status)
	status, got = call(t, "GET", "/v1/endpoints", token, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "the portal link was revoked", got["detail"])

	status, short := call(t, "POST", "/v1/admin/tenants/"+tenant+"/portal-links", op, map[string]any{"ttl_seconds": 1})
	require.Equal(t, http.StatusCreated, status, "the local deployment lowers the least life to 1 s: %v", short)
	expires, err := time.Parse(time.RFC3339, short["expires_at"].(string))
	require.NoError(t, err)
	time.Sleep(time.Until(expires) + 500*time.Millisecond)
	status, got = call(t, "GET", "/v1/endpoints", short["token"].(string), nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "the portal link has expired", got["detail"])
}

// The console is served by the stack: its page is HTML with the CSP, its
// script JavaScript, and /console redirects into it.
func TestConsoleIsServed(t *testing.T) {
	base := strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		resp, err := client.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	// ministack hands the function "/console" for /console/: it answers
	// with the page's own address, which serves it.
	resp, body := get("/console/")
	if resp.StatusCode == http.StatusMovedPermanently {
		require.Equal(t, "/_aws/execute-api/"+env.out.ApiID+"/console/index.html", resp.Header.Get("Location"))
		resp, body = get("/console/index.html")
	}
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self'")
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	require.Contains(t, strings.ToLower(body), "<!doctype html>")

	resp, body = get("/console/app.js")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
	resp, _ = get("/console/app.css")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	resp, _ = get("/console/nothing.js")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get("/console-hello/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get("/console")
	require.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	require.Equal(t, "/_aws/execute-api/"+env.out.ApiID+"/console/index.html", resp.Header.Get("Location"))
}

// The operator's routes answer: a tenant with dead deliveries is listed
// with its DLQ depth, before shallower ones; the alarms answer 200 or, where
// CloudWatch cannot be read, 503 with that detail.
func TestOperatorConsoleRoutes(t *testing.T) {
	op, err := operatorKey()
	require.NoError(t, err)
	tenant, _ := apiTenant(t, "opconsole")
	ctx := context.Background()
	for i := range 3 {
		ev := fmt.Sprintf("ev_%s_%d", tenant, i)
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, "ep_x", time.Time{}), TenantID: tenant, EndpointID: "ep_x", EventID: ev, EventType: "a.b"}
		require.NoError(t, env.store.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now(), Status: 410},
			domain.Outcome{State: domain.StateDead, DeadReason: "gone", Message: "{}"}))
	}
	found := false
	for cursor, pages := "", 0; !found && pages < 50; pages++ {
		path := "/v1/admin/tenants?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		status, page := call(t, "GET", path, op, nil)
		require.Equal(t, http.StatusOK, status, "%v", page)
		for _, row := range page["data"].([]any) {
			r := row.(map[string]any)
			if r["tenant_id"] == tenant {
				require.EqualValues(t, 3, r["dlq_depth"])
				found = true
			}
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.True(t, found, "tenant %s is listed", tenant)

	// ministack 1.5.33 answers DescribeAlarms (with AlarmNamePrefix and
	// StateValue): an alarm of the stack put in ALARM is listed, then
	// leaves the list once it is OK again.
	cw := cloudwatch.NewFromConfig(env.cfg)
	name := env.out.DLQDepthAlarmName
	_, err = cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String(name), StateValue: cwtypes.StateValueAlarm, StateReason: aws.String("e2e console")})
	require.NoError(t, err)
	defer func() {
		_, _ = cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String(name), StateValue: cwtypes.StateValueOk, StateReason: aws.String("e2e console done")})
	}()
	status, alarms := call(t, "GET", "/v1/admin/alarms", op, nil)
	require.Equal(t, http.StatusOK, status, "%v", alarms)
	var listed map[string]any
	for _, a := range alarms["data"].([]any) {
		if a.(map[string]any)["name"] == name {
			listed = a.(map[string]any)
		}
	}
	require.NotNil(t, listed, "%s is in ALARM: %v", name, alarms)
	require.Equal(t, "e2e console", listed["reason"])
	require.NotEmpty(t, listed["updated_at"])
	_, err = cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String(name), StateValue: cwtypes.StateValueOk, StateReason: aws.String("e2e console done")})
	require.NoError(t, err)
	status, alarms = call(t, "GET", "/v1/admin/alarms", op, nil)
	require.Equal(t, http.StatusOK, status)
	for _, a := range alarms["data"].([]any) {
		require.NotEqual(t, name, a.(map[string]any)["name"], "an alarm that is OK is not listed")
	}
}
