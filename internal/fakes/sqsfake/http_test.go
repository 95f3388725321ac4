package sqsfake_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
)

// Over HTTP, an SDK client meets SQS's rules with SQS's codes.
func TestHTTPSendMessage(t *testing.T) {
	t.Parallel()
	q := sqsfake.New(sqsfake.Config{MustExist: true, Authorize: func(key, _ string) bool { return key == "AKIAOK" }})
	srv := awsfake.Serve(t, map[string]http.Handler{"sqs": q})
	url := srv.URL + "/000000000000/orders"
	q.AddQueue(url)
	cfg := srv.Config("AKIAOK")
	cfg.RetryMaxAttempts = 1
	c := sqs.NewFromConfig(cfg)
	send := func(url string, attrs map[string]types.MessageAttributeValue) string {
		_, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("{}"), MessageAttributes: attrs})
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		require.NoError(t, err)
		return ""
	}
	str := types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
	require.Empty(t, send(url, map[string]types.MessageAttributeValue{"webhook-id": str}))
	require.Equal(t, "v", *q.Messages(url)[0].Attributes["webhook-id"].StringValue)
	require.Equal(t, "AWS.SimpleQueueService.NonExistentQueue", send(srv.URL+"/000000000000/gone", nil))
	eleven := map[string]types.MessageAttributeValue{}
	for i := range 11 {
		eleven["a"+strconv.Itoa(i)] = str
	}
	require.Equal(t, "InvalidParameterValue", send(url, eleven))
	require.Equal(t, "InvalidParameterValue", send(url, map[string]types.MessageAttributeValue{"Amazon.x": str}))
	cfg.Credentials = awsfake.StaticCredentials("AKIAOTHER")
	_, err := sqs.NewFromConfig(cfg).SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("{}")})
	require.ErrorContains(t, err, "AccessDenied")
}
