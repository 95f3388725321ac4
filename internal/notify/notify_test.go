package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/notify"
)

// fakeSES keeps what was sent; failFor names an address it refuses.
type fakeSES struct {
	mu      sync.Mutex
	sent    []notify.Email
	failFor string
}

func (f *fakeSES) Send(_ context.Context, e notify.Email) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.To == f.failFor {
		return errors.New("SES SendEmail: TooManyRequestsException (429): Maximum sending rate exceeded")
	}
	f.sent = append(f.sent, e)
	return nil
}

// fakeStore holds a tenant's addresses and counts its notices per hour.
type fakeStore struct {
	addrs   []domain.NotifyEmail
	taken   map[time.Time]int
	queries int
}

func (f *fakeStore) NotifyEmails(_ context.Context, tenantID string) ([]domain.NotifyEmail, error) {
	f.queries++
	var out []domain.NotifyEmail
	for _, a := range f.addrs {
		if a.TenantID == tenantID {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeStore) TakeNotices(_ context.Context, _ string, at time.Time, n, limit int) (bool, error) {
	h := at.Truncate(time.Hour)
	if f.taken[h]+n > limit {
		return false, nil
	}
	f.taken[h] += n
	return true, nil
}

func addr(id, address string, st domain.NotifyStatus) domain.NotifyEmail {
	return domain.NotifyEmail{TenantID: "acme", ID: id, Address: address, Status: st, UnsubscribeToken: "u-" + id,
		BaseURL: "https://api.example.com", ConsoleURL: "https://api.example.com/console/"}
}

func failing(t *testing.T) notify.BusEvent {
	data, err := json.Marshal(domain.OpEndpointEvent{TenantID: "acme", EndpointID: "ep_1", URL: "https://hooks.acme.example/in", ConsecutiveFailures: 10, LastStatus: 503, LastError: "http_503"})
	require.NoError(t, err)
	return notify.BusEvent{Source: "hookline", DetailType: domain.OpEndpointFailing, Detail: notify.Detail{
		ID: "hl_1", TenantID: "acme", Type: domain.OpEndpointFailing, OccurredAt: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC), Data: data,
	}}
}

// A notice goes to each verified address only, with the console's page
// and the address's own unsubscribe link in its body and as one-click
// List-Unsubscribe headers.
func TestNoticeGoesToVerifiedAddressesWithTheirUnsubscribeLink(t *testing.T) {
	t.Parallel()
	ses := &fakeSES{}
	st := &fakeStore{taken: map[time.Time]int{}, addrs: []domain.NotifyEmail{
		addr("ne_1", "ops@acme.example", domain.NotifyVerified), addr("ne_2", "new@acme.example", domain.NotifyPending),
		addr("ne_3", "gone@acme.example", domain.NotifyUnsubscribed), addr("ne_4", "oncall@acme.example", domain.NotifyVerified),
	}}
	n := &notify.Notifier{Store: st, Mailer: &notify.Mailer{SES: ses, From: "alerts@hookline.example"}}
	require.NoError(t, n.Notice(context.Background(), failing(t)))
	require.Len(t, ses.sent, 2)
	for i, want := range []string{"ops@acme.example", "oncall@acme.example"} {
		in := ses.sent[i]
		require.Equal(t, want, in.To)
		require.Equal(t, "alerts@hookline.example", in.From)
		require.Equal(t, "[hookline] Endpoint ep_1 is failing", in.Subject)
		body := in.Text
		require.Contains(t, body, "has failed 10 attempts in a row")
		require.Contains(t, body, "https://hooks.acme.example/in")
		require.Contains(t, body, "http_503 (status 503)")
		require.Contains(t, body, "https://api.example.com/console/#endpoints")
		id := []string{"ne_1", "ne_4"}[i]
		unsub := "https://api.example.com/v1/email-links/unsubscribe?id=" + id + "&tenant_id=acme&token=u-" + id
		require.Contains(t, body, unsub)
		require.Equal(t, []notify.Header{{Name: "List-Unsubscribe", Value: "<" + unsub + ">"}, {Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"}}, in.Headers)
	}
}

// A tenant's notices stop at domain.NoticesPerHour e-mails an hour; the
// next hour they go again. A tenant without a verified address costs one
// read and sends nothing.
func TestNoticesAreBoundedPerTenantHour(t *testing.T) {
	t.Parallel()
	ses := &fakeSES{}
	st := &fakeStore{taken: map[time.Time]int{}, addrs: []domain.NotifyEmail{addr("ne_1", "ops@acme.example", domain.NotifyVerified)}}
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	n := &notify.Notifier{Store: st, Mailer: &notify.Mailer{SES: ses, From: "alerts@hookline.example"}, Now: func() time.Time { return now }}
	for range domain.NoticesPerHour + 5 {
		require.NoError(t, n.Notice(context.Background(), failing(t)))
	}
	require.Len(t, ses.sent, domain.NoticesPerHour)
	now = now.Add(time.Hour)
	require.NoError(t, n.Notice(context.Background(), failing(t)))
	require.Len(t, ses.sent, domain.NoticesPerHour+1)

	ev := failing(t)
	ev.Detail.TenantID = "quiet"
	st.queries = 0
	require.NoError(t, n.Notice(context.Background(), ev))
	require.Equal(t, 1, st.queries)
	require.Len(t, ses.sent, domain.NoticesPerHour+1)
}

// An address SES refuses fails the notice (the queue sends it again); the
// others were sent.
func TestNoticeFailureAsksForTheMessageAgain(t *testing.T) {
	t.Parallel()
	ses := &fakeSES{failFor: "bad@acme.example"}
	st := &fakeStore{taken: map[time.Time]int{}, addrs: []domain.NotifyEmail{addr("ne_1", "bad@acme.example", domain.NotifyVerified), addr("ne_2", "ok@acme.example", domain.NotifyVerified)}}
	n := &notify.Notifier{Store: st, Mailer: &notify.Mailer{SES: ses, From: "alerts@hookline.example"}}
	err := n.Notice(context.Background(), failing(t))
	require.ErrorContains(t, err, "TooManyRequestsException")
	require.NotContains(t, err.Error(), "bad@acme.example", "the error names the address's id, not the address")
	require.Len(t, ses.sent, 1)
}

// Each kind of event reads as what happened.
func TestComposeSaysWhatHappened(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	dead, _ := json.Marshal(domain.OpDeliveryDeadEvent{TenantID: "acme", EndpointID: "ep_1", Count: 12, WindowStart: at, WindowEnd: at.Add(5 * time.Minute),
		Reasons: map[domain.DeadReason]int{domain.ReasonAttemptsExhausted: 12}})
	disabled, _ := json.Marshal(domain.OpEndpointEvent{EndpointID: "ep_1", URL: "https://x.example", Reason: domain.DisabledEndpointGone, ConsecutiveFailures: 1})
	recovered, _ := json.Marshal(domain.OpEndpointEvent{EndpointID: "ep_1", URL: "https://x.example"})
	degraded := []byte(`{"endpoint_id":"ep_1","url":"https://x.example","failure_percent":37.5,"threshold_percent":20,"window_hours":1,"attempts":40,"failed":15}`)
	for _, tc := range []struct {
		typ           string
		data          []byte
		subject, body string
	}{
		{domain.OpDeliveryDead, dead, "[hookline] 12 deliveries to endpoint ep_1 died", "attempts_exhausted: 12"},
		{domain.OpEndpointDisabled, disabled, "[hookline] Endpoint ep_1 was disabled", "gets no deliveries until it is enabled again"},
		{domain.OpEndpointRecovered, recovered, "[hookline] Endpoint ep_1 has recovered", "answered a delivery with success again"},
		{domain.OpEndpointDegraded, degraded, "[hookline] Endpoint ep_1 is degraded", "37.5% of its 40 attempts in the last 1 h failed (its alert is at 20%)"},
	} {
		subject, body := notify.Compose(notify.Detail{TenantID: "acme", Type: tc.typ, OccurredAt: at, Data: tc.data})
		require.Equal(t, tc.subject, subject)
		require.Contains(t, body, tc.body)
		require.False(t, strings.ContainsAny(subject, "\r\n"), "one line")
	}
}
