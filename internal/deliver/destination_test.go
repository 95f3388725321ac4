package deliver

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/destination"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fakes/stsfake"
	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/require"
)

// recordingSender keeps every request and answers delivered.
type recordingSender struct {
	mu   sync.Mutex
	reqs []sender.Request
}

func (s *recordingSender) Send(_ context.Context, r sender.Request) sender.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	return sender.Result{Outcome: sender.Delivered, Status: 200, Latency: time.Millisecond}
}

const (
	testQueueARN = "arn:aws:sqs:us-east-1:222222222222:orders"
	testRoleARN  = "arn:aws:iam::222222222222:role/hookline"
)

// An endpoint of an AWS type is sent to its target with its role and its
// external ID opened (once per warm instance, like the signing secret),
// signed as an http endpoint is; an http endpoint's request has no
// destination.
func TestAWSEndpointRequestCarriesItsDestination(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	rs := &recordingSender{}
	f.h.Sender = rs
	ep := f.store.endpoint("t1/ep_1")
	ep.Type, ep.Target, ep.RoleARN, ep.URL = domain.TypeSQS, testQueueARN, testRoleARN, ""
	ep.SealedExternalID = f.seal(t, "t1", "ep_1", "hlx_external")
	f.store.setEndpoint(ep)

	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now), sqsMessage(t, "b", "1", f.now)))
	require.Len(t, rs.reqs, 2)
	for _, r := range rs.reqs {
		require.Equal(t, &sender.Destination{Type: domain.TypeSQS, ARN: testQueueARN, RoleARN: testRoleARN, ExternalID: "hlx_external", TenantID: "t1", EndpointID: "ep_1", ChangedAt: ep.ChangedAt()}, r.Destination)
		require.False(t, r.Destination.ChangedAt.IsZero(), "the IAM settle window counts from the endpoint's change")
		require.NotNil(t, r.Signer, "signed like an http request")
	}
	_, decrypts := f.kms.Calls()
	require.Equal(t, 2, decrypts, "the signing secret and the external ID, each opened once")
	require.Equal(t, domain.StateDelivered, mustDelivery(t, f, "a").State)

	ep.Type, ep.Target, ep.RoleARN, ep.URL, ep.SealedExternalID = "", "", "", "https://hooks.example.com/x", ""
	f.store.setEndpoint(ep)
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL + time.Second) // past the kept copy
	require.Empty(t, f.run(t, sqsMessage(t, "c", "1", f.now)))
	require.Nil(t, rs.reqs[2].Destination, "an http endpoint has none")
}

// An AWS endpoint whose external ID is missing or cannot be opened for it
// is dead untried (invalid_secret), as one whose signing secret cannot.
func TestAWSEndpointWithoutItsExternalIDIsDead(t *testing.T) {
	t.Parallel()
	for name, sealed := range map[string]func(f *fixture) string{
		"missing":            func(*fixture) string { return "" },
		"another endpoint's": func(f *fixture) string { return f.seal(t, "t1", "ep_2", "hlx_other") },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
			rs := &recordingSender{}
			f.h.Sender = rs
			ep := f.store.endpoint("t1/ep_1")
			ep.Type, ep.Target, ep.RoleARN, ep.SealedExternalID = domain.TypeSNS, "arn:aws:sns:us-east-1:222222222222:t", testRoleARN, sealed(f)
			f.store.setEndpoint(ep)
			require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
			require.Empty(t, rs.reqs, "nothing sent")
			d := mustDelivery(t, f, "a")
			require.Equal(t, domain.StateDead, d.State)
			require.Equal(t, domain.ReasonInvalidSecret, d.DeadReason)
		})
	}
}

func mustDelivery(t *testing.T, f *fixture, id string) domain.Delivery {
	t.Helper()
	d, err := f.store.Store.Delivery(context.Background(), id)
	require.NoError(t, err)
	return d
}

// goneSender answers every attempt as a receiver that asked to stop.
type goneSender struct{}

