package dlq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

const (
	dlqURL      = "https://sqs.local/dlq"
	deliveryURL = "https://sqs.local/deliveries"
)

// clock is a settable clock, safe for the fake's concurrent reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// redriveEnv is a redrive on the real store (storefake) and the fake SQS,
// a DLQ holding n messages sent an hour before the job began, and a reader
// that, at the redrive's first receive of the DLQ, receives hold of them
// itself with a visibility timeout of hide (as a sweep, a test's peek or
// a stopped redrive step does), between the redrive's calls.
type redriveEnv struct {
	clk *clock
	q   *sqsfake.Queue
	r   *dlq.Redriver
	job *domain.Job
	ids []string
	// hidden are the receipt handles the reader holds.
	hidden []string
}

func newRedriveEnv(t *testing.T, n, hold int, hide time.Duration) *redriveEnv {
	t.Helper()
	e := &redriveEnv{clk: &clock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}}
	var started atomic.Bool
	q := sqsfake.New(sqsfake.Config{Now: e.clk.Now, Fail: func(op, url string) error {
		// The reader's own receive comes here too: started is set first.
		if op == "ReceiveMessage" && url == dlqURL && hold > 0 && started.CompareAndSwap(false, true) {
			e.hidden = e.read(t, hold, hide)
		}
		return nil
	}})
	e.q = q
	for i := range n {
		id := fmt.Sprintf("dl_%d", i)
		b, err := json.Marshal(message.Message{DeliveryID: id, TenantID: "t_a", EndpointID: "ep_1", EventID: "evt_" + id,
			EventType: "order.created", OccurredAt: e.clk.Now(), Payload: json.RawMessage(`{}`)})
		require.NoError(t, err)
		_, err = q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlqURL), MessageBody: aws.String(string(b))})
		require.NoError(t, err)
		e.ids = append(e.ids, id)
	}
	e.clk.Advance(time.Hour)
	st := storefake.New()
	e.job = &domain.Job{JobID: "rj_redrive", Kind: domain.KindRedrive, Status: domain.StatusQueued, CreatedAt: e.clk.Now()}
	require.NoError(t, st.SaveJob(context.Background(), e.job))
	e.r = &dlq.Redriver{Store: st, DLQ: dlq.Queue{SQS: q, URL: dlqURL}, Queue: q, DeliveryQueueURL: deliveryURL,
		StepSends: 10, Stale: 15 * time.Minute, Delay: func(int) int32 { return 0 }, Now: e.clk.Now}
	return e
}

// read receives up to n DLQ messages hidden for hide, as another reader.
func (e *redriveEnv) read(t *testing.T, n int, hide time.Duration) []string {
	out, err := e.q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL),
		MaxNumberOfMessages: int32(n), VisibilityTimeout: int32(hide / time.Second)})
	require.NoError(t, err)
	var handles []string
	for _, m := range out.Messages {
		handles = append(handles, aws.ToString(m.ReceiptHandle))
	}
	return handles
}

// run steps the job until it is done, waiting between steps as the worker
// does, and returns the steps run and the longest wait asked for.
func (e *redriveEnv) run(t *testing.T, between func()) (steps int, longest time.Duration) {
	t.Helper()
	for {
		done, _, wait, err := e.r.Step(context.Background(), e.job)
		require.NoError(t, err)
		steps++
		require.LessOrEqual(t, steps, 100, "the redrive ends")
		if done {
			return steps, longest
		}
		longest = max(longest, wait)
		e.clk.Advance(wait)
		if between != nil {
			between()
		}
	}
}

// sentBack counts the messages sent back to the delivery queue, by delivery.
func (e *redriveEnv) sentBack(t *testing.T) map[string]int {
	got := map[string]int{}
	for _, b := range e.q.Bodies(deliveryURL) {
		m, err := message.Decode(b)
		require.NoError(t, err)
		got[m.DeliveryID]++
	}
	return got
}

