// Package sqstest is the conformance suite of SQS as hookline uses it: the
// rules AWS enforces (batch sizes and bytes, DelaySeconds, visibility and
// the 12 h rule, message characters, entry ids, in-flight accounting) and
// the basic semantics (delay, visibility, receive count, delete). It runs on
// sqsfake.Queue (sqsfake's unit test) and on the local cloud
// (e2e/sqs_conformance_test.go), so the fake is held to the service. Every
// case runs in parallel on a bundle of its own (Target.Setup).
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

// Bundle is what one case runs on: a client and a new, empty standard
// queue of its own, whose visibility timeout is 30 s, and a clock of its
// own where the target has one (the fake), so that cases run in parallel
// without seeing each other's messages or time.
type Bundle struct {
	Client Client
	// URL is the case's queue.
	URL string
	// Wait lets d pass for this case: the fake advances the case's clock,
	// the cloud sleeps.
	Wait func(d time.Duration)
	// InFlightLimit is the queue's in-flight limit when the target can set
	// a small one (the fake); zero skips the in-flight case (AWS's 120,000
	// is not reachable in a test).
	InFlightLimit int
}

// Target is one SQS under test.
type Target struct {
	// Setup returns a fresh bundle for one case, called once per case
	// (river's riverdrivertest setup(ctx, t)); it cleans up through
	// t.Cleanup.
	Setup func(ctx context.Context, t *testing.T) *Bundle
	// Forgives names the cases the target does not enforce although AWS
	// does, with the reason: each is skipped with it. The fake forgives
	// nothing.
	Forgives map[string]string
}

type testCase struct {
	name string
	run  func(t *testing.T, b *Bundle)
}

// Run runs every case on tg, each in parallel on a bundle of its own.
func Run(t *testing.T, tg Target) {
	for _, c := range append(semantics(), rules()...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if why, ok := tg.Forgives[c.name]; ok {
				t.Skip("the target forgives what AWS refuses: " + why)
			}
			c.run(t, tg.Setup(t.Context(), t))
		})
	}
}

func send(t *testing.T, b *Bundle, body string, delay int32) {
	t.Helper()
	_, err := b.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.URL, MessageBody: &body, DelaySeconds: delay})
	require.NoError(t, err)
}

func receive(t *testing.T, b *Bundle, n int32) []types.Message {
	t.Helper()
	out, err := b.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &b.URL, MaxNumberOfMessages: n,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
	require.NoError(t, err)
	return out.Messages
}

func receiveOne(t *testing.T, b *Bundle) types.Message {
	t.Helper()
	msgs := receive(t, b, 1)
	require.Len(t, msgs, 1, "one message received")
	return msgs[0]
}

func changeVisibility(b *Bundle, m types.Message, seconds int32) error {
	_, err := b.Client.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &b.URL, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: seconds})
	return err
}

func entries(n int, body string) []types.SendMessageBatchRequestEntry {
	out := make([]types.SendMessageBatchRequestEntry, n)
	for i := range out {
		out[i] = types.SendMessageBatchRequestEntry{Id: aws.String("e" + strconv.Itoa(i)), MessageBody: aws.String(body)}
	}
	return out
}

func sendBatch(b *Bundle, es []types.SendMessageBatchRequestEntry) (*sqs.SendMessageBatchOutput, error) {
	return b.Client.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: &b.URL, Entries: es})
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
