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
