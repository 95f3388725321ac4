// Package sqstest is the conformance suite of SQS as hookline uses it: the
// rules AWS enforces (batch sizes and bytes, DelaySeconds, visibility and
// the 12 h rule, message characters, entry ids, in-flight accounting) and
// the basic semantics (delay, visibility, receive count, delete). It runs on
// sqsfake.Queue (sqsfake's unit test) and on the local cloud
// (e2e/sqs_conformance_test.go), so the fake is held to the service.
package sqstest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// Client is the SQS the suite drives; *sqs.Client and *sqsfake.Queue fit.
type Client interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Target is one SQS under test.
type Target struct {
	Client Client
	// NewQueue returns the URL of a new, empty standard queue whose
	// visibility timeout is 30 s and, when InFlightLimit is set, whose
	// in-flight limit is InFlightLimit.
	NewQueue func(t *testing.T) string
	// Wait lets d pass: the fake advances its clock, the cloud sleeps.
	Wait func(d time.Duration)
	// InFlightLimit is the queue's in-flight limit when the target can set
	// a small one (the fake); zero skips the in-flight case (AWS's 120,000
	// is not reachable in a test).
	InFlightLimit int
	// Forgives names the cases the target does not enforce although AWS
	// does, with the reason: each is skipped with it. The fake forgives
	// nothing.
	Forgives map[string]string
}

type testCase struct {
	name string
	run  func(t *testing.T, tg Target, url string)
}

// Run runs every case on tg, each on a new queue.
func Run(t *testing.T, tg Target) {
	for _, c := range append(semantics(), rules()...) {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := tg.Forgives[c.name]; ok {
				t.Skip("the target forgives what AWS refuses: " + why)
			}
			c.run(t, tg, tg.NewQueue(t))
		})
	}
}

func send(t *testing.T, tg Target, url, body string, delay int32) {
	t.Helper()
	_, err := tg.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body, DelaySeconds: delay})
	require.NoError(t, err)
}

func receive(t *testing.T, tg Target, url string, n int32) []types.Message {
	t.Helper()
	out, err := tg.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: n,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
	require.NoError(t, err)
	return out.Messages
}

func receiveOne(t *testing.T, tg Target, url string) types.Message {
	t.Helper()
	msgs := receive(t, tg, url, 1)
	require.Len(t, msgs, 1, "one message received")
	return msgs[0]
}

func changeVisibility(tg Target, url string, m types.Message, seconds int32) error {
	_, err := tg.Client.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: seconds})
	return err
}

func entries(n int, body string) []types.SendMessageBatchRequestEntry {
	out := make([]types.SendMessageBatchRequestEntry, n)
	for i := range out {
		out[i] = types.SendMessageBatchRequestEntry{Id: aws.String("e" + strconv.Itoa(i)), MessageBody: aws.String(body)}
	}
	return out
}

func sendBatch(tg Target, url string, es []types.SendMessageBatchRequestEntry) (*sqs.SendMessageBatchOutput, error) {
	return tg.Client.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: es})
}

// refusedEntries reports whether the batch was refused whole or every entry
// failed: SQS answers some rules one way and some the other.
func refusedEntries(out *sqs.SendMessageBatchOutput, err error) bool {
	return err != nil || (len(out.Successful) == 0 && len(out.Failed) > 0)
}

func receiveCount(m types.Message) string {
	return m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)]
}

func big(n int) string { return strings.Repeat("x", n) }
