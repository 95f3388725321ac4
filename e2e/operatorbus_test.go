//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// The operator's bus receives hookline's operational events: an operator's
// rule on it (here one matching every event of source hookline) routes
// endpoint.disabled, written into the outbox as hookline's emitter writes
// it, to an SQS queue, as the documented EventBridge envelope; the
// tenant's business event written just before it never reaches the bus.
func TestOperatorBusReceivesOperationalEvents(t *testing.T) {
	ctx := context.Background()
	require.NotEmpty(t, env.out.OperatorEventBusName, "the stack exports its bus (redeploy: make deploy-local)")
	eb := eventbridge.NewFromConfig(env.cfg)
	queueURL, queueARN := operatorQueue(t)
	rule := fmt.Sprintf("e2e-operator-%d", time.Now().UnixNano())
	_, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{
		Name: aws.String(rule), EventBusName: aws.String(env.out.OperatorEventBusName),
		EventPattern: aws.String(`{"source":["hookline"]}`),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(env.out.OperatorEventBusName), Ids: []string{"queue"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rule), EventBusName: aws.String(env.out.OperatorEventBusName)})
	})
	out, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(env.out.OperatorEventBusName),
		Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(queueARN)}}})
	require.NoError(t, err)
	require.Zero(t, out.FailedEntryCount)

	rcv := newReceiver(t, status(200))
	tn := newTenant(t, rcv.URL)
	business := event(tn, "evt_business_"+tn.ID, "order.created", `{"n":1}`)
	write(t, business)
	payload := domain.OpEndpointEvent{TenantID: tn.ID, EndpointID: "ep_1", URL: rcv.URL, ConsecutiveFailures: 50,
		Reason: domain.DisableReason("consecutive_failures"), LastStatus: 503, At: time.Now().UTC().Truncate(time.Second)}
	op := outbox.Event{ID: "evt_op_" + tn.ID, OccurredAt: time.Now().UTC().Truncate(time.Second)}
	// As the emitter writes it (with its marker): outbox.Event.Item refuses a reserved type.
	item, err := opevent.Item(opevent.Event{ID: op.ID, TenantID: tn.ID, Type: domain.OpEndpointDisabled, Payload: payload, At: op.OccurredAt})
	require.NoError(t, err)
	_, err = env.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.out.OutboxTableName, Item: item})
	require.NoError(t, err)

	var envelope struct {
		Source     string                 `json:"source"`
		DetailType string                 `json:"detail-type"`
		Detail     enqueue.OperatorDetail `json:"detail"`
	}
	var others []string
	deadline := time.Now().Add(60 * time.Second)
	for envelope.Detail.ID != op.ID {
		require.True(t, time.Now().Before(deadline), "the operational event did not reach the queue in 60s (other messages: %v)", others)
		msgs, err := env.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 5})
		require.NoError(t, err)
		for _, m := range msgs.Messages {
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &envelope), aws.ToString(m.Body))
			if envelope.Detail.ID != op.ID {
				others = append(others, envelope.Detail.ID)
			}
			if envelope.Detail.ID == op.ID {
				break
			}
		}
	}
	require.Equal(t, enqueue.EventSource, envelope.Source)
	require.Equal(t, domain.OpEndpointDisabled, envelope.DetailType)
	require.Equal(t, tn.ID, envelope.Detail.TenantID)
	require.Equal(t, domain.OpEndpointDisabled, envelope.Detail.Type)
	require.True(t, op.OccurredAt.Equal(envelope.Detail.OccurredAt))
	var got domain.OpEndpointEvent
	require.NoError(t, json.Unmarshal(envelope.Detail.Data, &got))
	require.Equal(t, payload, got, "data is the payload, unchanged")
	require.NotContains(t, others, business.ID, "a business event never reaches the operator's bus")
}

// operatorQueue is a fresh SQS queue, with the policy AWS requires for an
// EventBridge target (the local cloud does not check it), deleted after
// the test.
func operatorQueue(t *testing.T) (url, arn string) {
	t.Helper()
	ctx := context.Background()
	q, err := env.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("e2e-operator-%d", time.Now().UnixNano()))})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = env.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	attrs, err := env.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	arn = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage","Resource":%q}]}`, arn)
	_, err = env.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: q.QueueUrl, Attributes: map[string]string{"Policy": policy}})
	require.NoError(t, err)
	return *q.QueueUrl, arn
}
