package enqueue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// countingQueue wraps a Sender and counts the SendMessageBatch calls in
// flight at once. The first calls wait (up to a second) until bound of
// them are in flight, so that a bound that allows overlap shows it; a
// request holding a message of event failEvent fails.
type countingQueue struct {
	next      Sender
	bound     int
	failEvent string
	full      chan struct{}
	once      sync.Once
	mu        sync.Mutex
	inflight  int
	most      int
}

func newCountingQueue(next Sender, bound int) *countingQueue {
	return &countingQueue{next: next, bound: bound, full: make(chan struct{})}
}

func (c *countingQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	c.mu.Lock()
	c.inflight++
	c.most = max(c.most, c.inflight)
	if c.inflight >= c.bound {
		c.once.Do(func() { close(c.full) })
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inflight--
		c.mu.Unlock()
	}()
	select {
	case <-c.full:
	case <-time.After(time.Second):
	}
	for _, e := range in.Entries {
		if c.failEvent != "" && strings.Contains(aws.ToString(e.MessageBody), `"`+c.failEvent+`"`) {
			return nil, errBoom
		}
	}
	return c.next.SendMessageBatch(ctx, in, opts...)
}

// manyEvents is a stream batch of n events of tenant t1, e00 onwards.
func manyEvents(n int) events.DynamoDBEvent {
	var imgs []map[string]events.DynamoDBAttributeValue
	for i := range n {
		imgs = append(imgs, image(fmt.Sprintf("e%02d", i), "t1", nil))
	}
	return streamEvent(imgs...)
}

// enqueue's SendMessageBatch requests run concurrently, never more than
// SendConcurrency at once (default domain.DefaultEnqueueSendConcurrency),
// and more than one at once when it allows; every message is sent.
func TestSendsRunConcurrentlyWithinTheBound(t *testing.T) {
	t.Parallel()
	for _, bound := range []int{0, 1, 3, 10} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			t.Parallel()
			want := bound
			if bound == 0 {
				want = domain.DefaultEnqueueSendConcurrency
			}
			s, q := newFakeStore(endpoint("t1", "ep_1"), endpoint("t1", "ep_2"), endpoint("t1", "ep_3")), &fakeQueue{}
			c := newCountingQueue(q, want)
			h := newHandler(s, q)
			h.Queue, h.Config.SendConcurrency = c, bound
			_, err := h.Handle(context.Background(), manyEvents(40))
			require.NoError(t, err)
			require.Equal(t, 12, q.batches(), "120 messages, ten a request")
			require.Len(t, q.count(), 120, "every delivery sent once")
			require.Equal(t, want, c.most, "in flight at once: the bound, reached")
		})
	}
}

// A failed request among concurrent ones fails the invocation, naming the
// records of its batch, and the retry sends every delivery: nothing is
// lost.
func TestConcurrentFailedBatchFailsItsRecords(t *testing.T) {
	t.Parallel()
	s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
	c := newCountingQueue(q, 4)
	c.failEvent = "e15" // the second request: records 10 to 19
	h := newHandler(s, q)
	h.Queue, h.Config.SendConcurrency = c, 4
	ev := manyEvents(100)
	_, err := h.Handle(context.Background(), ev)
	require.ErrorIs(t, err, errBoom, "the invocation fails, so the stream retries the batch")
	require.ErrorContains(t, err, "records 900000000000000000010 to 900000000000000000019")
	require.LessOrEqual(t, c.most, 4, "in flight at once: at most the bound")
	for _, m := range q.sent() {
		require.NotEqual(t, "e15", m.EventID)
	}

	c.failEvent = ""
	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.count(), 100, "every delivery sent")
}
