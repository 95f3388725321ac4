//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/stretchr/testify/require"
)

// newCustomer is a customer's account on the local cloud (harness.Customer),
// deleted when the test ends.
func newCustomer(t *testing.T, name string) *harness.Customer {
	t.Helper()
	ctx := context.Background()
	c, err := (&harness.Env{AWS: env.cfg}).NewCustomer(ctx, fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1e9))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Delete(context.Background()) })
	return c
}

// The harness reads what arrives in a customer's account the way a consumer
// would: SQS and SNS messages' attributes (through a raw subscription), an
// EventBridge event's detail (through a rule). Each is sent here as a
// destination sends it (docs/destinations.md), so a destination test that
// reads nothing fails on hookline, not on the harness.
func TestCustomerHarnessReadsEachType(t *testing.T) {
	ctx := context.Background()
	c := newCustomer(t, "harness")
	attrs := map[string]string{"webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": "v1,abc",
		"hookline-event-id": "evt_1", "hookline-event-type": "order.created", "hookline-attempt": "2"}
	sqsAttrs := map[string]sqstypes.MessageAttributeValue{}
	snsAttrs := map[string]snstypes.MessageAttributeValue{}
	for k, v := range attrs {
		sqsAttrs[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		snsAttrs[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	body := `{"type":"order.created","data":{"n":1}}`
	_, err := sqs.NewFromConfig(env.cfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &c.QueueURL, MessageBody: &body, MessageAttributes: sqsAttrs})
	require.NoError(t, err)
	_, err = sns.NewFromConfig(env.cfg).Publish(ctx, &sns.PublishInput{TopicArn: &c.TopicARN, Message: &body, MessageAttributes: snsAttrs})
	require.NoError(t, err)
	detail := `{"webhook-id":"msg_1","webhook-timestamp":"1700000000","webhook-signature":"v1,abc","hookline-event-id":"evt_1",` +
		`"hookline-event-type":"order.created","hookline-attempt":2,"body":"{\"type\":\"order.created\",\"data\":{\"n\":1}}","payload":{"n":1}}`
	out, err := eventbridge.NewFromConfig(env.cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		EventBusName: &c.BusARN, Source: aws.String("hookline"), DetailType: aws.String("order.created"), Detail: &detail}}})
	require.NoError(t, err)
	require.Zero(t, out.FailedEntryCount)
	want := harness.Received{WebhookID: "msg_1", Timestamp: "1700000000", Signature: "v1,abc", EventID: "evt_1",
		EventType: "order.created", Attempt: 2, Body: body}
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		got, err := c.Receive(ctx, typ, 1, 20*time.Second)
		require.NoError(t, err, typ)
		require.Equal(t, []harness.Received{want}, got, typ)
		require.Equal(t, "msg_1", got[0].Header().Get("Webhook-Id"), typ)
	}
}
