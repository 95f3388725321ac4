package delivery

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

type batchFunc func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error)

func (f batchFunc) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	return f(in)
}

func TestSendBatch(t *testing.T) {
	entries := []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("{}")}}
	calls := 0
	ok := batchFunc(func(in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		calls++
		require.Equal(t, "https://q", *in.QueueUrl)
		return &sqs.SendMessageBatchOutput{}, nil
	})
	require.NoError(t, SendBatch(context.Background(), ok, "https://q", nil))
	require.Zero(t, calls, "nothing to send, no call")
	require.NoError(t, SendBatch(context.Background(), ok, "https://q", entries))
	require.Equal(t, 1, calls)

	partial := batchFunc(func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return &sqs.SendMessageBatchOutput{Failed: []sqstypes.BatchResultErrorEntry{{Id: aws.String("a"), Code: aws.String("InternalError"), Message: aws.String("try again")}}}, nil
	})
	require.ErrorContains(t, SendBatch(context.Background(), partial, "https://q", entries), "send delivery message a: InternalError: try again")
	down := batchFunc(func(*sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return nil, errors.New("unreachable")
	})
	require.ErrorContains(t, SendBatch(context.Background(), down, "https://q", entries), "unreachable")
}
