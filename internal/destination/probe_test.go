package destination

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/stsfake"
	"github.com/hookline/hookline/internal/sender"
)

// unguardedRole replaces the customer's role with one whose trust policy
// names hookline's deliver role but has no sts:ExternalId condition: STS
// grants it with any external ID, as AWS does.
func (w *world) unguardedRole() {
	w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, Allow: map[string][]string{
		"sqs:SendMessage": {queueARN}, "sns:Publish": {topicARN}, "events:PutEvents": {busARN},
	}})
}

// guardedRole puts back the role that requires the endpoint's external ID.
func (w *world) guardedRole() {
	w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{
		"sqs:SendMessage": {queueARN}, "sns:Publish": {topicARN}, "events:PutEvents": {busARN},
	}})
}

// A role that accepts a wrong external ID is refused before anything is
// sent: the attempt is dead (destination_role_unguarded) and disables the
// endpoint. The answer is remembered for RefusedFor; once the customer
// adds the condition, the next probe is refused and deliveries flow.
func TestUnguardedRoleRefused(t *testing.T) {
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		t.Run(string(typ), func(t *testing.T) {
			w := newWorld(t)
			now := time.Now()
			w.s.o.Now = func() time.Time { return now }
			w.unguardedRole()
			res := w.send(t, request(t, typ))
			require.Equal(t, sender.Dead, res.Outcome)
			require.Equal(t, domain.ReasonDestinationRoleUnguarded, res.Reason)
			require.Equal(t, domain.DisabledRoleUnguarded, res.DisableEndpoint)
			require.Contains(t, res.Excerpt, "sts:ExternalId")
			require.Equal(t, 1, w.calls("sts"), "the probe only: no session is assumed")
			require.Zero(t, w.calls("sqs")+w.calls("sns")+w.calls("events"), "nothing is sent")

			require.Equal(t, domain.ReasonDestinationRoleUnguarded, w.send(t, request(t, typ)).Reason)
			require.Equal(t, 1, w.calls("sts"), "remembered for RefusedFor")

			w.guardedRole()
			now = now.Add(RefusedFor)
			require.Equal(t, sender.Delivered, w.send(t, request(t, typ)).Outcome)
			require.Equal(t, 3, w.calls("sts"), "probed again, refused; then the session")
		})
	}
}

// A role that requires its external ID costs one probe per warm instance:
// the probe's external ID is not the endpoint's (the role refuses it),
// and later attempts neither probe nor assume again.
func TestGuardedRoleProbedOnce(t *testing.T) {
	w := newWorld(t)
	for range 5 {
		require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	}
	require.Equal(t, 2, w.calls("sts"), "one probe and one session for five attempts")
	require.Equal(t, 5, w.calls("sqs"))
}

// A test event probes the role again, however it was found before: a
// customer who loosened the trust policy since is caught by the test.
func TestTestEventProbesAgain(t *testing.T) {
	w := newWorld(t)
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	r := request(t, domain.TypeSQS)
	r.EventType = domain.TestEventType
	require.Equal(t, sender.Delivered, w.send(t, r).Outcome)
	require.Equal(t, 3, w.calls("sts"), "the test event's own probe")

	w.unguardedRole()
	res := w.send(t, r)
	require.Equal(t, domain.ReasonDestinationRoleUnguarded, res.Reason)
	require.Equal(t, domain.DisabledRoleUnguarded, res.DisableEndpoint)
	require.Equal(t, 2, w.calls("sqs"), "the unguarded role's test event is not sent")
}

// NoProbe (a cloud that evaluates no trust policy) sends to any role the
// session is granted for.
func TestNoProbe(t *testing.T) {
	w := newWorld(t)
	w.s.o.NoProbe = true
	w.unguardedRole()
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	require.Equal(t, 1, w.calls("sts"))
}
