package destination

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/stsfake"
	"github.com/hookline/hookline/internal/sender"
)

// A target that is one of hookline's own resources is dead untried,
// whatever the role would allow.
func TestOwnTargetRefused(t *testing.T) {
	w := newWorld(t)
	for typ, own := range map[domain.EndpointType]string{domain.TypeSQS: ownResources[0], domain.TypeEventBridge: ownResources[1]} {
		r := request(t, typ)
		r.Destination.ARN = own
		res := w.send(t, r)
		require.Equal(t, sender.Dead, res.Outcome)
		require.Equal(t, domain.ReasonInvalidDestination, res.Reason)
		require.Contains(t, res.Excerpt, "hookline's own")
	}
	require.Empty(t, w.srv.Requests(), "no call: not even the probe")
}

// Every session is assumed with the session policy: IAM (here the STS
// fake, which applies it as AWS does) refuses hookline's own resources to
// it and every action but the sends, even where the customer's role
// allows them.
func TestSessionPolicyNarrowsTheSession(t *testing.T) {
	w := newWorld(t)
	w.sts.AddRole(stsfake.Role{ARN: customerRole, Trusted: []string{deliverRole}, ExternalID: externalID, Allow: map[string][]string{
		"sqs:SendMessage": {queueARN, ownResources[0]}, "events:PutEvents": {"*"}, "sts:AssumeRole": {"*"},
	}})
	require.Equal(t, sender.Delivered, w.send(t, request(t, domain.TypeSQS)).Outcome)
	var key string
	for _, r := range w.srv.Requests() {
		if r.Service == "sqs" {
			key = r.AccessKey
		}
	}
	require.NotEmpty(t, key)
	require.True(t, w.sts.Allowed(key, "sqs:SendMessage", queueARN))
	require.False(t, w.sts.Allowed(key, "sqs:SendMessage", ownResources[0]), "the role allows it, the session policy denies it")
	require.False(t, w.sts.Allowed(key, "events:PutEvents", ownResources[1]))
	require.True(t, w.sts.Allowed(key, "events:PutEvents", busARN))
	require.False(t, w.sts.Allowed(key, "sts:AssumeRole", "arn:aws:iam::111111111111:role/hookline-anything"), "a session assumes nothing further")
}

// The stack's ten own targets (eight queues: delivery, lane, DLQ, enqueue
// failures, fan-out and its DLQ, the replay function's jobs and ops; the
// bus, the topic), each at the longest ARN its service allows, fit in
// STS's 2048 characters; more than fit is refused when the Sender is
// built, not at an attempt.
func TestSessionPolicyFits(t *testing.T) {
	prefix := "arn:aws-us-gov:sqs:us-gov-west-1:123456789012:"
	own := []string{}
	for range 8 {
		own = append(own, prefix+strings.Repeat("q", 80))
	}
	// A topic named by CloudFormation: <stack, at most 128>-<id>-<suffix>.
	own = append(own, "arn:aws-us-gov:events:us-gov-west-1:123456789012:event-bus/"+strings.Repeat("b", 64),
		"arn:aws-us-gov:sns:us-gov-west-1:123456789012:"+strings.Repeat("t", 180))
	p, err := sessionPolicy(own)
	require.NoError(t, err)
	require.LessOrEqual(t, len(p), MaxSessionPolicy)
	for _, a := range own {
		require.Contains(t, p, a)
	}
	_, err = New(newWorld(t).srv.Config(deliverKey), Options{OwnResources: append(own, own...)})
	require.ErrorContains(t, err, "session policy")
}