// A reader that hides DLQ messages while the redrive runs does not end it
// early: the redrive sees SQS count them hidden, waits for them, and moves
// every message older than the job, once.
func TestRedriveWaitsForMessagesAnotherReaderHides(t *testing.T) {
	t.Parallel()
	for _, hide := range []time.Duration{2 * time.Second, time.Minute, 10 * time.Minute} {
		t.Run(hide.String(), func(t *testing.T) {
			t.Parallel()
			e := newRedriveEnv(t, 6, 3, hide)
			steps, longest := e.run(t, nil)
			require.Len(t, e.hidden, 3, "the reader held 3 messages")
			require.Greater(t, steps, 1, "the first step ended not done")
			require.Positive(t, longest, "and asked to wait")
			want := map[string]int{}
			for _, id := range e.ids {
				want[id] = 1
			}
			require.Equal(t, want, e.sentBack(t))
			require.Empty(t, e.q.Messages(dlqURL), "the DLQ is empty")
			require.Equal(t, 6, e.job.Replayed)
			require.Zero(t, e.job.Skipped[domain.SkipHiddenElsewhere])
		})
	}
}

// A reader that never lets go (it extends its hold before each lapse)
// cannot keep the redrive running: after its bounded waits with nothing
// moved, the job ends, and counts what it could not see.
func TestRedriveEndsWhenAnotherReaderNeverLetsGo(t *testing.T) {
	t.Parallel()
	e := newRedriveEnv(t, 5, 2, time.Minute)
	steps, _ := e.run(t, func() {
		for _, h := range e.hidden {
			_, err := e.q.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(dlqURL),
				ReceiptHandle: aws.String(h), VisibilityTimeout: 60})
			require.NoError(t, err)
		}
	})
	require.Equal(t, 3, e.job.Replayed, "what it could see is moved")
	require.Len(t, e.q.Messages(dlqURL), 2, "what the reader holds is left")
	require.Equal(t, 2, e.job.Skipped[domain.SkipHiddenElsewhere])
	require.Greater(t, steps, 10, "it waited")
	require.Less(t, steps, 100, "a bounded number of times")
}

// Messages sent to the DLQ after the job began are not the job's: it ends
// while they are there, and leaves them visible.
func TestRedriveEndsWithOnlyLaterMessages(t *testing.T) {
	t.Parallel()
	e := newRedriveEnv(t, 2, 0, 0)
	e.clk.Advance(time.Second)
	_, err := e.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlqURL), MessageBody: aws.String(`{"later":true}`)})
	require.NoError(t, err)
	steps, _ := e.run(t, nil)
	require.Equal(t, 1, steps)
	require.Equal(t, 2, e.job.Replayed)
	left := e.q.Messages(dlqURL)
	require.Len(t, left, 1)
	require.True(t, left[0].Visible, "shown again at the step's end")
	require.Equal(t, `{"later":true}`, left[0].Body)
}

// A malformed message older than the job is counted once and left, visible:
// it neither ends the job early nor keeps it waiting, over several steps.
func TestRedriveLeavesAMalformedMessageOnce(t *testing.T) {
	t.Parallel()
	e := newRedriveEnv(t, 3, 0, 0)
	e.clk.Advance(-time.Minute)
	_, err := e.q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlqURL), MessageBody: aws.String("not json {")})
	require.NoError(t, err)
	e.clk.Advance(time.Minute)
	e.r.StepSends = 1
	steps, longest := e.run(t, func() { e.clk.Advance(time.Second) })
	require.Equal(t, 4, steps, "one send a step, then the step that finds nothing more")
	require.Zero(t, longest, "it never waited")
	require.Equal(t, 3, e.job.Replayed)
	require.Equal(t, 1, e.job.Failed)
	require.Equal(t, 1, e.job.Skipped[domain.SkipMalformedMessage])
	left := e.q.Messages(dlqURL)
	require.Len(t, left, 1)
	require.True(t, left[0].Visible)
	require.Equal(t, "not json {", left[0].Body)
}
