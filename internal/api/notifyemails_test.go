package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/notify"
)

// fakeMail keeps the verification e-mails the API sends: their address
// and link; fail makes the next send fail.
type fakeMail struct {
	mu    sync.Mutex
	sent  []domain.NotifyEmail
	links []string
	fail  bool
}

func (f *fakeMail) SendVerification(_ context.Context, n domain.NotifyEmail, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		f.fail = false
		return context.DeadlineExceeded
	}
	f.sent = append(f.sent, n)
	f.links = append(f.links, notify.VerifyLink(n, token))
	return nil
}

func (f *fakeMail) last() (domain.NotifyEmail, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[len(f.sent)-1], f.links[len(f.links)-1]
}

// pathOf is a link's path and query, as the API's router gets it.
func pathOf(t *testing.T, link string) string {
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.RequestURI()
}

// An address is named pending and sent its link; the link verifies it
// once; the unsubscribe link's GET shows a button and stops nothing, its
// POST stops the notices; another tenant never sees it.
func TestNotificationEmailLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	other := e.newTenant("globex")
	mail := e.srv.Notices.(*fakeMail)

	rec := e.do("POST", "/v1/notification-emails", key, map[string]any{"address": "ops@acme.example"}, "X-Forwarded-Proto", "https")
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	var v api.NotifyEmailView
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	require.Equal(t, domain.NotifyPending, v.Status)
	n, link := mail.last()
	require.Equal(t, "ops@acme.example", n.Address)
	require.True(t, strings.HasPrefix(link, "https://example.com/v1/email-links/verify?"), "the API's address as the tenant reached it: %s", link)
	require.Equal(t, "https://example.com/console/", n.ConsoleURL)

	rec = e.do("GET", "/v1/notification-emails", other, nil)
	require.NotContains(t, rec.Body.String(), "ops@acme.example", "another tenant's list")
	requireProblem(t, e.do("DELETE", "/v1/notification-emails/"+v.ID, other, nil), http.StatusNotFound)

	bad := strings.Replace(pathOf(t, link), "token=", "token=0", 1)
	requireProblem(t, e.do("GET", bad, "", nil), http.StatusNotFound)
	rec = e.do("GET", pathOf(t, link), "", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "Confirmed")
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	rec = e.do("GET", "/v1/notification-emails", key, nil)
	require.Contains(t, rec.Body.String(), `"status":"verified"`)

	stored, err := e.srv.Notify.NotifyEmail(context.Background(), "acme", v.ID)
	require.NoError(t, err)
	unsub := pathOf(t, notify.UnsubscribeLink(stored))
	rec = e.do("GET", unsub, "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `<form method="post">`)
	stored, _ = e.srv.Notify.NotifyEmail(context.Background(), "acme", v.ID)
	require.Equal(t, domain.NotifyVerified, stored.Status, "a GET stops nothing")
	rec = e.do("POST", unsub, "", "List-Unsubscribe=One-Click", "Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	stored, _ = e.srv.Notify.NotifyEmail(context.Background(), "acme", v.ID)
	require.Equal(t, domain.NotifyUnsubscribed, stored.Status)

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/notification-emails/"+v.ID, key, nil).Code)
}

// Bad addresses, duplicates, a sixth address, an unconfigured stack and
// an SES failure each get a clear 4xx or 503, and nothing is kept.
func TestNotificationEmailRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	for _, bad := range []string{"", "not an address", "Ops <ops@acme.example>", "ops@localhost", strings.Repeat("a", 250) + "@x.example", "ops@acme.example\r\nBcc: x@evil.example"} {
		requireProblem(t, e.do("POST", "/v1/notification-emails", key, map[string]any{"address": bad}), http.StatusBadRequest)
	}
	for i := range domain.MaxNotifyEmails {
		rec := e.do("POST", "/v1/notification-emails", key, map[string]any{"address": "ops" + string(rune('a'+i)) + "@acme.example"})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	p := requireProblem(t, e.do("POST", "/v1/notification-emails", key, map[string]any{"address": "OPSA@acme.example"}), http.StatusConflict)
	require.Contains(t, p.Detail, "already named")
	p = requireProblem(t, e.do("POST", "/v1/notification-emails", key, map[string]any{"address": "more@acme.example"}), http.StatusConflict)
	require.Contains(t, p.Detail, "most it may")

	key2 := e.newTenant("globex")
	e.srv.Notices.(*fakeMail).fail = true
	requireProblem(t, e.do("POST", "/v1/notification-emails", key2, map[string]any{"address": "ops@globex.example"}), http.StatusServiceUnavailable)
	rec := e.do("GET", "/v1/notification-emails", key2, nil)
	require.Contains(t, rec.Body.String(), `"data":[]`, "an address whose e-mail was not sent is not kept")

	e.srv.Notices = nil
	p = requireProblem(t, e.do("POST", "/v1/notification-emails", key2, map[string]any{"address": "ops@globex.example"}), http.StatusConflict)
	require.Contains(t, p.Detail, "notifyFrom")
}

// A verification link expires after 7 days.
func TestNotificationEmailLinkExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.newTenant("acme")
	require.Equal(t, http.StatusCreated, e.do("POST", "/v1/notification-emails", key, map[string]any{"address": "ops@acme.example"}).Code)
	_, link := e.srv.Notices.(*fakeMail).last()
	e.clock.Advance(domain.NotifyVerifyFor + time.Minute)
	requireProblem(t, e.do("GET", pathOf(t, link), "", nil), http.StatusGone)
}
