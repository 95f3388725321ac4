//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// The deferred fan-out queue is wired as deployed (docs/architecture.md,
// "Deferred fan-out"): the enqueue function is told of it and consumes it on
// a mapping of its own (batch 10, partial failures), and it dies to its own
// dead-letter queue after 60 receives (localfix sets that on the local
// cloud as the stack declares it).
func TestFanOutQueueWiring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.NotEmpty(t, env.out.FanOutQueueURL, "the stack outputs FanOutQueueURL")
	require.NotEmpty(t, env.out.FanOutDeadLetterQueueARN, "and FanOutDeadLetterQueueARN")

	cfg, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: &env.out.EnqueueFunctionName})
	require.NoError(t, err)
	require.NotNil(t, cfg.Environment)
	require.Equal(t, env.out.FanOutQueueURL, cfg.Environment.Variables["HOOKLINE_FANOUT_QUEUE_URL"])

	attrs, err := env.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &env.out.FanOutQueueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn, sqstypes.QueueAttributeNameRedrivePolicy}})
	require.NoError(t, err)
	fanOutARN := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	var redrive struct {
		ARN   string `json:"deadLetterTargetArn"`
		Count any    `json:"maxReceiveCount"`
	}
	require.NoError(t, json.Unmarshal([]byte(attrs.Attributes[string(sqstypes.QueueAttributeNameRedrivePolicy)]), &redrive))
	require.Equal(t, env.out.FanOutDeadLetterQueueARN, redrive.ARN, "its own DLQ, not the deliveries'")
	require.NotEqual(t, env.out.DeadLetterQueueARN, redrive.ARN)
	require.Equal(t, "60", fmt.Sprint(redrive.Count))

	out, err := env.lambda.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: &env.out.EnqueueFunctionName})
	require.NoError(t, err)
	var found []lambdatypes.EventSourceMappingConfiguration
	for _, m := range out.EventSourceMappings {
		if aws.ToString(m.EventSourceArn) == fanOutARN {
			found = append(found, m)
		}
	}
	require.Len(t, found, 1, "enqueue consumes the fan-out queue")
	require.EqualValues(t, 10, aws.ToInt32(found[0].BatchSize))
	require.Contains(t, found[0].FunctionResponseTypes, lambdatypes.FunctionResponseTypeReportBatchItemFailures)
}

// A customer's SQS endpoint may not target hookline's own fan-out queue: a
// message sent there would be fanned out as the tenant's event.
func TestFanOutQueueIsNoDestination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, key := apiTenant(t, "dest_fanout")
	attrs, err := env.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &env.out.FanOutQueueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	for _, target := range []string{attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], env.out.FanOutDeadLetterQueueARN} {
		status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{
			"type": "sqs", "target": target, "role_arn": "arn:aws:iam::000000000000:role/hookline-customer"})
		require.Equal(t, http.StatusBadRequest, status, "%v", body)
		require.Contains(t, fmt.Sprint(body["errors"]), "field:target", "%v", body)
	}
}
