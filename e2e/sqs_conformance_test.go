//go:build e2e

package e2e

import (
	"context"
	"fmt"
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
	ctx := context.Background()
	sqstest.Run(t, sqstest.Target{
		Client: env.sqs,
		NewQueue: func(t *testing.T) string {
			name := fmt.Sprintf("sqstest-%d", time.Now().UnixNano())
			out, err := env.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
				Attributes: map[string]string{"VisibilityTimeout": "30"}})
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = env.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
			return *out.QueueUrl
		},
		Wait:     time.Sleep,
		Forgives: localCloudForgives,
	})
}

// localCloudForgives are the SQS rules ministack is documented not to
// enforce (the team's list of AWS rules the local cloud forgives: the 12 h
// rule and DelaySeconds at most 900); the fake enforces each. Not yet
// checked on the pinned ministack 1.5.33: a case listed here that the local
// cloud does enforce should be dropped from the list, and one it fails
// added with its reason.
var localCloudForgives = map[string]string{
	sqstest.CaseTwelveHours: "ministack does not refuse a visibility past 12 h from the receive",
	sqstest.CaseDelayMax:    "ministack accepts DelaySeconds above 900",
}
