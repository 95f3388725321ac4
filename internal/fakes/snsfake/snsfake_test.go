package snsfake_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/snsfake"
)

const topic = "arn:aws:sns:us-east-1:000000000000:hooks"

func str(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

func TestPublish(t *testing.T) {
	t.Parallel()
	f := snsfake.New(snsfake.Config{Authorize: func(key, arn string) bool { return key == "AKIAOK" }})
	f.AddTopic(topic)
	srv := awsfake.Serve(t, map[string]http.Handler{"sns": f})
	cfg := srv.Config("AKIAOK")
	cfg.RetryMaxAttempts = 1
	c := sns.NewFromConfig(cfg)
	pub := func(arn, body string, attrs map[string]types.MessageAttributeValue) string {
		_, err := c.Publish(context.Background(), &sns.PublishInput{TopicArn: aws.String(arn), Message: aws.String(body), MessageAttributes: attrs})
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		require.NoError(t, err)
		return ""
	}
	require.Equal(t, "", pub(topic, `{"a":1}`, map[string]types.MessageAttributeValue{"webhook-id": str("msg_1"), "n": {DataType: aws.String("Number"), StringValue: aws.String("2")}}))
	got := f.Published(topic)
	require.Len(t, got, 1)
	require.Equal(t, `{"a":1}`, got[0].Body)
	require.Equal(t, snsfake.Attribute{DataType: "String", Value: "msg_1"}, got[0].Attributes["webhook-id"])
	require.Equal(t, "AKIAOK", got[0].AccessKey)

	eleven := map[string]types.MessageAttributeValue{}
	for i := range 11 {
		eleven["a"+strconv.Itoa(i)] = str("v")
	}
	// Exactly 256 KiB with the attribute counted (name, type, value) is
	// taken; one byte more is not.
	fits := strings.Repeat("x", snsfake.MaxMessageBytes-len("k")-len("String")-len("v"))
	for body, want := range map[string]string{"": "InvalidParameter", fits: "", fits + "x": "InvalidParameter"} {
		require.Equal(t, want, pub(topic, body, map[string]types.MessageAttributeValue{"k": str("v")}), len(body))
	}
	require.Equal(t, "InvalidParameterValue", pub(topic, "b", eleven))
	require.Equal(t, "InvalidParameterValue", pub(topic, "b", map[string]types.MessageAttributeValue{"AWS.reserved": str("v")}))
	require.Equal(t, "InvalidParameterValue", pub(topic, "b", map[string]types.MessageAttributeValue{"a b": str("v")}))
	// SNS, unlike SQS, takes a String.Array attribute; no type outside
	// String, String.Array, Number and Binary.
	require.Equal(t, "", pub(topic, "b", map[string]types.MessageAttributeValue{"list": {DataType: aws.String("String.Array"), StringValue: aws.String(`["a","b"]`)}}))
	require.Equal(t, "InvalidParameterValue", pub(topic, "b", map[string]types.MessageAttributeValue{"k": {DataType: aws.String("Date"), StringValue: aws.String("x")}}))
	require.Equal(t, "NotFound", pub(topic+"-gone", "b", nil))
	cfg.Credentials = awsfake.StaticCredentials("AKIAOTHER")
	_, err := sns.NewFromConfig(cfg).Publish(context.Background(), &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("b")})
	require.ErrorContains(t, err, "AuthorizationError")
}
