// Package notify sends a tenant's notices by e-mail through Amazon SES: the
// verification e-mail of an address the tenant names, and a notice for
// each of hookline's operational events about the tenant's endpoints
// (endpoint.failing, endpoint.disabled, endpoint.recovered,
// endpoint.degraded, and the delivery.dead summaries) to its verified
// addresses.
//
// The events come from the operator's EventBridge bus (enqueue puts every
// operational event there): a rule sends them to the replay function's
// operations queue, whose route calls Notifier.Notice. A notice is sent
// at least once (the queue retries a failed send; an event put on the bus
// twice is two notices), at most domain.NoticesPerHour a tenant an hour.
//
// Every e-mail carries the links a mail provider requires of a sender: the
// verification link (the address gets nothing else until it is followed),
// and on each notice an unsubscribe link, in the body and as a one-click
// List-Unsubscribe header (RFC 8058). Nothing a tenant or a receiver wrote
// is trusted: the e-mails are plain text, the URLs hookline's own.
package notify

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// SES sends one e-mail: an *SESClient (ses.go).
type SES interface {
	Send(ctx context.Context, e Email) error
}

var _ SES = (*SESClient)(nil)

// Mailer sends hookline's e-mails from one SES identity.
type Mailer struct {
	SES SES
	// From is the sending address, of the identity the stack names
	// (Props.NotifyFrom). Required.
	From string
	// ConfigurationSet, when set, is the SES configuration set of every
	// send (bounce and complaint handling are the operator's, there).
	ConfigurationSet string
}

// Token returns a new random link token and its hash as stored.
func Token() (token, hash string, err error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b[:])
	return token, Hash(token), nil
}

// Hash is the stored form of a verification token: its SHA-256, hex.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// link is base's path with the address's ids and token as its query.
func link(base, path string, n domain.NotifyEmail, token string) string {
	q := url.Values{"tenant_id": {n.TenantID}, "id": {n.ID}, "token": {token}}
	return strings.TrimRight(base, "/") + path + "?" + q.Encode()
}

// VerifyLink and UnsubscribeLink are an address's links, on the API.
func VerifyLink(n domain.NotifyEmail, token string) string {
	return link(n.BaseURL, "/v1/email-links/verify", n, token)
}

// UnsubscribeLink is the address's unsubscribe link (GET shows it done,
// POST is RFC 8058's one click).
func UnsubscribeLink(n domain.NotifyEmail) string {
	return link(n.BaseURL, "/v1/email-links/unsubscribe", n, n.UnsubscribeToken)
}

// SendVerification sends n its verification e-mail, with the link of token.
func (m *Mailer) SendVerification(ctx context.Context, n domain.NotifyEmail, token string) error {
	body := fmt.Sprintf(`Someone with access to hookline tenant %s asked to send its webhook notices
(endpoints failing, disabled or recovered, deliveries dead) to this address.

To receive them, confirm within 7 days:

  %s

If this was not you, ignore this e-mail: nothing will be sent to this address.
`, n.TenantID, VerifyLink(n, token))
	return m.send(ctx, n.Address, "[hookline] Confirm notices for tenant "+n.TenantID, body, nil)
}

// send sends one plain-text e-mail to address.
func (m *Mailer) send(ctx context.Context, address, subject, body string, headers []Header) error {
	if m == nil || m.SES == nil || m.From == "" {
		return ErrNotConfigured
	}
	return m.SES.Send(ctx, Email{From: m.From, To: address, Subject: subject, Text: body, Headers: headers, ConfigurationSet: m.ConfigurationSet})
}

// ErrNotConfigured says the stack has no SES identity: no e-mail is sent.
var ErrNotConfigured = errors.New("e-mail notices are not configured: the stack names no SES identity (notifyFrom)")

// Store is what a Notifier needs of the state table.
type Store interface {
	NotifyEmails(ctx context.Context, tenantID string) ([]domain.NotifyEmail, error)
	TakeNotices(ctx context.Context, tenantID string, at time.Time, n, limit int) (bool, error)
}

