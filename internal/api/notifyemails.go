package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/notify"
	"github.com/hookline/hookline/internal/store"
)

// NotifyStore is what the notification routes need of the state table:
// a *store.Store, given apart from Store (the routes of one group).
type NotifyStore interface {
	NotifyEmails
	NotifyLinks
}

// NotifyEmails are a tenant's notification addresses: named, listed,
// deleted.
type NotifyEmails interface {
	PutNotifyEmail(ctx context.Context, n domain.NotifyEmail) (domain.NotifyEmail, error)
	NotifyEmails(ctx context.Context, tenantID string) ([]domain.NotifyEmail, error)
	DeleteNotifyEmail(ctx context.Context, tenantID, id string) error
}

// NotifyLinks are what an e-mail's link reads and moves: one address.
type NotifyLinks interface {
	NotifyEmail(ctx context.Context, tenantID, id string) (domain.NotifyEmail, error)
	SetNotifyStatus(ctx context.Context, tenantID, id string, from, to domain.NotifyStatus) (domain.NotifyEmail, error)
}

// Verifier sends an address its verification e-mail: a *notify.Mailer.
type Verifier interface {
	SendVerification(ctx context.Context, n domain.NotifyEmail, token string) error
}

// NotifyEmailView is a notification address as the API shows it.
type NotifyEmailView struct {
	ID         string              `json:"id"`
	Address    string              `json:"address"`
	Status     domain.NotifyStatus `json:"status"`
	CreatedAt  time.Time           `json:"created_at"`
	VerifiedAt *time.Time          `json:"verified_at,omitempty"`
}

func notifyView(n domain.NotifyEmail) NotifyEmailView {
	return NotifyEmailView{ID: n.ID, Address: n.Address, Status: n.Status, CreatedAt: n.CreatedAt, VerifiedAt: n.VerifiedAt}
}

// maxAddressBytes is the longest address taken (RFC 5321's path limit).
const maxAddressBytes = 254

// checkAddress says what is wrong with a notification address: a bare
// address (no display name), of at most maxAddressBytes, with a domain.
func checkAddress(s string) string {
	switch {
	case len(s) > maxAddressBytes:
		return "is " + strconv.Itoa(len(s)) + " bytes, at most 254"
	case !domain.BareAddress(s):
		return "is not an e-mail address (give the bare address, such as ops@example.com)"
	case !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], "."):
		return "has no domain with a dot"
	}
	return ""
}

// createNotifyEmail is POST /v1/notification-emails: the address is kept
// pending and sent its verification e-mail; it gets notices once its link
// is followed.
func (s *Server) createNotifyEmail(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	var in struct {
		Address *string `json:"address"`
	}
	if p := decode(w, r, &in); p != nil {
		return p
	}
	if in.Address == nil {
		return invalid(FieldError{Field: "address", Message: "is required"})
	}
	if msg := checkAddress(*in.Address); msg != "" {
		return invalid(FieldError{Field: "address", Message: msg})
	}
	if s.Notices == nil || s.Notify == nil {
		return notConfigured()
	}
	have, err := s.Notify.NotifyEmails(r.Context(), tenant)
	if err != nil {
		return s.internal(r, err)
	}
	for _, n := range have {
		if strings.EqualFold(n.Address, *in.Address) {
			return problem(http.StatusConflict, "%s is already named (%s, %s): delete it first to send its verification again", n.Address, n.ID, n.Status)
		}
	}
	if len(have) >= domain.MaxNotifyEmails {
		return problem(http.StatusConflict, "the tenant names %d addresses, the most it may: delete one first", len(have))
	}
	id, err := s.newID("ne_")
	if err != nil {
		return s.internal(r, err)
	}
	token, hash, err := notify.Token()
	if err != nil {
		return s.internal(r, err)
	}
	unsub, _, err := notify.Token()
	if err != nil {
		return s.internal(r, err)
	}
	n := domain.NotifyEmail{
		TenantID: tenant, ID: id, Address: *in.Address, Status: domain.NotifyPending, VerifyHash: hash, UnsubscribeToken: unsub,
		BaseURL: apiBase(r), ConsoleURL: consoleURL(r),
	}
	if n, err = s.Notify.PutNotifyEmail(r.Context(), n); err != nil {
		return s.internal(r, err)
	}
	if err := s.Notices.SendVerification(r.Context(), n, token); err != nil {
		// Not kept: the tenant names it again once SES answers.
		_ = s.Notify.DeleteNotifyEmail(r.Context(), tenant, id)
		s.log().ErrorContext(r.Context(), "cannot send a verification e-mail", "tenant_id", tenant, "notify_id", id, "error", err.Error())
		return problem(http.StatusServiceUnavailable, "the verification e-mail could not be sent (SES refused or did not answer); try again")
	}
	w.Header().Set("Location", "/v1/notification-emails/"+id)
	writeJSON(w, http.StatusCreated, notifyView(n))
	return nil
}

// apiBase is this API's address as the client of r reaches it.
func apiBase(r *http.Request) string {
	return strings.TrimSuffix(consoleURL(r), "/console/")
}

