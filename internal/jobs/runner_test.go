package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

const (
	jobsURL = "http://sqs.fake/jobs"
	opsURL  = "http://sqs.fake/ops"
)

// runnerEnv is a Runner on the in-memory store and the fake SQS, whose
// one kind of job (ids) is a step the test scripts.
type runnerEnv struct {
	st    *storefake.Store
	q     *sqsfake.Queue
	clk   *storetest.Clock
	r     *jobs.Runner
	steps []string // the jobs whose step ran, in order
	// step is the ids job's step: done after it, and the delay before the
	// next.
	step func(j *domain.Job) (bool, time.Duration, error)
	// completed are the jobs Completed saw.
	completed []string
}

func newRunner(t *testing.T) *runnerEnv {
	t.Helper()
	clk := storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	st := storefake.New()
	st.Now = clk.Now
	q := sqsfake.New(sqsfake.Config{Now: clk.Now})
	e := &runnerEnv{st: st, q: q, clk: clk}
	e.r = &jobs.Runner{
		Starter: &jobs.Starter{Store: st, Queue: q, JobsQueueURL: jobsURL, OpsQueueURL: opsURL, Now: clk.Now},
		Jobs: jobs.Jobs{domain.KindIDs: func(_ context.Context, j *domain.Job) (bool, time.Duration, error) {
			e.steps = append(e.steps, j.JobID)
			return e.step(j)
		}},
		Completed: func(_ context.Context, j *domain.Job) error {
			e.completed = append(e.completed, j.JobID)
			return nil
		},
		Log: slog.New(slog.DiscardHandler),
	}
	t.Cleanup(func() { require.Empty(t, q.Refusals(), "no request SQS would refuse") })
	return e
}

func (e *runnerEnv) start(t *testing.T, id string) {
	t.Helper()
	require.NoError(t, e.r.Starter.Start(context.Background(), &domain.Job{JobID: id, TenantID: "acme", Kind: domain.KindIDs, Args: &idsArgs{IDs: []string{"d1"}}}))
}

func (e *runnerEnv) handle(t *testing.T, bodies ...string) []string {
	t.Helper()
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: string(rune('a' + i)), Body: b})
	}
	resp, err := e.r.Handle(context.Background(), ev)
	require.NoError(t, err)
	failed := []string{}
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

func stepBody(id string) string {
	b, _ := json.Marshal(jobs.Step(id))
	return string(b)
}

// A step that is not the last leaves the job open and sends its next step
// to the jobs queue, delayed by the span the step reports; the last step
// completes the job, gives back its tenant's place and runs Completed.
func TestRunnerStepsAJobToCompletion(t *testing.T) {
	t.Parallel()
	e := newRunner(t)
	e.start(t, "rj_1")
	require.Equal(t, []string{stepBody("rj_1")}, e.q.Bodies(jobsURL), "the first step is on the jobs queue")

	e.step = func(*domain.Job) (bool, time.Duration, error) { return false, 42 * time.Second, nil }
	require.Empty(t, e.handle(t, stepBody("rj_1")))
	require.Len(t, e.q.Bodies(jobsURL), 2, "the next step is sent")
	out, err := e.q.ReceiveMessage(context.Background(), receive(jobsURL))
	require.NoError(t, err)
	require.Len(t, out.Messages, 1, "only the first: the next is delayed")
	_, err = e.q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(jobsURL), ReceiptHandle: out.Messages[0].ReceiptHandle})
	require.NoError(t, err)
	e.clk.Advance(41 * time.Second)
	none, err := e.q.ReceiveMessage(context.Background(), receive(jobsURL))
	require.NoError(t, err)
	require.Empty(t, none.Messages, "not before its span")
	e.clk.Advance(time.Second)
	next, err := e.q.ReceiveMessage(context.Background(), receive(jobsURL))
	require.NoError(t, err)
	require.Len(t, next.Messages, 1)
	require.Empty(t, e.completed)

	e.step = func(*domain.Job) (bool, time.Duration, error) { return true, 0, nil }
	require.Empty(t, e.handle(t, stepBody("rj_1")))
	j, err := e.st.Job(context.Background(), "rj_1")
	require.NoError(t, err)
	require.Equal(t, domain.StatusCompleted, j.Status)
	require.Equal(t, e.clk.Now(), *j.CompletedAt)
	require.Equal(t, []string{"rj_1"}, e.completed)
	open, err := e.st.TenantJobs(context.Background(), "acme")
	require.NoError(t, err)
	require.Empty(t, open, "its place is given back")
	require.Len(t, e.q.Bodies(jobsURL), 1, "no step after the last: only the second, received, is there")

	// Its message redelivered: the job is not stepped again.
	require.Empty(t, e.handle(t, stepBody("rj_1")))
	require.Equal(t, []string{"rj_1", "rj_1"}, e.steps)
}

// A failed step is reported, so SQS redelivers its message, and the other
// messages of the batch are handled; a message that cannot be decoded, of
// no known kind, or of a job not found, is dropped; a kind of job with no
// step is an error (the message is retried and ends in the jobs DLQ).
func TestRunnerRoutesEachMessage(t *testing.T) {
	t.Parallel()
	e := newRunner(t)
	e.start(t, "rj_1")
	var gauges []string
	e.r.Routes = jobs.Routes{jobs.KindGauges: func(_ context.Context, m jobs.Message) error {
		gauges = append(gauges, m.TenantID)
		if m.TenantID == "bad" {
			return errors.New("injected")
		}
		return nil
	}}
	e.step = func(*domain.Job) (bool, time.Duration, error) { return false, 0, errors.New("injected") }
	require.NoError(t, e.st.CreateJob(context.Background(), &domain.Job{JobID: "rj_x", TenantID: "acme", Kind: domain.KindErase}, 3))
	failed := e.handle(t,
		stepBody("rj_1"),                       // a: its step fails
		`{"kind":"gauges","tenant_id":"acme"}`, // b
		`{"kind":"gauges","tenant_id":"bad"}`,  // c: its handler fails
		`{not json`,                            // d: dropped
		`{"kind":"nonsense"}`,                  // e: dropped
		stepBody("rj_gone"),                    // f: no such job, dropped
		`{"kind":"sweep"}`,                     // g: no route, dropped
		stepBody("rj_x"),                       // h: a kind of job with no step
	)
	require.Equal(t, []string{"a", "c", "h"}, failed)
	require.Equal(t, []string{"acme", "bad"}, gauges)
	require.Equal(t, []string{"rj_1"}, e.steps)
}

func receive(url string) *sqs.ReceiveMessageInput {
	return &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10}
}
