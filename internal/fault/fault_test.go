package fault

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	r, err := Parse("")
	require.NoError(t, err)
	require.Empty(t, r, "off by default")
	r, err = Parse(" enqueue_fail:1 , deliver_crash:0 ")
	require.NoError(t, err)
	require.Equal(t, Rates{EnqueueFail: 1, DeliverCrash: 0}, r)
	for _, bad := range []string{"enqueue_fail", "enqueue_fail:2", "enqueue_fail:x", "disk_full:0.1"} {
		t.Run(bad, func(t *testing.T) {
			_, err := Parse(bad)
			require.Error(t, err)
		})
	}
}

func TestRatesStringRoundTrips(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "deliver_crash:0.01", "deliver_crash:0.01,enqueue_fail:0.05"} {
		t.Run(s, func(t *testing.T) {
			r, err := Parse(s)
			require.NoError(t, err)
			require.Equal(t, s, r.String())
		})
	}
	r, err := Parse("enqueue_fail:0.5, deliver_crash:1")
	require.NoError(t, err)
	require.Equal(t, "deliver_crash:1,enqueue_fail:0.5", r.String(), "points in name order")
}

// sendFunc is a Sender.
type sendFunc func(context.Context, sender.Request) sender.Result

func (f sendFunc) Send(ctx context.Context, r sender.Request) sender.Result { return f(ctx, r) }

// The crash comes after the POST, with the rate's probability; the result
// passes through when the process lives on.
func TestCrashAfterSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		rate  float64
		draw  float64
		crash bool
	}{
		{"rate zero never crashes", 0, 0, false},
		{"a draw below the rate crashes", 0.01, 0.005, true},
		{"a draw at or above the rate does not", 0.01, 0.01, false},
		{"rate one always crashes", 1, 0.999, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []string
			c := &CrashAfterSend{
				Next: sendFunc(func(context.Context, sender.Request) sender.Result {
					events = append(events, "post")
					return sender.Result{Outcome: sender.Delivered, Status: 204}
				}),
				Rate: tc.rate,
				Rand: func() float64 { return tc.draw },
				Exit: func(code int) { events = append(events, "exit"); require.Equal(t, 3, code) },
			}
			res := c.Send(context.Background(), sender.Request{})
			require.Equal(t, 204, res.Status)
			want := []string{"post"}
			if tc.crash {
				want = append(want, "exit")
			}
			require.Equal(t, want, events)
		})
	}
}

// batchFunc is a BatchSender.
const queueURL = "http://sqs.fake/q"

// batch is one message for queueURL.
func batch() *sqs.SendMessageBatchInput {
	return &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("m"), MessageBody: aws.String("{}")}}}
}

// Armed by a draw below the rate, the first request is sent and then
// failed; the next ones pass until the next invocation's draw.
func TestFailAfterSend(t *testing.T) {
	t.Parallel()
	q := sqsfake.New(sqsfake.Config{})
	draws := []float64{0.01, 0.5, 0.04}
	f := &FailAfterSend{
		Next: q,
		Rate: 0.05,
		Rand: func() float64 { d := draws[0]; draws = draws[1:]; return d },
	}
	send := func() error {
		_, err := f.SendMessageBatch(context.Background(), batch())
		return err
	}
	require.NoError(t, send(), "not armed before a draw")

	f.Draw() // 0.01 < 0.05: armed
	require.ErrorIs(t, send(), ErrInjected)
	require.Equal(t, 2, q.Sent(queueURL), "the failed request was sent")
	require.NoError(t, send(), "once per invocation")

	f.Draw() // 0.5: not armed
	require.NoError(t, send())

	invocations := 0
	handle := EachInvocation(f, func(context.Context, string) (int, error) { invocations++; return 0, send() })
	_, err := handle(context.Background(), "ev") // 0.04: armed
	require.ErrorIs(t, err, ErrInjected)
	require.Equal(t, 1, invocations)
	require.Equal(t, 5, q.Sent(queueURL))
}

// A request that fails is the queue's error, not the fault's, and leaves
// the fault armed for the next request.
func TestFailAfterSendPassesErrors(t *testing.T) {
	t.Parallel()
	fail := true
	f := &FailAfterSend{
		Next: sqsfake.New(sqsfake.Config{Fail: func(string, string) error {
			if fail {
				return context.DeadlineExceeded
			}
			return nil
		}}),
		Rate: 1,
	}
	f.Draw()
	_, err := f.SendMessageBatch(context.Background(), batch())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrInjected)
	fail = false
	_, err = f.SendMessageBatch(context.Background(), batch())
	require.ErrorIs(t, err, ErrInjected)
}