// notConfigured answers a notification route of a stack without e-mail.
func notConfigured() *Problem {
	return problem(http.StatusConflict, "e-mail notices are not configured on this stack: the operator names an SES identity (notifyFrom) to send them")
}

func (s *Server) listNotifyEmails(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	if s.Notify == nil {
		return notConfigured()
	}
	have, err := s.Notify.NotifyEmails(r.Context(), tenant)
	if err != nil {
		return s.internal(r, err)
	}
	out := page[NotifyEmailView]{Data: make([]NotifyEmailView, 0, len(have))}
	for _, n := range have {
		out.Data = append(out.Data, notifyView(n))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteNotifyEmail(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	if s.Notify == nil {
		return notConfigured()
	}
	id := r.PathValue("notify_id")
	if err := s.Notify.DeleteNotifyEmail(r.Context(), tenant, id); err != nil {
		return s.found(r, "notification address "+strconv.Quote(id), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// linkTarget reads an e-mail link's query (tenant_id, id, token) and the
// address it names; a link that names none, or is malformed, is a 404
// that says nothing of what exists.
func (s *Server) linkTarget(r *http.Request) (domain.NotifyEmail, string, *Problem) {
	q, errs := queryParams(r, "tenant_id", "id", "token")
	if s.Notify == nil || len(errs) > 0 || q["tenant_id"] == "" || q["id"] == "" || q["token"] == "" || len(q["tenant_id"])+len(q["id"]) > 2*maxIDBytes {
		return domain.NotifyEmail{}, "", problem(http.StatusNotFound, "this link is not one hookline sent, or no longer works")
	}
	n, err := s.Notify.NotifyEmail(r.Context(), q["tenant_id"], q["id"])
	if errors.Is(err, store.ErrNotFound) {
		return n, "", problem(http.StatusNotFound, "this link is not one hookline sent, or no longer works")
	}
	if err != nil {
		return n, "", s.internal(r, err)
	}
	return n, q["token"], nil
}

func sameToken(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// verifyNotifyEmail is GET /v1/email-links/verify, the link of a
// verification e-mail (no credential: the token is one): the address gets
// notices from now on.
func (s *Server) verifyNotifyEmail(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	n, token, p := s.linkTarget(r)
	if p != nil {
		return p
	}
	gone := problem(http.StatusNotFound, "this link is not one hookline sent, or no longer works")
	switch {
	case n.Status == domain.NotifyVerified && n.VerifyHash == "":
		writePage(w, "Already confirmed", n.Address+" already gets the notices of tenant "+n.TenantID+".", false)
		return nil
	case n.Status != domain.NotifyPending || !sameToken(notify.Hash(token), n.VerifyHash):
		return gone
	case s.now().Sub(n.CreatedAt) > domain.NotifyVerifyFor:
		return problem(http.StatusGone, "this link expired (7 days): the tenant names the address again to get a new one")
	}
	if _, err := s.Notify.SetNotifyStatus(r.Context(), n.TenantID, n.ID, domain.NotifyPending, domain.NotifyVerified); err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			return gone
		}
		return s.internal(r, err)
	}
	writePage(w, "Confirmed", n.Address+" will get the notices of hookline tenant "+n.TenantID+": endpoints failing, disabled or recovered, deliveries dead. Each notice has a link to stop them.", false)
	return nil
}

// unsubscribeNotifyEmail is /v1/email-links/unsubscribe: GET shows a
// button (a mail scanner that fetches links stops nothing), POST (the
// button, or a mail client's one click, RFC 8058) stops the notices.
func (s *Server) unsubscribeNotifyEmail(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	n, token, p := s.linkTarget(r)
	if p != nil {
		return p
	}
	if !sameToken(token, n.UnsubscribeToken) {
		return problem(http.StatusNotFound, "this link is not one hookline sent, or no longer works")
	}
	if r.Method == http.MethodGet {
		writePage(w, "Stop notices", "Stop sending the notices of hookline tenant "+n.TenantID+" to "+n.Address+"?", true)
		return nil
	}
	if n.Status == domain.NotifyVerified {
		if _, err := s.Notify.SetNotifyStatus(r.Context(), n.TenantID, n.ID, domain.NotifyVerified, domain.NotifyUnsubscribed); err != nil &&
			!errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			return s.internal(r, err)
		}
	}
	writePage(w, "Unsubscribed", n.Address+" gets no more notices of hookline tenant "+n.TenantID+".", false)
	return nil
}

// writePage answers an e-mail link with a small page, its title and text
// escaped, with form a button that posts to the page's own URL: no
// script, nothing framed, nothing kept.
func writePage(w http.ResponseWriter, title, text string, form bool) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	// html.EscapeString, not html/template: a template's Execute makes
	// the linker keep every exported method of every type (it may call
	// them by name), 6.7 MB more of the api binary and its cold start.
	t, x := html.EscapeString(title), html.EscapeString(text)
	button := ""
	if form {
		button = `<form method="post"><button type="submit">Stop the notices</button></form>`
	}
	_, _ = io.WriteString(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookline: `+t+`</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>`+t+`</h1><p>`+x+`</p>
`+button+`
</body></html>
`)
}
