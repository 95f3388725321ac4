package destination

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/verify"
)

// verifies checks attrs (webhook-id, -timestamp, -signature) sign body, with
// the receivers' verify module.
func verifies(t *testing.T, attrs map[string]string, body string) {
	t.Helper()
	v, err := verify.New(secret)
	require.NoError(t, err)
	h := http.Header{}
	for _, name := range []string{AttrID, AttrTimestamp, AttrSignature} {
		h.Set(name, attrs[name])
	}
	require.NoError(t, v.Verify(h, []byte(body)))
}

func TestSendSQS(t *testing.T) {
	w := newWorld(t)
	r := request(t, domain.TypeSQS)
	res := w.send(t, r)
	require.Equal(t, sender.Delivered, res.Outcome, "%+v", res)
	require.Positive(t, res.Latency)
	msgs := w.sqs.Messages(w.queueURL)
	require.Len(t, msgs, 1)
	require.Equal(t, string(r.Body), msgs[0].Body, "the exact signed bytes")
	attrs := map[string]string{}
	for name, v := range msgs[0].Attributes {
		require.Equal(t, "String", *v.DataType)
		attrs[name] = *v.StringValue
	}
	require.Equal(t, map[string]string{AttrID: "dlv_0123", AttrTimestamp: attrs[AttrTimestamp], AttrSignature: attrs[AttrSignature],
		AttrEventID: "evt_1", AttrEventType: "order.created", AttrAttempt: "2", AttrTraceParent: testTraceParent}, attrs)
	verifies(t, attrs, msgs[0].Body)
	require.Empty(t, w.sqs.Refusals())
	// Sent with the role's credentials, in the queue's region.
	last := w.srv.Requests()[len(w.srv.Requests())-1]
	role, ok := w.sts.Principal(last.AccessKey)
	require.True(t, ok)
	require.Equal(t, customerRole, role)
	require.Equal(t, "eu-west-1", last.Region)
}

func TestSendSNS(t *testing.T) {
	w := newWorld(t)
	r := request(t, domain.TypeSNS)
	res := w.send(t, r)
	require.Equal(t, sender.Delivered, res.Outcome, "%+v", res)
	msgs := w.sns.Published(topicARN)
	require.Len(t, msgs, 1)
	require.Equal(t, string(r.Body), msgs[0].Body)
	attrs := map[string]string{}
	for name, v := range msgs[0].Attributes {
		attrs[name] = v.Value
	}
	require.Len(t, attrs, 7, "within SNS's ten")
	require.Equal(t, "dlv_0123", attrs[AttrID])
	require.Equal(t, testTraceParent, attrs[AttrTraceParent])
	verifies(t, attrs, msgs[0].Body)
	role, _ := w.sts.Principal(msgs[0].AccessKey)
	require.Equal(t, customerRole, role)
}

func TestSendEventBridge(t *testing.T) {
	w := newWorld(t)
	r := request(t, domain.TypeEventBridge)
	res := w.send(t, r)
	require.Equal(t, sender.Delivered, res.Outcome, "%+v", res)
	evs := w.eb.Events(busARN)
	require.Len(t, evs, 1)
	require.Equal(t, Source, evs[0].Source)
	require.Equal(t, "order.created", evs[0].DetailType)
	require.NotNil(t, evs[0].Time)
	var d struct {
		Detail
		Payload map[string]any `json:"payload"`
	}
	require.NoError(t, json.Unmarshal([]byte(evs[0].Detail), &d))
	require.Equal(t, string(r.Body), d.Body, "the exact signed string")
	require.Equal(t, "DE", d.Payload["data"].(map[string]any)["country"], "the body as JSON, for rules")
	require.Equal(t, "evt_1", d.EventID)
	require.Equal(t, "2", d.Attempt)
	require.Equal(t, testTraceParent, d.TraceParent)
	verifies(t, map[string]string{AttrID: d.ID, AttrTimestamp: d.Timestamp, AttrSignature: d.Signature}, d.Body)
	role, _ := w.sts.Principal(evs[0].AccessKey)
	require.Equal(t, customerRole, role)
}

// A session is assumed once and reused; another external ID is another
// session.
func TestSessionCached(t *testing.T) {
	w := newWorld(t)
	for range 3 {
		require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
		require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSNS)).Outcome)
	}
	require.Equal(t, 2, w.sts.Calls(), "the role's probe and its session, once each")
	r := request(t, domain.TypeSQS)
	r.Destination.ExternalID = "another-external-id"
	res := w.send(t, r)
	require.Equal(t, sender.Dead, res.Outcome)
	require.Equal(t, domain.ReasonDestinationRoleRefused, res.Reason)
	require.Equal(t, 3, w.sts.Calls(), "the role's probe is remembered")
}

