package dlq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS is what reading the DLQ needs of SQS (an *sqs.Client).
type SQS interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Queue is the delivery DLQ: the messages SQS moved there, received hidden
// for a while, deleted, or shown again.
type Queue struct {
	SQS SQS
	URL string
}

// Receive receives up to n (1 to 10) messages, hidden for hide, with the
// time each was sent (SentAt).
func (q Queue) Receive(ctx context.Context, n int, hide time.Duration) ([]sqstypes.Message, error) {
	out, err := q.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: &q.URL, MaxNumberOfMessages: int32(min(10, max(1, n))), VisibilityTimeout: int32(hide.Seconds()), WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from the DLQ: %w", err)
	}
	return out.Messages, nil
}

// Delete deletes a message received.
func (q Queue) Delete(ctx context.Context, m sqstypes.Message) error {
	_, err := q.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.URL, ReceiptHandle: m.ReceiptHandle})
	if err != nil {
		return fmt.Errorf("delete from the DLQ: %w", err)
	}
	return nil
}

// Show makes messages received visible again at once; a failure is left
// to their visibility timeout.
func (q Queue) Show(ctx context.Context, ms []sqstypes.Message) {
	for _, m := range ms {
		_, _ = q.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &q.URL, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
	}
}

// SentAt is when a message received was sent to the DLQ (zero if SQS did
// not say).
func SentAt(m sqstypes.Message) time.Time {
	ms, err := strconv.ParseInt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
