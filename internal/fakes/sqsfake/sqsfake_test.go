package sqsfake_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fakes/sqsfake/sqstest"
	"github.com/stretchr/testify/require"
)

// The conformance suite on the fake, which forgives nothing; each case on a
// fake and a clock of its own, with a small in-flight limit so that the
// limit's case runs.
func TestConformance(t *testing.T) {
	t.Parallel()
	sqstest.Run(t, sqstest.Target{Setup: func(ctx context.Context, t *testing.T) *sqstest.Bundle {
		var mu sync.Mutex
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		q := sqsfake.New(sqsfake.Config{InFlightLimit: 3, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
		out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")})
		require.NoError(t, err)
		return &sqstest.Bundle{
			Client:        q,
			URL:           *out.QueueUrl,
			Wait:          func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) },
			InFlightLimit: 3,
		}
	}})
}

// ReceiveAt is a send and a receive at a time in the past: the message is
// in flight from then, its 12 h counted from then, its handle good for
// ChangeMessageVisibility and DeleteMessage; past the in-flight limit it
// receives nothing, the refusal kept.
func TestReceiveAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	q := sqsfake.New(sqsfake.Config{InFlightLimit: 1, VisibilityTimeout: time.Minute, Now: func() time.Time { return now }})
	const url = "http://sqs.fake/q"
	h, ok := q.ReceiveAt(url, "a", now.Add(-10*time.Second))
	require.True(t, ok)
	require.Equal(t, 1, q.InFlight(url))
	require.Equal(t, []string{"a"}, q.Bodies(url))
	_, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: &h, VisibilityTimeout: 43200})
	require.ErrorContains(t, err, "past 12 h from the receive", "received 10 s ago")
	_, err = q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: &h, VisibilityTimeout: 43190})
	require.NoError(t, err)

	_, ok = q.ReceiveAt(url, "b", now)
	require.False(t, ok, "the in-flight limit is reached")
	require.Len(t, q.Refusals(), 2)
	require.Contains(t, q.Refusals()[1], "OverLimit")

	_, err = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: &h})
	require.NoError(t, err)
	require.Zero(t, q.InFlight(url))
	require.Empty(t, q.Bodies(url))

	old, ok := q.ReceiveAt(url, "c", now.Add(-time.Minute))
	require.True(t, ok)
	_, err = q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: &old, VisibilityTimeout: 0})
	require.ErrorContains(t, err, "MessageNotInflight", "received a visibility timeout ago: visible again")
}

// Config.Fail fails a request before any rule, as an unavailable SQS does:
// nothing is sent, nothing refused, nothing answered; the next request,
// not failed, goes through. Answered, Sent and Messages count and show
// what was accepted.
func TestFailHook(t *testing.T) {
	t.Parallel()
	errDown := errors.New("service unavailable")
	var asked []string
	down := true
	q := sqsfake.New(sqsfake.Config{Fail: func(op, url string) error {
		asked = append(asked, op+" "+url)
		if down {
			return errDown
		}
		return nil
	}})
	ctx := context.Background()
	in := &sqs.SendMessageBatchInput{QueueUrl: aws.String("u"), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")}}}
	_, err := q.SendMessageBatch(ctx, in)
	require.ErrorIs(t, err, errDown)
	require.Zero(t, q.Sent("u"))
	require.Zero(t, q.Answered("SendMessageBatch", "u"))
	require.Empty(t, q.Refusals(), "a failure is not a refusal")

	down = false
	_, err = q.SendMessageBatch(ctx, in)
	require.NoError(t, err)
	require.Equal(t, []string{"SendMessageBatch u", "SendMessageBatch u"}, asked)
	require.Equal(t, 1, q.Sent("u"))
	require.Equal(t, 1, q.Answered("SendMessageBatch", "u"))
	msgs := q.Messages("u")
	require.Len(t, msgs, 1)
	require.Equal(t, "x", msgs[0].Body)
	require.Equal(t, "g", *msgs[0].GroupID)

	// A refused request is not answered either.
	_, err = q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String("u")})
	require.Error(t, err)
	require.Equal(t, 1, q.Answered("SendMessageBatch", "u"))
}

// Config.CheckSend sees each message with its entry id and refuses it as a
// failed entry; Config.Discard keeps nothing but the count.
func TestCheckSendAndDiscard(t *testing.T) {
	t.Parallel()
	q := sqsfake.New(sqsfake.Config{Discard: true, CheckSend: func(_, id string, in *sqs.SendMessageInput) error {
		if id != aws.ToString(in.MessageBody) {
			return fmt.Errorf("entry %s is not its body %s", id, aws.ToString(in.MessageBody))
		}
		return nil
	}})
	out, err := q.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String("u"), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("a")}, {Id: aws.String("b"), MessageBody: aws.String("c")}}})
	require.NoError(t, err)
	require.Len(t, out.Successful, 1)
	require.Len(t, out.Failed, 1)
	require.Equal(t, "b", *out.Failed[0].Id)
	require.Len(t, q.Refusals(), 1)
	require.Equal(t, 1, q.Sent("u"))
	require.Empty(t, q.Messages("u"), "discarded")
}

// A receive waits 0 to 20 s; Messages tells a received message, hidden,
// from a visible one.
func TestReceiveWaitAndMessageState(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	q := sqsfake.New(sqsfake.Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	url := aws.String("u")
	_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x")})
	require.NoError(t, err)
	_, err = q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 21})
	require.Error(t, err, "WaitTimeSeconds 21")
	require.Equal(t, []sqsfake.Message{{ID: "m-1", Body: "x", Visible: true}}, q.Messages("u"))
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 20})
	require.NoError(t, err)
	require.Len(t, out.Messages, 1)
	require.Equal(t, []sqsfake.Message{{ID: "m-1", Body: "x", Receives: 1}}, q.Messages("u"), "hidden once received")
}
