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
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Queue is the delivery DLQ: the messages SQS moved there, received hidden
// for a while, deleted, or shown again, and how many are hidden.
type Queue struct {
	SQS SQS
	URL string
}

// Receive receives up to n (1 to 10) messages, hidden for hide, with the
// time each was sent (SentAt).
func (q Queue) Receive(ctx context.Context, n int, hide time.Duration) ([]sqstypes.Message, error) {
	out, err := q.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: &q.URL, MaxNumberOfMessages: int32(min(10, max(1, n))), VisibilityTimeout: int32(hide.Seconds()), WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp, sqstypes.MessageSystemAttributeNameApproximateReceiveCount},
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

// Hidden is how many of the DLQ's messages are in flight now: received by
// someone (this caller included) and hidden (SQS's
// ApproximateNumberOfMessagesNotVisible, an approximation that may lag a
// little behind the receives and deletes just made).
func (q Queue) Hidden(ctx context.Context) (int, error) {
	name := string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
	out, err := q.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.URL, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeName(name)}})
	if err != nil {
		return 0, fmt.Errorf("read the DLQ's hidden messages: %w", err)
	}
	n, err := strconv.Atoi(out.Attributes[name])
	if err != nil {
		return 0, fmt.Errorf("read the DLQ's hidden messages: %s is %q", name, out.Attributes[name])
	}
	return n, nil
}

// Counts is how many of the DLQ's messages are visible now and how many
// in flight (received by someone, this caller included, and hidden): SQS's
// ApproximateNumberOfMessages and ApproximateNumberOfMessagesNotVisible,
// in one request, approximations that may lag a little behind the
// receives and deletes just made.
func (q Queue) Counts(ctx context.Context) (visible, hidden int, err error) {
	names := []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}
	out, err := q.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.URL, AttributeNames: names})
	if err != nil {
		return 0, 0, fmt.Errorf("read the DLQ's counts: %w", err)
	}
	var n [2]int
	for i, name := range names {
		if n[i], err = strconv.Atoi(out.Attributes[string(name)]); err != nil {
			return 0, 0, fmt.Errorf("read the DLQ's counts: %s is %q", name, out.Attributes[string(name)])
		}
	}
	return n[0], n[1], nil
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
