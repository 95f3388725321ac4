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
		{CaseDelay, func(t *testing.T, tg Target, url string) {
			send(t, tg, url, "later", 2)
			require.Empty(t, receive(t, tg, url, 10), "hidden by its delay")
			tg.Wait(3 * time.Second)
			require.Equal(t, "later", aws.ToString(receiveOne(t, tg, url).Body))
		}},
		{CaseVisibility, func(t *testing.T, tg Target, url string) {
			send(t, tg, url, "again", 0)
			m := receiveOne(t, tg, url)
			require.Equal(t, "1", receiveCount(m))
			require.NoError(t, changeVisibility(tg, url, m, 1))
			require.Empty(t, receive(t, tg, url, 10), "in flight")
			tg.Wait(2 * time.Second)
			require.Equal(t, "2", receiveCount(receiveOne(t, tg, url)), "back after its visibility, counted again")
		}},
		{CaseDelete, func(t *testing.T, tg Target, url string) {
			send(t, tg, url, "gone", 0)
			out, err := tg.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 1})
			require.NoError(t, err)
			require.Len(t, out.Messages, 1)
			_, err = tg.Client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: out.Messages[0].ReceiptHandle})
			require.NoError(t, err)
			tg.Wait(2 * time.Second)
			require.Empty(t, receive(t, tg, url, 10), "deleted: not back after its visibility")
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
func sentTimestamp(t *testing.T, tg Target, url string) {
	send(t, tg, url, "first", 0)
	tg.Wait(2 * time.Second)
	send(t, tg, url, "second", 0)
	tg.Wait(time.Second)
	sent := map[string][]int64{}
	for range 2 {
		out, err := tg.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, VisibilityTimeout: 1, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
		require.NoError(t, err)
		require.Len(t, out.Messages, 2)
		for _, m := range out.Messages {
			ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
			require.NoError(t, err, "SentTimestamp of %q", aws.ToString(m.Body))
			sent[aws.ToString(m.Body)] = append(sent[aws.ToString(m.Body)], ms)
		}
		tg.Wait(2 * time.Second)
	}
	require.Equal(t, sent["first"][0], sent["first"][1], "the same at every receive")
	require.Equal(t, sent["second"][0], sent["second"][1], "the same at every receive")
	require.GreaterOrEqual(t, sent["second"][0]-sent["first"][0], int64(2000), "the send's time, not the receive's")
}

func deleteBatch(t *testing.T, tg Target, url string) {
	out, err := sendBatch(tg, url, entries(3, "b"))
	require.NoError(t, err)
	require.Len(t, out.Successful, 3)
	msgs := receive(t, tg, url, 10)
	require.Len(t, msgs, 3)
	var es []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		es = append(es, types.DeleteMessageBatchRequestEntry{Id: aws.String("d" + string(rune('0'+i))), ReceiptHandle: m.ReceiptHandle})
	}
	del, err := tg.Client.DeleteMessageBatch(context.Background(), &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: es})
	require.NoError(t, err)
	require.Len(t, del.Successful, 3)
	require.Empty(t, del.Failed)
}

func visibilityBatch(t *testing.T, tg Target, url string) {
	send(t, tg, url, "v", 0)
	m := receiveOne(t, tg, url)
	out, err := tg.Client.ChangeMessageVisibilityBatch(context.Background(), &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("v0"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 1}}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	tg.Wait(2 * time.Second)
	require.Len(t, receive(t, tg, url, 10), 1, "visible again after the batch's visibility")
}

func attributesInFlight(t *testing.T, tg Target, url string) {
	send(t, tg, url, "a", 0)
	send(t, tg, url, "b", 0)
	receiveOne(t, tg, url)
	out, err := tg.Client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	require.Equal(t, "1", out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	require.Equal(t, "1", out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
}