func TestRolesBounded(t *testing.T) {
	rs := newRoles(2, 2)
	made := 0
	mk := func() *aws.CredentialsCache { made++; return nil }
	a, b, c := roleKey{tenant: "t", role: "a", externalID: "x"}, roleKey{tenant: "t", role: "b", externalID: "x"}, roleKey{tenant: "t", role: "c", externalID: "x"}
	rs.get(a, mk)
	rs.get(b, mk)
	rs.get(a, mk) // a is now the most recently used
	rs.get(c, mk) // b is forgotten
	require.Equal(t, 3, made)
	rs.get(a, mk)
	require.Equal(t, 3, made, "a is kept")
	rs.get(b, mk)
	require.Equal(t, 4, made, "b was forgotten")
	require.Equal(t, 2, rs.ll.Len())
}

func TestPayloadTooLarge(t *testing.T) {
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		t.Run(string(typ), func(t *testing.T) {
			w := newWorld(t)
			r := request(t, typ)
			r.Body = []byte(`{"data":"` + strings.Repeat("x", MaxMessageBytes) + `"}`)
			res := w.send(t, r)
			require.Equal(t, sender.Dead, res.Outcome)
			require.Equal(t, domain.ReasonPayloadTooLarge, res.Reason)
			require.Empty(t, w.srv.Requests(), "refused before any call, STS's included")
		})
	}
}

// The largest message the sender sends is at the limit as AWS counts it
// (the fakes' counting): the sender refuses nothing AWS takes, and sends
// nothing AWS refuses.
func TestPayloadAtLimit(t *testing.T) {
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		t.Run(string(typ), func(t *testing.T) {
			w := newWorld(t)
			r := request(t, typ)
			body := func(pad int) []byte { return []byte(`{"data":"` + strings.Repeat("x", pad) + `"}`) }
			lo, hi := 0, MaxMessageBytes // lo is sent, hi is refused
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				r.Body = body(mid)
				if w.send(t, r).Reason == domain.ReasonPayloadTooLarge {
					hi = mid
				} else {
					lo = mid
				}
			}
			r.Body = body(lo)
			require.Equal(t, sender.Delivered, w.send(t, r).Outcome)
			require.GreaterOrEqual(t, lastSize(t, w, typ), MaxMessageBytes-1, "one more byte would not fit")
			require.LessOrEqual(t, lastSize(t, w, typ), MaxMessageBytes)
		})
	}
}

// lastSize is the size of the last message typ's fake took, as AWS counts.
func lastSize(t *testing.T, w *world, typ domain.EndpointType) int {
	switch typ {
	case domain.TypeSQS:
		m := w.sqs.Messages(w.queueURL)
		last := m[len(m)-1]
		n := len(last.Body)
		for name, v := range last.Attributes {
			n += len(name) + len(*v.DataType) + len(*v.StringValue)
		}
		return n
	case domain.TypeSNS:
		m := w.sns.Published(topicARN)
		last := m[len(m)-1]
		n := len(last.Body)
		for name, v := range last.Attributes {
			n += len(name) + len(v.DataType) + len(v.Value)
		}
		return n
	}
	e := w.eb.Events(busARN)
	return e[len(e)-1].Size()
}

// One tenant bringing more roles than its share forgets its own sessions,
// never another tenant's: the others' sessions stay kept (no AssumeRole
// again for them), and the cache holds at most the share of that tenant.
func TestRolesBoundedPerTenant(t *testing.T) {
	rs := newRoles(10, 3)
	made := map[string]int{}
	mk := func(tenant string) func() *aws.CredentialsCache {
		return func() *aws.CredentialsCache { made[tenant]++; return nil }
	}
	quiet := []roleKey{{tenant: "quiet", role: "q1", externalID: "x"}, {tenant: "quiet", role: "q2", externalID: "x"}}
	for _, k := range quiet {
		rs.get(k, mk("quiet"))
	}
	for i := range 50 { // the noisy tenant's 50 roles, each used once
		rs.get(roleKey{tenant: "noisy", role: fmt.Sprintf("n%d", i), externalID: "x"}, mk("noisy"))
	}
	require.Equal(t, 3, rs.held["noisy"], "the noisy tenant holds its share")
	require.Equal(t, 5, rs.ll.Len())
	for _, k := range quiet {
		rs.get(k, mk("quiet"))
	}
	require.Equal(t, 2, made["quiet"], "the quiet tenant's sessions were kept: no new AssumeRole")
	require.Equal(t, 50, made["noisy"])

	// Within its share, a tenant's sessions are reused.
	for range 3 {
		for i := 47; i < 50; i++ {
			rs.get(roleKey{tenant: "noisy", role: fmt.Sprintf("n%d", i), externalID: "x"}, mk("noisy"))
		}
	}
	require.Equal(t, 50, made["noisy"], "the three newest were kept")

	// The bound in all still holds over many tenants, each within its share.
	for i := range 20 {
		rs.get(roleKey{tenant: fmt.Sprintf("t%d", i), role: "r", externalID: "x"}, mk("many"))
	}
	require.Equal(t, 10, rs.ll.Len())
	sum := 0
	for _, n := range rs.held {
		sum += n
	}
	require.Equal(t, 10, sum, "held counts what is kept")
}
