package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Handler handles one message of its kind.
type Handler func(ctx context.Context, m Message) error

// Routes maps every kind of message but KindStep to its handler: the one
// table a new kind is added to. KindStep is the Runner's own: it runs a
// step of the job the message names, through Jobs.
type Routes map[Kind]Handler

// StepFunc runs one step of a job of its kind. It checkpoints its progress
// in j (Records.SaveJob) before it touches anything, so a step stopped
// anywhere is resumed when the job's message comes back. It returns done
// once nothing is left to do (the Runner then completes the job), else
// next: how long until the next step may start (its paced sends' span).
type StepFunc func(ctx context.Context, j *domain.Job) (done bool, next time.Duration, err error)

// Jobs maps every kind of job to its step.
type Jobs map[domain.JobKind]StepFunc

// Runner is the replay function's handler: it routes each message of a
// batch by its kind, and runs jobs step by step, each step a message of
// its own, so a job gives its worker up between steps.
type Runner struct {
	// Starter records and gives back the jobs' places and enqueues their
	// next steps.
	Starter *Starter
	Routes  Routes
	Jobs    Jobs
	// Completed runs after a job is completed and its place given back
	// (say, to bring the DLQ in line). Nil: nothing.
	Completed func(ctx context.Context, j *domain.Job) error
	Log       *slog.Logger
}

// Handle routes each message of the batch: a step to Step, any other kind
// to its handler in Routes. A message that fails is reported, so SQS
// redelivers it and the job resumes; one that cannot be decoded, or of no
// known kind, is dropped.
func (r *Runner) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range ev.Records {
		var msg Message
		err := json.Unmarshal([]byte(m.Body), &msg)
		h, known := r.handler(msg.Kind)
		if err != nil || !known {
			r.Log.ErrorContext(ctx, "malformed job message dropped", "message_id", m.MessageId, "kind", string(msg.Kind))
			continue
		}
		if err := h(ctx, msg); err != nil {
			r.Log.ErrorContext(ctx, "job step failed; SQS will redeliver it", "job_id", msg.JobID, "kind", string(msg.Kind), "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

func (r *Runner) handler(k Kind) (Handler, bool) {
	if k == KindStep {
		return func(ctx context.Context, m Message) error { return r.Step(ctx, m.JobID) }, true
	}
	h, ok := r.Routes[k]
	return h, ok
}

// Step runs one step of job jobID through its kind's StepFunc, then
// completes the job or enqueues its next step. A job not found is dropped;
// one completed whose place was not given back (the release failed after
// the completion was saved) gives it back now.
func (r *Runner) Step(ctx context.Context, jobID string) error {
	j, err := r.Starter.Store.Job(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		r.Log.WarnContext(ctx, "job not found; message dropped", "job_id", jobID)
		return nil
	}
	if err != nil {
		return err
	}
	if j.Status == domain.StatusCompleted {
		return r.Starter.Release(ctx, &j)
	}
	step, ok := r.Jobs[j.Kind]
	if !ok {
		return fmt.Errorf("job %s: unknown kind %q", j.JobID, j.Kind)
	}
	done, next, err := step(ctx, &j)
	if err != nil {
		return err
	}
	if done {
		return r.complete(ctx, &j)
	}
	// The next step starts when this one's paced sends are due; meanwhile
	// the worker is free for other jobs.
	return r.Starter.EnqueueJob(ctx, &j, next)
}

// complete saves j completed, gives back its place and runs Completed.
func (r *Runner) complete(ctx context.Context, j *domain.Job) error {
	now := r.Starter.now().UTC()
	j.Status, j.CompletedAt, j.Pending = domain.StatusCompleted, &now, nil
	if err := r.Starter.Store.SaveJob(ctx, j); err != nil {
		return err
	}
	r.Log.InfoContext(ctx, "job completed", "job_id", j.JobID, "tenant_id", j.TenantID, "kind", j.Kind,
		"matched", j.Matched, "replayed", j.Replayed, "failed", j.Failed, "steps", j.Steps)
	if err := r.Starter.Release(ctx, j); err != nil {
		return err
	}
	if r.Completed == nil {
		return nil
	}
	return r.Completed(ctx, j)
}

// Span is how long n sends paced at Rate take to come due.
func (c Config) Span(n int) time.Duration {
	return time.Duration(float64(n) / c.WithDefaults().Rate * float64(time.Second))
}

// Next is how long after a step of n paced sends, begun elapsed ago, the
// next step may start: when the last of them is due (Delay), nothing if
// the step's work took longer than their span.
func (c Config) Next(n int, elapsed time.Duration) time.Duration {
	return max(c.Span(n)-elapsed, 0)
}
