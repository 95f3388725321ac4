//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sesMessage is an e-mail the local cloud's SES kept
// (GET /_ministack/ses/messages).
type sesMessage struct {
	Source   string   `json:"Source"`
	To       []string `json:"To"`
	Subject  string   `json:"Subject"`
	BodyText string   `json:"BodyText"`
}

// mailTo waits for an e-mail to address whose subject contains subject,
// and returns it.
func mailTo(t *testing.T, address, subject string, timeout time.Duration) sesMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(env.endpointURL + "/_ministack/ses/messages")
		require.NoError(t, err)
		var all struct {
			Messages map[string][]sesMessage `json:"messages"`
		}
		err = json.NewDecoder(resp.Body).Decode(&all)
		resp.Body.Close()
		require.NoError(t, err)
		for _, msgs := range all.Messages {
			for _, m := range msgs {
				if len(m.To) == 1 && m.To[0] == address && strings.Contains(m.Subject, subject) {
					return m
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no e-mail to %s with %q in its subject within %s", address, subject, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

var linkRE = regexp.MustCompile(`https?://\S+/v1/email-links/(verify|unsubscribe)\?\S+`)

// linkIn is the e-mail link of kind in body.
func linkIn(t *testing.T, body, kind string) string {
	t.Helper()
	for _, m := range linkRE.FindAllStringSubmatch(body, -1) {
		if m[1] == kind {
			return m[0]
		}
	}
	t.Fatalf("no %s link in %q", kind, body)
	return ""
}

func emailPage(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("List-Unsubscribe=One-Click"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// A tenant names an address; the local cloud's SES gets its verification
// e-mail, whose link confirms it; an endpoint that refuses its deliveries
// (400: dead at once) raises delivery.dead, which the stack's rule brings
// from the operator's bus to the replay function, which e-mails it to the
// address with the console's page and an unsubscribe link; the link's POST
// stops the notices.
func TestNoticesByEmail(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "notices")
	address, id := verifiedAddress(t, tenant, key)

	rcv := newReceiver(t, status400)
	ep := endpointWith(t, key, rcv.URL, nil)
	publish(t, tenant, fmt.Sprintf("evt_notice_%d", time.Now().UnixNano()))
	notice := mailTo(t, address, "died", 90*time.Second)
	require.Equal(t, fmt.Sprintf("[hookline] 1 deliveries to endpoint %s died", ep), notice.Subject)
	require.Contains(t, notice.BodyText, "rejected_400")
	require.Contains(t, notice.BodyText, "/console/#dlq")
	unsub := linkIn(t, notice.BodyText, "unsubscribe")
	require.Contains(t, unsub, "id="+id)

	code, text := emailPage(t, "GET", unsub)
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, `<form method="post">`, "a GET asks first")
	code, text = emailPage(t, "POST", unsub)
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, "Unsubscribed")
	status, body := call(t, "GET", "/v1/notification-emails", key, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "unsubscribed", body["data"].([]any)[0].(map[string]any)["status"])
}

func status400(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) }

// verifiedAddress names an address of tenant's, reads its verification
// e-mail from the local cloud's SES and follows its link; it returns the
// address and its id.
func verifiedAddress(t *testing.T, tenant, key string) (address, id string) {
	t.Helper()
	address = strings.ToLower(strings.ReplaceAll(tenant, "_", "-")) + "@receiver.example"
	status, body := call(t, "POST", "/v1/notification-emails", key, map[string]any{"address": address})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.Equal(t, "pending", body["status"])
	id = body["id"].(string)

	verify := mailTo(t, address, "Confirm notices", 30*time.Second)
	require.Equal(t, "notices@hookline.local", verify.Source)
	code, text := emailPage(t, "GET", linkIn(t, verify.BodyText, "verify"))
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, "Confirmed")
	status, body = call(t, "GET", "/v1/notification-emails", key, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "verified", body["data"].([]any)[0].(map[string]any)["status"])
	return address, id
}

// An endpoint's failure-rate alert (50% of at least 2 attempts in the
// hour) against a receiver that answers 503 raises endpoint.degraded once:
// by webhook to the tenant's endpoint that names the type (signed, its
// payload the rate), and by e-mail, which the stack's rule brought from the
// operator's bus.
func TestFailureRateAlertRaisesDegraded(t *testing.T) {
	t.Parallel()
	tenant, key := apiTenant(t, "degraded")
	address, _ := verifiedAddress(t, tenant, key)
	watch := newReceiver(t, status(http.StatusOK))
	down := newReceiver(t, status(http.StatusServiceUnavailable))
	code, body := call(t, "POST", "/v1/endpoints", key, map[string]any{"url": watch.URL, "event_types": []string{"endpoint.degraded"}})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	watchSecret := body["secret"].(string)
	ep := endpointWith(t, key, down.URL, map[string]any{"failure_rate_alert": map[string]any{"threshold_percent": 50, "min_attempts": 2}})
	for i := range 2 {
		publish(t, tenant, fmt.Sprintf("evt_degraded_%d_%d", i, time.Now().UnixNano()))
	}

	mail := mailTo(t, address, "is degraded", 90*time.Second)
	require.Equal(t, fmt.Sprintf("[hookline] Endpoint %s is degraded", ep), mail.Subject)
	require.Contains(t, mail.BodyText, "100.0% of its")
	require.Contains(t, mail.BodyText, "(its alert is at 50%)")
	require.Contains(t, mail.BodyText, "http_503")

	watch.waitFor(t, 1, 60*time.Second)
	evs := ofType(opEvents(t, watch, watchSecret), "endpoint.degraded")
	require.Len(t, evs, 1, "once per episode")
	var data map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	require.Equal(t, ep, data["endpoint_id"])
	require.EqualValues(t, 100, data["failure_percent"])
	require.EqualValues(t, 50, data["threshold_percent"])
}
