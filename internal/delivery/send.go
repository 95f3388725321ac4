package delivery

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// BatchSender sends up to ten messages at once.
type BatchSender interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// SendBatch sends entries (at most ten) to queueURL and fails if any of them
// was not accepted, naming the first, so the caller retries the batch.
func SendBatch(ctx context.Context, c BatchSender, queueURL string, entries []sqstypes.SendMessageBatchRequestEntry) error {
	if len(entries) == 0 {
		return nil
	}
	out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &queueURL, Entries: entries})
	if err != nil {
		return fmt.Errorf("send %d delivery messages: %w", len(entries), err)
	}
	if len(out.Failed) > 0 {
		f := out.Failed[0]
		return fmt.Errorf("send delivery message %s: %s: %s", aws.ToString(f.Id), aws.ToString(f.Code), aws.ToString(f.Message))
	}
	return nil
}
