//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/stretchr/testify/require"
)

// The delivery queues redrive to the DLQ's arrivals, not to the DLQ (issue
// 37: a DLQ that SQS fed directly was received in full by every 5-minute
// sweep), and the scheduled sweep, run by the deployed replay function,
// moves an arrival to the DLQ after recording the death its attempt did
// not: here a delivery whose every attempt stopped before it could write a
// record, as SQS's redrive leaves it.
func TestRedriveArrivalsAreSweptIntoTheDLQ(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.NotEmpty(t, env.out.DeadLetterArrivalsQueueARN, "the stack outputs DeadLetterArrivalsQueueARN")
	for _, url := range env.out.DeliverQueueURLs() {
		attrs, err := env.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameRedrivePolicy}})
		require.NoError(t, err)
		var redrive struct {
			ARN string `json:"deadLetterTargetArn"`
		}
		require.NoError(t, json.Unmarshal([]byte(attrs.Attributes[string(sqstypes.QueueAttributeNameRedrivePolicy)]), &redrive))
		require.Equal(t, env.out.DeadLetterArrivalsQueueARN, redrive.ARN, "%s redrives to the arrivals", url)
	}
	name := env.out.DeadLetterArrivalsQueueARN[strings.LastIndexByte(env.out.DeadLetterArrivalsQueueARN, ':')+1:]
	q, err := env.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &name})
	require.NoError(t, err)
	arrivals := aws.ToString(q.QueueUrl)

	tenantID, key := apiTenant(t, "arrivals")
	rcv, _ := failingUntilUp(t, http.StatusServiceUnavailable)
	ep, _ := apiEndpoint(t, key, rcv.URL+"/x")
	eventID := fmt.Sprintf("evt_arrival_%d", time.Now().UnixNano())
	at := time.Now().UTC()
	id := domain.DeliveryID(tenantID, eventID, ep, at)
	body, err := json.Marshal(message.Message{DeliveryID: id, TenantID: tenantID, EndpointID: ep, EventID: eventID,
		EventType: "order.created", OccurredAt: at, Payload: json.RawMessage(`{"order":1}`)})
	require.NoError(t, err)
	_, err = env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &arrivals, MessageBody: aws.String(string(body)), MessageGroupId: message.GroupID(tenantID)})
	require.NoError(t, err)

	// A sweep (the schedule's, every 5 minutes, also reconciles the depth
	// counters, which TestDepthReconciliationCorrectsADriftedCounter must
	// see itself); other tests' sweeps may move it first.
	ev, err := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "sweep-arrivals", Body: `{"sweep":true}`}}})
	require.NoError(t, err)
	out, err := env.lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: &env.out.ReplayFunctionName, Payload: ev, LogType: lambdatypes.LogTypeTail})
	require.NoError(t, err)
	require.Nil(t, out.FunctionError, "%s", out.Payload)
	logs, err := base64.StdEncoding.DecodeString(aws.ToString(out.LogResult))
	require.NoError(t, err)
	require.Contains(t, string(logs), "DLQ arrivals moved")

	// Another sweep (the schedule's, another test's) may have it in hand.
	var d domain.Delivery
	require.Eventually(t, func() bool {
		d, err = env.store.Delivery(ctx, id)
		return err == nil && d.State == domain.StateDead
	}, 10*time.Second, 200*time.Millisecond, "the sweep recorded the death, from the message")
	require.Equal(t, domain.ReasonAttemptsExhausted, d.DeadReason)
	require.Equal(t, "death_not_recorded", d.AttemptLog[len(d.AttemptLog)-1].Error)
	require.JSONEq(t, string(body), d.Message, "replayable from its record")

	// Gone from the arrivals: a receive that hides nothing finds none of
	// this tenant's messages.
	got, err := env.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &arrivals, MaxNumberOfMessages: 10, VisibilityTimeout: 0})
	require.NoError(t, err)
	for _, m := range got.Messages {
		require.NotContains(t, aws.ToString(m.Body), id, "moved, not left")
	}
	// And listed in the tenant's DLQ.
	status, list := call(t, "GET", "/v1/dlq", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	require.Contains(t, fmt.Sprint(list), id)
}
