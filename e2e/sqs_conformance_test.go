//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/fakes/sqsfake/sqstest"
	"github.com/stretchr/testify/require"
)

// SQS's conformance suite (package sqstest) on the local cloud, on queues
// of its own: the same cases the fake of SQS (sqsfake), which the unit
// tests use, passes. A case the local cloud forgives although AWS refuses
// is named in Forgives with the reason and skipped here only: the fake is
// the stricter one, and the suite holds it to AWS's rule.
func TestSQSConformance(t *testing.T) {
	t.Parallel()
	sqstest.Run(t, sqstest.Target{
		Setup: func(ctx context.Context, t *testing.T) *sqstest.Bundle {
			// Cases start together: the counter keeps their queues apart.
			name := fmt.Sprintf("sqstest-%d-%d", time.Now().UnixNano(), sqsQueues.Add(1))
			out, err := env.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
				Attributes: map[string]string{"VisibilityTimeout": "30"}})
			require.NoError(t, err)
			// The case's context is done when its cleanups run.
			t.Cleanup(func() {
				_, _ = env.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
			})
			return &sqstest.Bundle{Client: env.sqs, URL: *out.QueueUrl, Wait: time.Sleep}
		},
		Forgives: localCloudForgives,
	})
}

// sqsQueues counts the conformance suite's queues.
var sqsQueues atomic.Int64

// localCloudForgives are the SQS rules the pinned ministack (1.5.33) does
// not enforce, measured by running the suite on it with nothing forgiven;
// the fake enforces each, so the unit tests hold the product to them.
var localCloudForgives = map[string]string{
	sqstest.CaseDelayMax:      "ministack accepts DelaySeconds 901",
	sqstest.CaseMessageBytes:  "ministack accepts a message of 256 KiB + 1 byte",
	sqstest.CaseBatchBytes:    "ministack accepts a batch of 256 KiB + 1 byte",
	sqstest.CaseVisibilityMax: "ministack accepts VisibilityTimeout 43201",
	sqstest.CaseTwelveHours:   "ministack does not refuse a visibility past 12 h from the receive",
	sqstest.CaseNotInFlight:   "ministack changes the visibility of a message no longer in flight",
	// First measured by e2e/destcloud's former TestLocalCloudForgives (11 attributes and
	// an "AWS." name accepted).
	sqstest.CaseAttributeCount: "ministack accepts 11 message attributes",
	sqstest.CaseAttributeNames: "ministack accepts an attribute named AWS.reserved",
}
