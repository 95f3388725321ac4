package message

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/outbox"
)

// BatchSender sends up to ten messages at once.
type BatchSender interface {
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// SQS's limits on one SendMessageBatch request.
const (
	// MaxBatchEntries is the most messages one request sends.
	MaxBatchEntries = 10
	// MaxBatchBytes bounds the messages of one request together: bodies and
	// message attributes (names, types and values), 256 KiB.
	MaxBatchBytes = 256 << 10
)

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

// CheckBatch says what SQS answers to a SendMessageBatch request holding
// entries, where it refuses it: no entries, more than MaxBatchEntries,
// repeated entry ids, a body with a character SQS refuses
// (outbox.SQSAllowed), or more than MaxBatchBytes in all (EntrySize). The
// fakes of SQS in tests call it, so that every sender is held to the same
// rules as on AWS (the local cloud does not enforce them all).
func CheckBatch(entries []sqstypes.SendMessageBatchRequestEntry) error {
	if len(entries) == 0 {
		return errors.New("AWS.SimpleQueueService.EmptyBatchRequest: no entries")
	}
	if len(entries) > MaxBatchEntries {
		return fmt.Errorf("AWS.SimpleQueueService.TooManyEntriesInBatchRequest: %d entries, at most %d", len(entries), MaxBatchEntries)
	}
	ids := map[string]bool{}
	size := 0
	for _, e := range entries {
		id := aws.ToString(e.Id)
		if id == "" || ids[id] {
			return fmt.Errorf("AWS.SimpleQueueService.BatchEntryIdsNotDistinct: entry id %q", id)
		}
		ids[id] = true
		size += EntrySize(e)
		for i, r := range aws.ToString(e.MessageBody) {
			if !outbox.SQSAllowed(r) || (r == utf8.RuneError && !utf8.ValidString(aws.ToString(e.MessageBody)[i:i+1])) {
				return fmt.Errorf("AWS.SimpleQueueService.InvalidMessageContents: entry %q: character %U at byte %d", id, r, i)
			}
		}
	}
	if size > MaxBatchBytes {
		return fmt.Errorf("AWS.SimpleQueueService.BatchRequestTooLong: %d bytes, at most %d", size, MaxBatchBytes)
	}
	return nil
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
