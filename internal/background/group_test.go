package background_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/replay"
	"github.com/stretchr/testify/require"
)

// requireTenantGroups checks that every message sent to the delivery queue
// is in its tenant's message group (message.GroupID), and returns the
// groups seen, by delivery id. The fake queue already refuses any other;
// this says which group each went out in.
func requireTenantGroups(t *testing.T, e *env) map[string]string {
	t.Helper()
	groups := map[string]string{}
	for _, s := range e.q.sentTo(deliveryURL) {
		m, err := message.Decode(s.Body)
		require.NoError(t, err)
		require.Equal(t, *message.GroupID(m.TenantID), s.Group, "delivery %s", m.DeliveryID)
		groups[m.DeliveryID] = s.Group
	}
	return groups
}

// A tenant's replay sends its deliveries back in the tenant's message
// group, whatever their endpoints: a tenant id SQS would refuse as a group
// id goes out hashed.
func TestReplayedMessagesCarryTheirTenantsGroup(t *testing.T) {
	t.Parallel()
	const odd = "acme corp" // an outbox item's tenant id may hold a space
	e := newEnv(t)
	e.st.putEndpoint(domain.Endpoint{TenantID: odd, EndpointID: "ep_1"})
	at := e.t0.Add(-time.Hour)
	e.dead("g1", tenantA, "ep_1", "order.created", at)
	e.dead("g2", tenantA, "ep_2", "order.created", at)
	e.dead("g3", odd, "ep_1", "order.created", at)
	a := e.start(t, domain.Job{JobID: "rj_a", TenantID: tenantA, Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"g1", "g2"}}})
	e.run(t, e.w, a)
	o := e.start(t, domain.Job{JobID: "rj_odd", TenantID: odd, Kind: domain.KindIDs, Args: &replay.IDs{IDs: []string{"g3"}}})
	e.run(t, e.w, o)

	groups := requireTenantGroups(t, e)
	require.Equal(t, map[string]string{"g1": tenantA, "g2": tenantA, "g3": *message.GroupID(odd)}, groups,
		"the tenant's group, not the endpoint's")
	require.NotEqual(t, odd, groups["g3"])
	for _, s := range e.q.sentTo(deliveryURL) {
		require.True(t, s.Batch, "a replay sends in batches")
	}
}

// The operator's redrive sends each DLQ message back in its own tenant's
// message group: one job, many tenants.
func TestRedrivenMessagesCarryTheirTenantsGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := e.t0.Add(-time.Hour)
	e.dead("ra", tenantA, "ep_1", "order.created", old)
	e.dead("rb", tenantB, "ep_1", "order.created", old)
	e.q.addDLQ(body("ra", tenantA, "ep_1", "order.created"), old)
	e.q.addDLQ(body("rb", tenantB, "ep_1", "order.created"), old)
	job := e.start(t, domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Args: &dlq.RedriveArgs{}})
	e.clk.Advance(time.Second)
	e.run(t, e.w, job)

	require.Equal(t, map[string]string{"ra": tenantA, "rb": tenantB}, requireTenantGroups(t, e))
	for _, s := range e.q.sentTo(deliveryURL) {
		require.False(t, s.Batch, "a redrive sends one by one")
	}

	// The fake refuses a delivery message outside its tenant's group, on
	// the delivery queue and the DLQ; other queues carry no group.
	b := body("rx", tenantA, "ep_1", "order.created")
	for _, url := range []string{deliveryURL, dlqURL} {
		_, err := e.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: &b})
		require.ErrorContains(t, err, "MessageGroupId", url)
		_, err = e.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: &b, MessageGroupId: message.GroupID(tenantB)})
		require.ErrorContains(t, err, "not its tenant's", url)
	}
	_, err := e.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(jobsURL), MessageBody: aws.String(`{"job_id":"x"}`)})
	require.NoError(t, err)
}
