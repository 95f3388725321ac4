//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
)

// consoleURL is the console as the deployed API serves it on the local cloud.
func consoleURL() string {
	return strings.TrimSuffix(env.endpointURL, "/") + "/_aws/execute-api/" + env.out.ApiID + "/console/"
}

// portalLink mints a portal link for a tenant with the operator key, with
// the write scopes given (none: read and replay only), and returns its id
// and token.
func portalLink(t *testing.T, tenantID string, ttlSeconds int, scopes ...domain.Scope) (id, token string) {
	t.Helper()
	op, err := operatorKey()
	require.NoError(t, err)
	if scopes == nil {
		scopes = []domain.Scope{}
	}
	status, body := call(t, "POST", "/v1/admin/tenants/"+tenantID+"/portal-links", op, map[string]any{"ttl_seconds": ttlSeconds, "scopes": scopes})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	var want []any
	for _, sc := range domain.Scopes() {
		if slices.Contains(scopes, sc) {
			want = append(want, string(sc))
		}
	}
	if want == nil {
		want = []any{}
	}
	require.Equal(t, want, body["scopes"], "the link has the scopes asked for")
	id, _ = body["id"].(string)
	token, _ = body["token"].(string)
	require.NotEmpty(t, id, "%v", body)
	require.NotEmpty(t, token, "%v", body)
	require.Equal(t, tenantID, body["tenant_id"])
	url, _ := body["url"].(string)
	require.True(t, strings.HasSuffix(url, "/console/#portal="+token), "the link opens the console with the token in the fragment: %q", url)
	return id, token
}

// signInByPortal opens the console with a fresh portal link for the tenant,
// with the write scopes given (none: read and replay, all the console's
// replay flows need), and waits for the endpoints view; it returns the
// link's id.
func signInByPortal(t *testing.T, b *browser, tenantID string, scopes ...domain.Scope) string {
	t.Helper()
	id, _ := signInByPortalTTL(t, b, tenantID, 900, scopes...)
	return id
}

// signInByPortalTTL is signInByPortal with a link of the given life; it
// returns the link's id and token.
func signInByPortalTTL(t *testing.T, b *browser, tenantID string, ttlSeconds int, scopes ...domain.Scope) (string, string) {
	t.Helper()
	id, token := portalLink(t, tenantID, ttlSeconds, scopes...)
	b.navigate(consoleURL() + "#portal=" + token)
	b.wait(dt("endpoints"))
	// The token leaves the address bar at once, and nothing is stored.
	href := evalIn[string](b, `location.href`)
	require.NotContains(t, href, token, "the portal token stays in the address bar")
	require.Equal(t, 0, evalIn[int](b, `localStorage.length + sessionStorage.length`), "the console stored something")
	require.Empty(t, evalIn[string](b, `document.cookie`))
	return id, token
}

// signInKey signs in as a tenant with an API key typed into the form and
// waits for the endpoints view.
func signInKey(t *testing.T, b *browser, key string) {
	t.Helper()
	b.navigate(consoleURL())
	b.wait(dt("signin"))
	b.typ(dt("api-key"), key)
	b.click(dt("signin-tenant"))
	b.wait(dt("endpoints"))
	require.Equal(t, 0, evalIn[int](b, `localStorage.length + sessionStorage.length`), "the console stored something")
}

// signInOperator signs in with the operator key typed into the form and
// waits for the operator view's first page of tenants (the test made one).
func signInOperator(t *testing.T, b *browser) {
	t.Helper()
	op, err := operatorKey()
	require.NoError(t, err)
	b.navigate(consoleURL())
	b.wait(dt("signin"))
	b.typ(dt("operator-key"), op)
	b.click(dt("signin-operator"))
	b.wait(dt("tenants"))
	b.wait(dt("tenant-row")) // the first page, rendered at once
}

// waitTenantDepth waits until the operator's figures count n dead
// deliveries for the tenant (they follow the deliveries' state shortly).
func waitTenantDepth(t *testing.T, tenantID string, n int) {
	t.Helper()
	op, err := operatorKey()
	require.NoError(t, err)
	var body map[string]any
	require.Eventually(t, func() bool {
		var status int
		status, body = call(t, "GET", "/v1/admin/stats", op, nil)
		depth, _ := body["dlq_depth_by_tenant"].(map[string]any)
		return status == http.StatusOK && depth[tenantID] == float64(n)
	}, 60*time.Second, 250*time.Millisecond, "the DLQ depth of %s is not %d: %v", tenantID, n, body)
}

// row is the selector of a table row of a data-test kind with a data-id.
func row(kind, id string) string { return fmt.Sprintf(`[data-test=%q][data-id=%q]`, kind, id) }

