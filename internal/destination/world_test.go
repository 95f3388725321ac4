package destination

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/ebfake"
	"github.com/hookline/hookline/internal/fakes/snsfake"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fakes/stsfake"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
)

// The test's accounts: hookline's deliver function runs in 111111111111,
// the customer's queue, topic, bus and role are in 222222222222.
const (
	deliverKey   = "AKIADELIVER"
	deliverRole  = "arn:aws:iam::111111111111:role/hookline-deliver"
	customerRole = "arn:aws:iam::222222222222:role/hookline-delivery"
	externalID   = "hookline-ext-0123456789abcdef"
	queueARN     = "arn:aws:sqs:eu-west-1:222222222222:orders"
	topicARN     = "arn:aws:sns:eu-west-1:222222222222:hooks"
	busARN       = "arn:aws:events:eu-west-1:222222222222:event-bus/hooks"
	secret       = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	// endpointID is the test's endpoint, as hookline names them.
	endpointID = "ep_abcdefghij234567"
)

// world is hookline and the customer's account, on the fakes.
type world struct {
	srv      *awsfake.Server
	sqs      *sqsfake.Queue
	sns      *snsfake.Fake
	eb       *ebfake.Fake
	sts      *stsfake.Fake
	s        *Sender
	queueURL string
	// fail scripts the services' and STS's answers: by operation
	// ("SendMessage", "Publish", "PutEvents", "AssumeRole").
	fail map[string]error
	// failEntry, when set, fails each PutEvents entry with this code.
	failEntry string
	// delay stalls every scripted answer.
	delay time.Duration
}

func newWorld(t *testing.T, opts ...func(*stsfake.Config)) *world {
	w := &world{fail: map[string]error{}}
	failing := func(op string) error {
		time.Sleep(w.delay)
		return w.fail[op]
	}
	stsCfg := stsfake.Config{Fail: func(string) error { return failing("AssumeRole") }}
	for _, o := range opts {
		o(&stsCfg)
	}
	w.sts = stsfake.New(stsCfg)
	w.sts.AddCaller(deliverKey, stsfake.Caller{RoleARN: deliverRole, Session: true})
	w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{
		"sqs:SendMessage": {queueARN}, "sns:Publish": {topicARN}, "events:PutEvents": {busARN},
	}})
	w.sqs = sqsfake.New(sqsfake.Config{MustExist: true,
		Fail: func(op, _ string) error { return failing(op) },
		Authorize: func(key, url string) bool {
			// The fake's queue URLs are SERVER/ACCOUNT/NAME, in eu-west-1.
			p := strings.Split(url, "/")
			return w.sts.Allowed(key, "sqs:SendMessage", "arn:aws:sqs:eu-west-1:"+p[len(p)-2]+":"+p[len(p)-1])
		}})
	w.sns = snsfake.New(snsfake.Config{Fail: func(string) error { return failing("Publish") },
		Authorize: func(key, arn string) bool { return w.sts.Allowed(key, "sns:Publish", arn) }})
	w.eb = ebfake.New(ebfake.Config{Fail: func() error { return failing("PutEvents") },
		FailEntry: func(ebfake.Entry) (string, string) { return w.failEntry, "scripted" },
		Authorize: func(key, arn string) bool { return w.sts.Allowed(key, "events:PutEvents", arn) }})
	w.srv = awsfake.Serve(t, map[string]http.Handler{"sqs": w.sqs, "sns": w.sns, "events": w.eb, "sts": w.sts})
	w.queueURL = w.srv.URL + "/222222222222/orders"
	w.sqs.AddQueue(w.queueURL)
	w.sns.AddTopic(topicARN)
	w.eb.AddBus(busARN)
	w.s = mustNew(t, w.srv.Config(deliverKey), Options{RequestTimeout: 2 * time.Second, OwnResources: ownResources})
	return w
}

// ownResources are hookline's own queue and bus in the tests, in its
// account.
var ownResources = []string{"arn:aws:sqs:eu-west-1:111111111111:Hookline-Delivery", "arn:aws:events:eu-west-1:111111111111:event-bus/operator"}

func mustNew(t *testing.T, cfg aws.Config, o Options) *Sender {
	t.Helper()
	s, err := New(cfg, o)
	require.NoError(t, err)
	return s
}

// request is an attempt to typ's destination of the test.
func request(t *testing.T, typ domain.EndpointType) sender.Request {
	signer, err := signing.NewSigner(secret)
	require.NoError(t, err)
	arn := map[domain.EndpointType]string{domain.TypeSQS: queueARN, domain.TypeSNS: topicARN, domain.TypeEventBridge: busARN}[typ]
	return sender.Request{
		DeliveryID: "dlv_0123", EventID: "evt_1", EventType: "order.created", Attempt: 2, Signer: signer,
		Body:        []byte(`{"id":"evt_1","type":"order.created","timestamp":"2026-12-03T08:00:00Z","data":{"country":"DE","note":"<&>"}}`),
		Destination: &sender.Destination{Type: typ, ARN: arn, RoleARN: customerRole, ExternalID: externalID, TenantID: "tn_a", EndpointID: endpointID},
		TraceParent: testTraceParent,
	}
}

// testTraceParent is request's trace context.
const testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func (w *world) send(t *testing.T, r sender.Request) sender.Result {
	t.Helper()
	return w.s.Send(context.Background(), r)
}

// calls counts the requests the fakes received for service.
func (w *world) calls(service string) int {
	n := 0
	for _, s := range w.srv.Requests() {
		if s.Service == service {
			n++
		}
	}
	return n
}