// Notifier sends the notices of operational events.
type Notifier struct {
	Store  Store
	Mailer *Mailer
	Log    *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// BusEvent is an EventBridge event of the operator's bus as a rule's SQS
// target delivers it.
type BusEvent struct {
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
	Detail     Detail `json:"detail"`
}

// Detail is an operational event on the bus, as enqueue puts it there.
type Detail = domain.OperatorDetail

// Notice sends the notice of ev to its tenant's verified addresses, within
// the tenant's hourly bound; a tenant without one costs one Query. Its
// error (SES or the table failing) asks for the message again.
func (n *Notifier) Notice(ctx context.Context, ev BusEvent) error {
	d := ev.Detail
	if !domain.IsOperational(d.Type) || d.TenantID == "" {
		return nil
	}
	all, err := n.Store.NotifyEmails(ctx, d.TenantID)
	if err != nil {
		return err
	}
	var to []domain.NotifyEmail
	for _, a := range all {
		if a.Status == domain.NotifyVerified {
			to = append(to, a)
		}
	}
	if len(to) == 0 {
		return nil
	}
	now := time.Now
	if n.Now != nil {
		now = n.Now
	}
	ok, err := n.Store.TakeNotices(ctx, d.TenantID, now(), len(to), domain.NoticesPerHour)
	if err != nil {
		return err
	}
	if !ok {
		n.log().WarnContext(ctx, "notice e-mails over the tenant's hourly bound: not sent", "tenant_id", d.TenantID,
			"event_id", d.ID, "type", d.Type, "addresses", len(to), "per_hour", domain.NoticesPerHour)
		return nil
	}
	subject, body := Compose(d)
	var errs []error
	for _, a := range to {
		unsub := UnsubscribeLink(a)
		text := body + fmt.Sprintf("\nSee it in the console: %s%s\n\nYou get this because %s was confirmed for the notices of hookline tenant %s.\nStop them: %s\n",
			a.ConsoleURL, consolePage(d.Type), a.Address, a.TenantID, unsub)
		headers := []Header{
			{Name: "List-Unsubscribe", Value: "<" + unsub + ">"},
			{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
		}
		if err := n.Mailer.send(ctx, a.Address, subject, text, headers); err != nil {
			errs = append(errs, fmt.Errorf("notice %s to address %s: %w", d.ID, a.ID, err))
		}
	}
	if len(errs) == 0 {
		n.log().InfoContext(ctx, "notice e-mailed", "tenant_id", d.TenantID, "event_id", d.ID, "type", d.Type, "addresses", len(to))
	}
	return errors.Join(errs...)
}

func (n *Notifier) log() *slog.Logger {
	if n.Log != nil {
		return n.Log
	}
	return slog.Default()
}

// consolePage is the console's view that shows the cause of an event of
// type t: the dead letters for delivery.dead, the endpoints (their
// status, health and charts) for the others.
func consolePage(t string) string {
	if t == domain.OpDeliveryDead {
		return "#dlq"
	}
	return "#endpoints"
}

// Compose is the subject and body of the notice of d: what happened, to
// which endpoint, and its last error, in plain text.
func Compose(d Detail) (subject, body string) {
	at := d.OccurredAt.UTC().Format(time.RFC1123)
	if d.Type == domain.OpDeliveryDead {
		var dd domain.OpDeliveryDeadEvent
		_ = json.Unmarshal(d.Data, &dd)
		subject = fmt.Sprintf("[hookline] %d deliveries to endpoint %s died", dd.Count, dd.EndpointID)
		var b strings.Builder
		fmt.Fprintf(&b, "%d deliveries to endpoint %s of tenant %s died between %s and %s (UTC).\n",
			dd.Count, dd.EndpointID, d.TenantID, dd.WindowStart.UTC().Format(time.DateTime), dd.WindowEnd.UTC().Format(time.DateTime))
		for reason, n := range dd.Reasons {
			fmt.Fprintf(&b, "  %s: %d\n", reason, n)
		}
		b.WriteString("They are in the dead-letter queue: replay them from the console or the API once the endpoint is fixed.\n")
		return subject, b.String()
	}
	var e domain.OpEndpointEvent
	_ = json.Unmarshal(d.Data, &e)
	where := e.URL
	if where == "" {
		where = e.Target
	}
	var what string
	switch d.Type {
	case domain.OpEndpointFailing:
		subject = fmt.Sprintf("[hookline] Endpoint %s is failing", e.EndpointID)
		what = fmt.Sprintf("has failed %d attempts in a row; deliveries are being retried.", e.ConsecutiveFailures)
	case domain.OpEndpointDisabled:
		subject = fmt.Sprintf("[hookline] Endpoint %s was disabled", e.EndpointID)
		what = fmt.Sprintf("was disabled (%s) after %d failed attempts in a row: it gets no deliveries until it is enabled again.", e.Reason, e.ConsecutiveFailures)
	case domain.OpEndpointRecovered:
		subject = fmt.Sprintf("[hookline] Endpoint %s has recovered", e.EndpointID)
		what = "answered a delivery with success again."
	case domain.OpEndpointDegraded:
		subject = fmt.Sprintf("[hookline] Endpoint %s is degraded", e.EndpointID)
		what = fmt.Sprintf("is degraded: %.1f%% of its %d attempts in the last %d h failed (its alert is at %d%%).",
			e.FailurePercent, e.Attempts, max(e.WindowHours, 1), e.ThresholdPercent)
	default:
		subject = fmt.Sprintf("[hookline] Endpoint %s: %s", e.EndpointID, d.Type)
		what = "had an event: " + d.Type
	}
	body = fmt.Sprintf("Endpoint %s of tenant %s (%s) %s\n\nAt: %s\n", e.EndpointID, d.TenantID, where, what, at)
	if e.LastError != "" || e.LastStatus != 0 {
		body += fmt.Sprintf("Last failure: %s (status %d)\n", e.LastError, e.LastStatus)
	}
	return subject, body
}
