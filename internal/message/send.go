package message

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

// EntrySize is what an entry counts against MaxBatchBytes: its body and its
// message attributes' names, types and values.
func EntrySize(e sqstypes.SendMessageBatchRequestEntry) int {
	n := len(aws.ToString(e.MessageBody))
	for name, a := range e.MessageAttributes {
		n += len(name) + len(aws.ToString(a.DataType)) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
	}
	return n
}

// Fits reports whether e can join entries in one SendMessageBatch request
// without passing MaxBatchEntries or MaxBatchBytes. An entry always fits an
// empty batch: one too large for any is SQS's to refuse.
func Fits(entries []sqstypes.SendMessageBatchRequestEntry, e sqstypes.SendMessageBatchRequestEntry) bool {
	if len(entries) == 0 {
		return true
	}
	if len(entries) >= MaxBatchEntries {
		return false
	}
	size := EntrySize(e)
	for _, x := range entries {
		size += EntrySize(x)
	}
	return size <= MaxBatchBytes
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
