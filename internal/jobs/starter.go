package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Records reads and checkpoints jobs, and finds those whose message was
// lost. SaveJob is conditional on the version read (store.ErrConflict).
type Records interface {
	Job(ctx context.Context, id string) (domain.Job, error)
	SaveJob(ctx context.Context, j *domain.Job) error
	IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.Job, error)
}

// Slots bound each tenant's open jobs: CreateJob records a job and takes a
// place in one write (store.ErrTooManyJobs), ReleaseJob gives it back.
type Slots interface {
	CreateJob(ctx context.Context, j *domain.Job, limit int) error
	TenantJobs(ctx context.Context, tenantID string) ([]string, error)
	ReleaseJob(ctx context.Context, tenantID, jobID string) error
}

// Store is what the Starter needs of the state table.
type Store interface {
	Records
	Slots
}

var _ Store = (*store.Store)(nil)

// Sender sends a message to a queue (an *sqs.Client).
type Sender interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ Sender = (*sqs.Client)(nil)

// Starter records jobs, takes and gives back their tenants' places, and
// enqueues their messages: what the api function needs to start a job, and
// what the runner uses to schedule the next step.
type Starter struct {
	Store Store
	Queue Sender
	// JobsQueueURL carries the messages of tenants' jobs.
	JobsQueueURL string
	// OpsQueueURL carries the operator's jobs (redrive, erase) and every
	// other kind of message: a queue of its own, worked with its own
	// concurrency, so that no tenant's jobs can hold them up. Empty:
	// JobsQueueURL.
	OpsQueueURL string
	// MaxOpenJobs is Config.MaxOpenJobs (0: DefaultMaxOpenJobs).
	MaxOpenJobs int
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (s *Starter) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// OpsQueue is the operations queue's URL: OpsQueueURL, or JobsQueueURL
// when that is empty.
func (s *Starter) OpsQueue() string {
	if s.OpsQueueURL != "" {
		return s.OpsQueueURL
	}
	return s.JobsQueueURL
}

// Bounder is arguments with an open end that a job closes at its start
// (replay.Filter, replay.Since, cancel.Args).
type Bounder interface {
	Bound(now time.Time)
}

// Start records a new job and sets it running: the API's side of a job,
// given its kind's arguments (domain.NewJob).
// A tenant with MaxOpenJobs jobs queued or running gets
// store.ErrTooManyJobs and nothing is recorded. Arguments with an open end
// (a Bounder) are bounded to the job's start: a replay by filter without
// an upper bound on the time of death to the deaths before it started,
// so that deliveries that die while it runs (its own, dying again,
// included) are not its to replay; a range (a replay since a time, a
// cancel) without its end to the events before it started.
func (s *Starter) Start(ctx context.Context, j *domain.Job) error {
	if j.Args == nil || j.Args.JobKind() != j.Kind {
		// Started without its kind's arguments, a replay by filter would
		// have no bound.
		return fmt.Errorf("job %s of kind %s started with arguments %T", j.JobID, j.Kind, j.Args)
	}
	if b, ok := j.Args.(Bounder); ok {
		b.Bound(s.now().UTC())
	}
	limit := Config{MaxOpenJobs: s.MaxOpenJobs}.WithDefaults().MaxOpenJobs
	err := s.Store.CreateJob(ctx, j, limit)
	if errors.Is(err, store.ErrTooManyJobs) {
		// The places may be held by jobs that completed but could not give
		// theirs back, or expired: give those back, and try once more.
		freed, ferr := s.releaseFinished(ctx, j.TenantID)
		if ferr != nil {
			return ferr
		}
		if freed {
			err = s.Store.CreateJob(ctx, j, limit)
		}
	}
	if err != nil {
		return err
	}
	return s.EnqueueJob(ctx, j, 0)
}

// Release gives back the place a completed tenant's job held.
func (s *Starter) Release(ctx context.Context, j *domain.Job) error {
	if j.TenantID == "" {
		return nil
	}
	return s.Store.ReleaseJob(ctx, j.TenantID, j.JobID)
}

// releaseFinished gives back the places of a tenant's jobs that are
// completed or gone, and reports whether it freed any.
func (s *Starter) releaseFinished(ctx context.Context, tenantID string) (bool, error) {
	ids, err := s.Store.TenantJobs(ctx, tenantID)
	if err != nil {
		return false, err
	}
	freed := false
	for _, id := range ids {
		j, err := s.Store.Job(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return false, err
		case j.Status != domain.StatusCompleted:
			continue
		}
		if err := s.Store.ReleaseJob(ctx, tenantID, id); err != nil {
			return false, err
		}
		freed = true
	}
	return freed, nil
}

// Enqueue sends a message (after delay): a job's step to the jobs queue,
// any other kind (sweep, gauges, recovery) to the operations queue. An
// operator's job's steps go to the operations queue through EnqueueJob.
func (s *Starter) Enqueue(ctx context.Context, msg Message, delay time.Duration) error {
	url := s.JobsQueueURL
	if msg.Kind != KindStep {
		url = s.OpsQueue()
	}
	return s.send(ctx, url, msg, delay)
}

// EnqueueJob sends a job's step message (after delay): a tenant's to the
// jobs queue, the operator's (redrive, erase) to the operations queue,
// where no tenant's jobs are ahead of it.
func (s *Starter) EnqueueJob(ctx context.Context, j *domain.Job, delay time.Duration) error {
	url := s.JobsQueueURL
	if j.Kind == domain.KindRedrive || j.Kind == domain.KindErase {
		url = s.OpsQueue()
	}
	return s.send(ctx, url, Step(j.JobID), delay)
}

func (s *Starter) send(ctx context.Context, url string, msg Message, delay time.Duration) error {
	body, _ := json.Marshal(msg)
	secs := int32(min(900, max(0, int(delay.Seconds()))))
	_, err := s.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(string(body)), DelaySeconds: secs})
	if err != nil {
		return fmt.Errorf("enqueue job message: %w", err)
	}
	return nil
}
