package background_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
)

// The fake DLQ refuses a visibility change SQS refuses: outside 0..43200 s,
// or ending more than 12 h after the message's receive.
func TestFakeQueueVisibilityRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		held    time.Duration
		vis     int32
		refused bool
	}{
		{"12 h at the receive", 0, 43200, false},
		{"0 after an hour", time.Hour, 0, false},
		{"the rest of 12 h after an hour", time.Hour, 43200 - 3600, false},
		{"a second past 12 h from the receive", time.Hour, 43200 - 3600 + 1, true},
		{"above 43200", 0, 43201, true},
		{"negative", 0, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			q := newFakeQueue(clk.Now)
			q.addDLQ("{}", clk.Now())
			out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: strPtr(dlqURL), MaxNumberOfMessages: 1, VisibilityTimeout: 43200})
			require.NoError(t, err)
			require.Len(t, out.Messages, 1)
			clk.Advance(tt.held)
			_, err = q.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{
				QueueUrl: strPtr(dlqURL), ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: tt.vis,
			})
			if tt.refused {
				require.ErrorContains(t, err, "InvalidParameterValue")
				return
			}
			require.NoError(t, err)
		})
	}
}
