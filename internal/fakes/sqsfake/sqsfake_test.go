package sqsfake_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fakes/sqsfake/sqstest"
	"github.com/stretchr/testify/require"
)

// The conformance suite on the fake, which forgives nothing; with a small
// in-flight limit so that the limit's case runs.
func TestConformance(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	q := sqsfake.New(sqsfake.Config{InFlightLimit: 3, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	n := 0
	sqstest.Run(t, sqstest.Target{
		Client: q,
		NewQueue: func(t *testing.T) string {
			n++
			out, err := q.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("q%d", n))})
			require.NoError(t, err)
			return *out.QueueUrl
		},
		Wait:          func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) },
		InFlightLimit: 3,
	})
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