// A portal link's console offers only what the link may do: a link minted
// without scopes renders no write button (its endpoint row says "read
// only", New endpoint is hidden) and still replays; one with
// endpoints:write and secrets:rotate renders them all.
func TestConsolePortalLinkScopesHideWrites(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consolescopes")
	epID, _ := apiEndpoint(t, key, "http://127.0.0.1:9/scopes")
	epRow := row("endpoint-row", epID)
	writes := []string{"endpoint-edit", "endpoint-toggle", "endpoint-rotate", "endpoint-test"}
	createShown := `!document.querySelector('[data-test="endpoint-create"]').hidden`

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInByPortal(t, b, tenantID)
	b.wait(epRow + " " + dt("endpoint-read-only"))
	for _, name := range writes {
		require.Zero(t, b.count(epRow+" "+dt(name)), "a read-and-replay link renders no %s", name)
	}
	require.False(t, evalIn[bool](b, createShown), "a read-and-replay link has no New endpoint")
	require.Contains(t, b.text("#who"), "read and replay dead only")
	b.click(dt("nav-dlq"))
	b.wait(dt("replay-all"))
	b.screenshot("portal-read-only")

	w := newBrowser(t, desktopWidth, desktopHeight)
	signInByPortal(t, w, tenantID, domain.ScopeEndpointsWrite, domain.ScopeSecretsRotate)
	for _, name := range writes {
		w.wait(epRow + " " + dt(name))
	}
	require.Zero(t, w.count(epRow+" "+dt("endpoint-read-only")))
	require.True(t, evalIn[bool](w, createShown), "endpoints:write brings New endpoint back")
}

// A revoked portal link ends the session at the next call with the API's
// message; an unknown token never signs in.
func TestConsolePortalLinkRevokedEndsSession(t *testing.T) {
	t.Parallel()
	tenantID, _ := apiTenant(t, "consolerevoke")
	b := newBrowser(t, desktopWidth, desktopHeight)
	linkID := signInByPortal(t, b, tenantID)

	op, err := operatorKey()
	require.NoError(t, err)
	status, body := call(t, "DELETE", "/v1/admin/tenants/"+tenantID+"/portal-links/"+linkID, op, nil)
	require.Equal(t, http.StatusNoContent, status, "%v", body)

	b.callAPI()
	b.waitText(dt("session-message"), "the portal link was revoked")
	b.wait(dt("signin"))
	require.Zero(t, b.count(dt("dlq-row")), "a signed-out page shows no tenant data")
	b.screenshot("session-ended")

	// An unknown token: the first call answers 401 and the page says so.
	b.navigate(consoleURL() + "#portal=plt_unknown" + strings.Repeat("x", 40))
	b.wait(dt("session-message"))
	b.wait(dt("signin"))
	require.NotEmpty(t, strings.TrimSpace(b.text(dt("session-message"))))
	require.NotContains(t, b.text(dt("session-message")), "the portal link was revoked")
}

// An expired portal link ends the session at the next call with the API's
// message. The local cloud's deployment lets a link live a few seconds
// (portalMinTTL=1s; on AWS a minute at least).
func TestConsolePortalLinkExpiredEndsSession(t *testing.T) {
	t.Parallel()
	tenantID, _ := apiTenant(t, "consoleexpire")
	b := newBrowser(t, desktopWidth, desktopHeight)
	_, token := signInByPortalTTL(t, b, tenantID, 5)
	var body map[string]any
	require.Eventually(t, func() bool {
		var status int
		status, body = call(t, "GET", "/v1/endpoints", token, nil)
		return status == http.StatusUnauthorized
	}, 30*time.Second, 250*time.Millisecond, "the link did not expire: %v", body)
	require.Equal(t, "the portal link has expired", body["detail"])

	b.callAPI()
	b.waitText(dt("session-message"), "the portal link has expired")
	b.wait(dt("signin"))
	require.Zero(t, b.count(dt("endpoint-row")), "a signed-out page shows no tenant data")
	b.assertSafe("expired link")
}

// The operator key signs in to the operator view, which lists the tenant
// with its DLQ depth.
func TestConsoleOperatorSeesDLQDepth(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "consoleop")
	rcv := newReceiver(t, status(http.StatusBadRequest))
	epID, _ := apiEndpoint(t, key, rcv.URL)
	deadEvents(t, tenantID, epID, 2, "order.created")
	waitTenantDepth(t, tenantID, 2)

	b := newBrowser(t, desktopWidth, desktopHeight)
	signInOperator(t, b)
	// Deepest first, paginated: page on until the tenant shows.
	sel := row("tenant-row", tenantID)
	for page := 0; b.count(sel) == 0; page++ {
		require.Less(t, page, 50, "tenant %s is not listed", tenantID)
		require.Equal(t, "false", evalIn[string](b, `String(document.querySelector('[data-test="tenants-next-page"]').disabled)`),
			"tenant %s is not listed and there is no next page", tenantID)
		before := evalIn[string](b, `document.querySelector('[data-test="tenants"] tbody').textContent`)
		b.click(dt("tenants-next-page"))
		b.waitJS("the next page of tenants", stepTimeout,
			`(before) => document.querySelector('[data-test="tenants"] tbody').textContent !== before`, before)
	}
	require.Equal(t, "2", strings.TrimSpace(b.text(sel+" "+dt("dlq-depth"))))
	b.wait(dt("alarms"))
	b.wait(dt("redrive"))
	b.screenshot("operator")
	b.assertSafe("operator view")

	// The operator view is the operator's only view: no tenant navigation.
	for _, nav := range []string{"nav-endpoints", "nav-dlq", "nav-lookup"} {
		require.False(t, evalIn[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.offsetParent !== null; })()`, dt(nav))),
			"%s is shown to the operator", nav)
	}
}
