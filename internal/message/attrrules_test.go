package message

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/stretchr/testify/require"
)

// fakeTakes reports whether the fake SQS, which writes AWS's rules itself
// and is held to the service by sqstest, takes a message with attrs.
func fakeTakes(attrs map[string]sqstypes.MessageAttributeValue) bool {
	_, err := sqsfake.New(sqsfake.Config{}).SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String("https://q"), MessageBody: aws.String("{}"), MessageAttributes: attrs})
	return err == nil
}

// CheckAttributes takes what the fake SQS takes and refuses what it
// refuses: the product's rule and AWS's, written apart, agree.
func TestCheckAttributes(t *testing.T) {
	t.Parallel()
	str := func(v string) sqstypes.MessageAttributeValue {
		return sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	ok := map[string]sqstypes.MessageAttributeValue{"webhook-id": str("x"), "hookline.event_id": str("y"), "n": {DataType: aws.String("Number.int"), StringValue: aws.String("1")}}
	require.NoError(t, CheckAttributes(ok))
	require.True(t, fakeTakes(ok))
	for name, want := range map[string]string{
		"": "1 to 256", strings.Repeat("a", 257): "1 to 256", "AWS.x": "reserved", "amazon.y": "reserved",
		".a": "period", "a.": "period", "a..b": "period", "a b": "only letters", "é": "only letters",
	} {
		bad := map[string]sqstypes.MessageAttributeValue{name: str("v")}
		require.ErrorContains(t, CheckAttributes(bad), want, name)
		require.False(t, fakeTakes(bad), name)
	}
	for want, bad := range map[string]map[string]sqstypes.MessageAttributeValue{
		"non-empty":  {"a": str("")},
		"not String": {"a": {DataType: aws.String("Blob"), StringValue: aws.String("v")}},
	} {
		require.ErrorContains(t, CheckAttributes(bad), want)
		require.False(t, fakeTakes(bad), want)
	}
	eleven := map[string]sqstypes.MessageAttributeValue{}
	for i := range 11 {
		eleven["a"+strconv.Itoa(i)] = str("v")
	}
	require.ErrorContains(t, CheckAttributes(eleven), "at most 10")
	require.False(t, fakeTakes(eleven))
	delete(eleven, "a10")
	require.NoError(t, CheckAttributes(eleven), "ten")
	require.True(t, fakeTakes(eleven), "ten")
}
