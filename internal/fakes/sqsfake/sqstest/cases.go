package sqstest

import (
	"context"
	"strconv"
	"time"

	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// Case names, for Target.Forgives.
const (
	CaseDelayMax           = "DelaySecondsAtMost900"
	CaseMessageBytes       = "MessageAtMost256KiB"
	CaseBatchBytes         = "BatchAtMost256KiB"
	CaseBatchEntries       = "BatchAtMost10Entries"
	CaseBatchIDs           = "BatchEntryIDsDistinctAndWellFormed"
	CaseCharacters         = "MessageCharacters"
	CaseVisibilityMax      = "VisibilityAtMost43200"
	CaseTwelveHours        = "HiddenAtMost12hFromReceive"
	CaseNotInFlight        = "ChangeVisibilityOfVisibleMessage"
	CaseInFlightLimit      = "InFlightLimit"
	CaseVisibilityBatch    = "ChangeVisibilityBatch"
	CaseDeleteBatch        = "DeleteBatch"
	CaseDelay              = "DelayHides"
	CaseVisibility         = "VisibilityAndReceiveCount"
	CaseDelete             = "DeleteRemoves"
	CaseAttributesInFlight = "AttributesCountInFlight"
	CaseSentTimestamp      = "SentTimestampIsTheSend"
	CaseAttributeCount     = "MessageAtMost10Attributes"
	CaseAttributeNames     = "MessageAttributeNameRules"
)

func semantics() []testCase {
	return []testCase{
		{CaseDelay, func(t *testing.T, b *Bundle) {
			send(t, b, "later", 2)
			require.Empty(t, receive(t, b, 10), "hidden by its delay")
			b.Wait(3 * time.Second)
			require.Equal(t, "later", aws.ToString(receiveOne(t, b).Body))
		}},
		{CaseVisibility, func(t *testing.T, b *Bundle) {
			send(t, b, "again", 0)
			m := receiveOne(t, b)
			require.Equal(t, "1", receiveCount(m))
			require.NoError(t, changeVisibility(b, m, 1))
			require.Empty(t, receive(t, b, 10), "in flight")
			b.Wait(2 * time.Second)
			require.Equal(t, "2", receiveCount(receiveOne(t, b)), "back after its visibility, counted again")
		}},
		{CaseDelete, func(t *testing.T, b *Bundle) {
			send(t, b, "gone", 0)
			out, err := b.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &b.URL, VisibilityTimeout: 1})
			require.NoError(t, err)
			require.Len(t, out.Messages, 1)
			_, err = b.Client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &b.URL, ReceiptHandle: out.Messages[0].ReceiptHandle})
			require.NoError(t, err)
			b.Wait(2 * time.Second)
			require.Empty(t, receive(t, b, 10), "deleted: not back after its visibility")
		}},
		{CaseDeleteBatch, deleteBatch},
		{CaseVisibilityBatch, visibilityBatch},
		{CaseAttributesInFlight, attributesInFlight},
		{CaseSentTimestamp, sentTimestamp},
	}
}

// sentTimestamp: SentTimestamp (ms) is when the message was sent, the same
// at every receive: two sends 2 s apart are at least 2 s apart however
// late they are received (the redrive tells the DLQ's messages older than
// its job by it).
func sentTimestamp(t *testing.T, b *Bundle) {
	send(t, b, "first", 0)
	b.Wait(2 * time.Second)
	send(t, b, "second", 0)
	b.Wait(time.Second)
	sent := map[string][]int64{}
	for range 2 {
		out, err := b.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &b.URL, MaxNumberOfMessages: 10, VisibilityTimeout: 1, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
		require.NoError(t, err)
		require.Len(t, out.Messages, 2)
		for _, m := range out.Messages {
			ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
			require.NoError(t, err, "SentTimestamp of %q", aws.ToString(m.Body))
			sent[aws.ToString(m.Body)] = append(sent[aws.ToString(m.Body)], ms)
		}
		b.Wait(2 * time.Second)
	}
	require.Equal(t, sent["first"][0], sent["first"][1], "the same at every receive")
	require.Equal(t, sent["second"][0], sent["second"][1], "the same at every receive")
	require.GreaterOrEqual(t, sent["second"][0]-sent["first"][0], int64(2000), "the send's time, not the receive's")
}

func deleteBatch(t *testing.T, b *Bundle) {
	out, err := sendBatch(b, entries(3, "b"))
	require.NoError(t, err)
	require.Len(t, out.Successful, 3)
	msgs := receive(t, b, 10)
	require.Len(t, msgs, 3)
	var es []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		es = append(es, types.DeleteMessageBatchRequestEntry{Id: aws.String("d" + string(rune('0'+i))), ReceiptHandle: m.ReceiptHandle})
	}
	del, err := b.Client.DeleteMessageBatch(context.Background(), &sqs.DeleteMessageBatchInput{QueueUrl: &b.URL, Entries: es})
	require.NoError(t, err)
	require.Len(t, del.Successful, 3)
	require.Empty(t, del.Failed)
}

func visibilityBatch(t *testing.T, b *Bundle) {
	send(t, b, "v", 0)
	m := receiveOne(t, b)
	out, err := b.Client.ChangeMessageVisibilityBatch(context.Background(), &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &b.URL,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("v0"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 1}}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	b.Wait(2 * time.Second)
	require.Len(t, receive(t, b, 10), 1, "visible again after the batch's visibility")
}

func attributesInFlight(t *testing.T, b *Bundle) {
	send(t, b, "a", 0)
	send(t, b, "b", 0)
	receiveOne(t, b)
	out, err := b.Client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &b.URL,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	require.Equal(t, "1", out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	require.Equal(t, "1", out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
}
