package desttest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/stretchr/testify/require"
)

// SNS's cases, for Target.Forgives.
const (
	CaseSNSPublish              = "SNSPublishReachesTheSubscriber"
	CaseSNSTopicMustExist       = "SNSPublishToAMissingTopicIsNotFound"
	CaseSNSMessageBytes         = "SNSMessageAtMost256KiB"
	CaseSNSBytesCountAttributes = "SNSMessageAt256KiBCountsItsAttributes"
	CaseSNSMessageNotEmpty      = "SNSMessageNotEmpty"
	CaseSNSAttributeCount       = "SNSAtMost10Attributes"
	CaseSNSAttributeNames       = "SNSAttributeNameRules"
	CaseSNSAttributeValues      = "SNSAttributeTypesAndValues"
)

// SNS's answers and limits (Publish API Reference; Amazon SNS Developer
// Guide, "Amazon SNS message attributes").
const (
	snsNotFound         = "NotFound"
	snsInvalidParameter = "InvalidParameter"
	snsInvalidValue     = "InvalidParameterValue"
	snsMaxBytes         = 262_144
	snsMaxAttributes    = 10
	snsMaxNameLength    = 256
	webhookIDAttribute  = "webhook-id"
)

// SNSClient is the SNS the suite drives; *sns.Client fits.
type SNSClient interface {
	Publish(context.Context, *sns.PublishInput, ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// SNSBundle is what one SNS case runs on: a client allowed to publish and
// a topic of the case's own.
type SNSBundle struct {
	Client   SNSClient
	TopicARN string
	// Arrived, if set, returns the webhook-id attribute of each message
	// that reached the topic's subscriber (a raw-delivery SQS subscription
	// on the local cloud; the topic itself in the fake, which models no
	// subscription), waiting up to wait for n of them.
	Arrived func(ctx context.Context, t *testing.T, n int, wait time.Duration) []string
}

// RunSNS runs SNS's cases on tg, each in parallel on a bundle of its own.
func RunSNS(t *testing.T, tg Target[SNSBundle]) {
	run(t, tg, []testCase[SNSBundle]{
		{CaseSNSPublish, snsPublish},
		{CaseSNSTopicMustExist, func(c *Check, b *SNSBundle) {
			c.Answer("a topic that does not exist", snsNotFound, publish(b, b.TopicARN+"-missing", "{}", nil))
		}},
		{CaseSNSMessageBytes, func(c *Check, b *SNSBundle) {
			c.Answer("a message of 256 KiB", Accepted, publish(b, b.TopicARN, strings.Repeat("x", snsMaxBytes), nil))
			c.Answer("a message of 256 KiB + 1", snsInvalidParameter, publish(b, b.TopicARN, strings.Repeat("x", snsMaxBytes+1), nil))
		}},
		{CaseSNSBytesCountAttributes, func(c *Check, b *SNSBundle) {
			attr := map[string]types.MessageAttributeValue{"k": snsString("v")}
			fits := strings.Repeat("x", snsMaxBytes-len("k")-len("String")-len("v"))
			c.Answer("256 KiB with the attribute's name, type and value", Accepted, publish(b, b.TopicARN, fits, attr))
			c.Answer("256 KiB + 1 with the attribute's", snsInvalidParameter, publish(b, b.TopicARN, fits+"x", attr))
		}},
		{CaseSNSMessageNotEmpty, func(c *Check, b *SNSBundle) {
			c.Answer("an empty message", snsInvalidParameter, publish(b, b.TopicARN, "", nil))
		}},
		{CaseSNSAttributeCount, func(c *Check, b *SNSBundle) {
			attrs := map[string]types.MessageAttributeValue{}
			for i := range snsMaxAttributes {
				attrs["a"+strconv.Itoa(i)] = snsString("v")
			}
			c.Answer("10 attributes", Accepted, publish(b, b.TopicARN, "{}", attrs))
			attrs["a10"] = snsString("v")
			c.Answer("11 attributes", snsInvalidValue, publish(b, b.TopicARN, "{}", attrs))
		}},
		{CaseSNSAttributeNames, snsAttributeNames},
		{CaseSNSAttributeValues, snsAttributeValues},
	})
}

func publish(b *SNSBundle, topic, body string, attrs map[string]types.MessageAttributeValue) string {
	return answer(b.Client.Publish(context.Background(), &sns.PublishInput{TopicArn: &topic, Message: &body, MessageAttributes: attrs}))
}

func snsString(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: &v}
}

// snsPublish: the sender's path. Accepted with a message id, and, where
// the target tells, the message (its webhook-id attribute) reaches the
// topic's subscriber.
func snsPublish(c *Check, b *SNSBundle) {
	const id = "msg_desttest_sns"
	out, err := b.Client.Publish(c.Context(), &sns.PublishInput{TopicArn: &b.TopicARN, Message: aws.String(`{"id":"evt_1"}`),
		MessageAttributes: map[string]types.MessageAttributeValue{webhookIDAttribute: snsString(id)}})
	c.Answer("a message to the topic", Accepted, Code(err))
	require.NoError(c, err)
	require.NotEmpty(c, aws.ToString(out.MessageId))
	if b.Arrived != nil {
		require.Equal(c, []string{id}, b.Arrived(c.Context(), c.T, 1, 15*time.Second), "the topic's subscriber got the message")
	}
}

func snsAttributeNames(c *Check, b *SNSBundle) {
	ok := map[string]types.MessageAttributeValue{webhookIDAttribute: snsString("v"), "a_b.c-D9": snsString("v")}
	c.Answer("attributes webhook-id and a_b.c-D9", Accepted, publish(b, b.TopicARN, "{}", ok))
	for _, name := range []string{"AWS.x", "amazon.x", "a b", ".a", "a.", "a..b", strings.Repeat("n", snsMaxNameLength+1)} {
		c.Answer("an attribute named "+truncate(name), snsInvalidValue,
			publish(b, b.TopicARN, "{}", map[string]types.MessageAttributeValue{name: snsString("v")}))
	}
}

func snsAttributeValues(c *Check, b *SNSBundle) {
	for typ, v := range map[string]string{"String.Array": `["a","b"]`, "Number": "2", "String.custom": "v"} {
		c.Answer("an attribute of type "+typ, Accepted, publish(b, b.TopicARN, "{}",
			map[string]types.MessageAttributeValue{"k": {DataType: aws.String(typ), StringValue: aws.String(v)}}))
	}
	c.Answer("an attribute of type Date", snsInvalidValue, publish(b, b.TopicARN, "{}",
		map[string]types.MessageAttributeValue{"k": {DataType: aws.String("Date"), StringValue: aws.String("x")}}))
	c.Answer("a Binary attribute", Accepted, publish(b, b.TopicARN, "{}",
		map[string]types.MessageAttributeValue{"k": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1}}}))
	c.Answer("an empty Binary attribute", snsInvalidValue, publish(b, b.TopicARN, "{}",
		map[string]types.MessageAttributeValue{"k": {DataType: aws.String("Binary")}}))
	c.Answer("an empty String attribute", snsInvalidValue, publish(b, b.TopicARN, "{}",
		map[string]types.MessageAttributeValue{"k": snsString("")}))
}

// truncate shortens a long value for a label.
func truncate(s string) string {
	if len(s) <= 20 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:10]) + "... (" + strconv.Itoa(len(s)) + " characters)"
}