func (goneSender) Send(context.Context, sender.Request) sender.Result {
	return sender.Result{Outcome: sender.Dead, Reason: domain.ReasonEndpointGone, DisableEndpoint: domain.DisabledEndpointGone, Error: "destination_not_found"}
}

// The operational events about an AWS endpoint name its type and target
// (it has no URL).
func TestAWSEndpointOperationalEventsNameItsTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	n := f.withNotices()
	f.h.Sender = goneSender{}
	ep := f.store.endpoint("t1/ep_1")
	ep.Type, ep.Target, ep.RoleARN, ep.URL = domain.TypeEventBridge, "arn:aws:events:us-east-1:222222222222:event-bus/b", testRoleARN, ""
	ep.SealedExternalID = f.seal(t, "t1", "ep_1", "hlx_external")
	f.store.setEndpoint(ep)
	f.run(t, sqsMessage(t, "d1", "1", f.now))
	require.Equal(t, []string{domain.OpEndpointDisabled}, n.types())
	p := n.events[0].Payload.(domain.OpEndpointEvent)
	require.Equal(t, domain.TypeEventBridge, p.Type)
	require.Equal(t, ep.Target, p.Target)
	require.Empty(t, p.URL)
}

// unguardedSender answers every attempt as destination.Sender does for a
// role that accepted a wrong external ID, counting the attempts.
type unguardedSender struct{ n int }

func (s *unguardedSender) Send(context.Context, sender.Request) sender.Result {
	s.n++
	return sender.Result{Outcome: sender.Dead, Reason: domain.ReasonDestinationRoleUnguarded, DisableEndpoint: domain.DisabledRoleUnguarded, Error: "destination_role_unguarded"}
}

// An AWS endpoint whose role accepts a wrong external ID is disabled with
// that reason (the API shows it as disabled_reason), its delivery dead with
// it; later deliveries go dead as endpoint_disabled, never attempted, until
// the customer fixes the trust policy and enables the endpoint.
func TestUnguardedRoleDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	s := &unguardedSender{}
	f.h.Sender = s
	ep := f.store.endpoint("t1/ep_1")
	ep.Type, ep.Target, ep.RoleARN, ep.URL = domain.TypeSQS, testQueueARN, testRoleARN, ""
	ep.SealedExternalID = f.seal(t, "t1", "ep_1", "hlx_external")
	f.store.setEndpoint(ep)
	require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
	d := mustDelivery(t, f, "a")
	require.Equal(t, domain.StateDead, d.State)
	require.Equal(t, domain.ReasonDestinationRoleUnguarded, d.DeadReason)
	got := f.store.endpoint("t1/ep_1")
	require.True(t, got.Disabled)
	require.Equal(t, domain.DisabledRoleUnguarded, got.DisabledReason)

	f.now = f.now.Add(domain.DefaultEndpointCacheTTL + time.Second) // past the kept copy
	require.Empty(t, f.run(t, sqsMessage(t, "b", "1", f.now)))
	require.Equal(t, domain.ReasonEndpointDisabled, mustDelivery(t, f, "b").DeadReason)
	require.Equal(t, 1, s.n, "nothing attempted to a disabled endpoint")
}

// The customer's account on the fakes, for deliver's attempts through a
// real destination.Sender: STS (which knows deliver's role and, once
// added, the customer's) and the customer's queue, which takes a
// SendMessage only from a session whose role allows it.
type customerAccount struct {
	sts      *stsfake.Fake
	sqs      *sqsfake.Queue
	queueURL string
}

const (
	iamDeliverKey  = "AKIADELIVER"
	iamDeliverRole = "arn:aws:iam::111111111111:role/hookline-deliver"
	iamQueueARN    = "arn:aws:sqs:eu-west-1:222222222222:orders"
)

