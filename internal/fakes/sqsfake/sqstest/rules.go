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

const maxBytes = 262_144

func rules() []testCase {
	return []testCase{
		{CaseDelayMax, func(t *testing.T, b *Bundle) {
			send(t, b, "ok", 900)
			_, err := b.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.URL, MessageBody: aws.String("no"), DelaySeconds: 901})
			require.Error(t, err, "DelaySeconds 901")
		}},
		{CaseMessageBytes, func(t *testing.T, b *Bundle) {
			send(t, b, big(maxBytes), 0)
			_, err := b.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.URL, MessageBody: aws.String(big(maxBytes + 1))})
			require.Error(t, err, "a message of 256 KiB + 1 byte")
		}},
		{CaseBatchBytes, func(t *testing.T, b *Bundle) {
			es := entries(2, big(maxBytes/2))
			_, err := sendBatch(b, es)
			require.NoError(t, err, "two halves of 256 KiB")
			es[1].MessageBody = aws.String(big(maxBytes/2 + 1))
			require.True(t, refusedEntries(sendBatch(b, es)), "a batch of 256 KiB + 1 byte")
		}},
		{CaseBatchEntries, func(t *testing.T, b *Bundle) {
			out, err := sendBatch(b, entries(10, "ten"))
			require.NoError(t, err)
			require.Len(t, out.Successful, 10)
			_, err = sendBatch(b, entries(11, "eleven"))
			require.Error(t, err, "11 entries")
			_, err = sendBatch(b, nil)
			require.Error(t, err, "no entries")
		}},
		{CaseBatchIDs, batchIDs},
		{CaseCharacters, characters},
		{CaseVisibilityMax, func(t *testing.T, b *Bundle) {
			send(t, b, "v", 0)
			m := receiveOne(t, b)
			require.Error(t, changeVisibility(b, m, 43201), "VisibilityTimeout 43201")
			require.Error(t, changeVisibility(b, m, -1), "VisibilityTimeout -1")
		}},
		{CaseTwelveHours, func(t *testing.T, b *Bundle) {
			send(t, b, "v", 0)
			m := receiveOne(t, b)
			require.NoError(t, changeVisibility(b, m, 43000), "within 12 h of the receive")
			b.Wait(2 * time.Second)
			require.Error(t, changeVisibility(b, m, 43200), "12 h from now is past 12 h from the receive")
		}},
		{CaseNotInFlight, func(t *testing.T, b *Bundle) {
			send(t, b, "v", 0)
			m := receiveOne(t, b)
			require.NoError(t, changeVisibility(b, m, 0), "made visible")
			require.Error(t, changeVisibility(b, m, 10), "no longer in flight")
		}},
		{CaseInFlightLimit, inFlightLimit},
		{CaseAttributeCount, attributeCount},
		{CaseAttributeNames, attributeNames},
	}
}

func batchIDs(t *testing.T, b *Bundle) {
	for name, id := range map[string]string{"empty": "", "81 characters": big(81), "a dot": "a.b", "a space": "a b"} {
		es := entries(1, "x")
		es[0].Id = aws.String(id)
		_, err := sendBatch(b, es)
		require.Error(t, err, "entry id with %s", name)
	}
	es := entries(2, "x")
	es[1].Id = es[0].Id
	_, err := sendBatch(b, es)
	require.Error(t, err, "ids not distinct")
	es[0].Id, es[1].Id = aws.String(big(80)), aws.String("A-z_09")
	_, err = sendBatch(b, es)
	require.NoError(t, err, "80 characters, and letters, digits, - and _")
}

func characters(t *testing.T, b *Bundle) {
	send(t, b, "tab\t lf\n cr\r \u00e9 \ud7ff \ue000 \ufffd \U0001F600 \U0010FFFF", 0)
	for name, body := range map[string]string{"NUL": "a\x00b", "U+0008": "a\bb", "U+FFFE": "a\ufffeb", "U+001F": "a\x1fb"} {
		_, err := b.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.URL, MessageBody: aws.String(body)})
		require.Error(t, err, "a body with %s", name)
		es := entries(1, body)
		require.True(t, refusedEntries(sendBatch(b, es)), "a batch entry with %s", name)
	}
}

func inFlightLimit(t *testing.T, b *Bundle) {
	if b.InFlightLimit == 0 {
		t.Skip("the target's in-flight limit (120,000 on AWS) cannot be set small")
	}
	for range b.InFlightLimit + 1 {
		send(t, b, "m", 0)
	}
	require.Len(t, receive(t, b, 10), b.InFlightLimit, "received up to the limit")
	require.Empty(t, receive(t, b, 10), "past the limit: nothing, and no error")
}

func sendAttrs(b *Bundle, attrs map[string]types.MessageAttributeValue) error {
	_, err := b.Client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &b.URL, MessageBody: aws.String("attrs"), MessageAttributes: attrs})
	return err
}

func strAttr(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

func attributeCount(t *testing.T, b *Bundle) {
	attrs := map[string]types.MessageAttributeValue{}
	for i := range 10 {
		attrs["a"+strconv.Itoa(i)] = strAttr("v")
	}
	require.NoError(t, sendAttrs(b, attrs), "10 attributes")
	attrs["a10"] = strAttr("v")
	require.Error(t, sendAttrs(b, attrs), "11 attributes")
}

func attributeNames(t *testing.T, b *Bundle) {
	require.NoError(t, sendAttrs(b, map[string]types.MessageAttributeValue{"webhook-id": strAttr("v"), "a_b.c-D9": strAttr("v")}))
	for _, name := range []string{"AWS.x", "amazon.x", "a b", ".a", "a.", "a..b", strings.Repeat("n", 257)} {
		require.Error(t, sendAttrs(b, map[string]types.MessageAttributeValue{name: strAttr("v")}), "attribute name %.20q", name)
	}
	require.Error(t, sendAttrs(b, map[string]types.MessageAttributeValue{"empty": strAttr("")}), "an empty value")
}