func newCustomerAccount(t *testing.T, f *fixture) (*customerAccount, *destination.Sender) {
	t.Helper()
	c := &customerAccount{sts: stsfake.New(stsfake.Config{})}
	c.sts.AddCaller(iamDeliverKey, stsfake.Caller{RoleARN: iamDeliverRole, Session: true})
	c.sqs = sqsfake.New(sqsfake.Config{MustExist: true, Authorize: func(key, url string) bool {
		return c.sts.Allowed(key, "sqs:SendMessage", iamQueueARN)
	}})
	srv := awsfake.Serve(t, map[string]http.Handler{"sqs": c.sqs, "sts": c.sts})
	c.queueURL = srv.URL + "/222222222222/orders"
	c.sqs.AddQueue(c.queueURL)
	s, err := destination.New(srv.Config(iamDeliverKey), destination.Options{RequestTimeout: 2 * time.Second, Now: func() time.Time { return f.now }})
	require.NoError(t, err)
	return c, s
}

// addRole makes the customer's role visible to STS, trusting deliver's
// role with the endpoint's external ID and allowed to send to the queue.
func (c *customerAccount) addRole(externalID string) {
	c.sts.AddRole(stsfake.Role{ARN: testRoleARN, Trusted: []string{iamDeliverRole}, ExternalID: externalID,
		Allow: map[string][]string{"sqs:SendMessage": {iamQueueARN}}})
}

// A customer who saves the role and registers the endpoint at once: the
// first attempts meet an AssumeRole refused (the role not yet visible to
// STS), and are retried, AWS's answer in the attempt log, instead of dead;
// once the role is visible the delivery goes through. An endpoint
// unchanged for longer than destination.SettleFor is dead at the same
// refusal, AWS's message kept.
func TestNewAWSEndpointRetriedWhileIAMSettles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	acct, s := newCustomerAccount(t, f)
	f.h.Sender = s
	ep := f.store.endpoint("t1/ep_1")
	ep.Type, ep.Target, ep.RoleARN, ep.URL = domain.TypeSQS, iamQueueARN, testRoleARN, ""
	ep.SealedExternalID = f.seal(t, "t1", "ep_1", "hlx_external")
	ep.CreatedAt = f.now.Add(-time.Minute)
	f.store.setEndpoint(ep)

	require.Empty(t, f.run(t, sqsMessage(t, "d1", "1", f.now)))
	d := mustDelivery(t, f, "d1")
	require.Equal(t, domain.StatePending, d.State, "retried, not dead")
	a := f.store.attempts["d1"][0]
	require.Equal(t, "sts:AccessDenied", a.Error)
	require.Contains(t, a.Excerpt, "not authorized to perform: sts:AssumeRole", "AWS's message kept")

	acct.addRole("hlx_external")
	require.Empty(t, f.run(t, f.dueRetry(t, "d1_again")))
	require.Equal(t, domain.StateDelivered, mustDelivery(t, f, "d1").State)
	require.Len(t, acct.sqs.Bodies(acct.queueURL), 1)

	// An endpoint last changed an hour ago: the refusal is the customer's.
	old := f.store.endpoint("t1/ep_1")
	old.EndpointID, old.RoleARN, old.CreatedAt = "ep_old", "arn:aws:iam::222222222222:role/nobody", f.now.Add(-time.Hour)
	old.SealedExternalID = f.seal(t, "t1", "ep_old", "hlx_external")
	old.SealedSecrets = []string{f.seal(t, "t1", "ep_old", f.secret)}
	f.store.setEndpoint(old)
	require.Empty(t, f.run(t, endpointMessage(t, "d2", "ep_old", "1", f.now)))
	d = mustDelivery(t, f, "d2")
	require.Equal(t, domain.StateDead, d.State)
	require.Equal(t, domain.ReasonDestinationRoleRefused, d.DeadReason)
	require.Contains(t, f.store.attempts["d2"][0].Excerpt, "not authorized", "AWS's message kept")
	require.Equal(t, []domain.DeadReason{domain.ReasonDestinationRoleRefused}, f.queue.dlqReason)
}
