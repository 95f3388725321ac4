package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/delivery"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// Job kinds.
const (
	KindIDs     = "ids"
	KindFilter  = "filter"
	KindRedrive = "redrive"
)

// Job statuses.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusCompleted = "completed"
)

// Store is what the worker needs of the state table.
type Store interface {
	Job(ctx context.Context, id string) (store.ReplayJob, error)
	SaveJob(ctx context.Context, j *store.ReplayJob) error
	ListDead(ctx context.Context, tenantID string, f store.DeadFilter, limit int, cursor string) ([]store.Delivery, string, error)
	ClaimForReplay(ctx context.Context, id, tenantID, job string, stale time.Duration) (store.Delivery, error)
	ReleaseReplay(ctx context.Context, id, job string) error
	RecordAttemptIfUnchanged(ctx context.Context, d store.Delivery, a store.Attempt, o store.Outcome) error
	Delivery(ctx context.Context, id string) (store.Delivery, error)
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (store.Endpoint, error)
}

// Queue is what the worker needs of SQS.
type Queue interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ Queue = (*sqs.Client)(nil)

// Worker runs replay jobs.
type Worker struct {
	Store Store
	Queue Queue
	// DeliveryQueueURL receives replayed messages; DLQURL is swept and, for
	// a redrive, drained; JobsQueueURL carries the job messages.
	DeliveryQueueURL, DLQURL, JobsQueueURL string
	// Rate is the sends per second a job paces itself to. Default 10.
	Rate float64
	// StepSends bounds the sends of one step. Default: 60 s worth at Rate,
	// at most 600.
	StepSends int
	// Stale is how old another job's claim must be before it is taken over
	// (that job stopped and was not resumed). Default 15 min.
	Stale time.Duration
	// Now is the clock; Rand draws jitter in [0, 1). Defaults: time.Now, none.
	Now  func() time.Time
	Rand func() float64
	Log  *slog.Logger
	// Metrics receives Replayed, the TenantDLQDepth gauges and
	// DLQDepthCorrections (EMF). Nil: none.
	Metrics *metrics.Writer
	// Depths reads every tenant's DLQ depth, for the gauges and the
	// reconciliation. Nil: neither.
	Depths interface {
		DLQDepths(ctx context.Context) (map[string]int, error)
	}
	// Reconciler recounts a tenant's DLQ depth from the dead index and
	// corrects its counter (store.ReconcileDLQDepth). Nil: no
	// reconciliation.
	Reconciler interface {
		ReconcileDLQDepth(ctx context.Context, tenantID string) (store.DepthCheck, error)
	}
}

// Message is the body of a message on the jobs queue.
type Message struct {
	JobID string `json:"job_id,omitempty"`
	// Sweep asks for a sweep of the DLQ instead of a job step.
	Sweep bool `json:"sweep,omitempty"`
	// Gauges asks for the per-tenant DLQ depth gauges (sent every minute by
	// a schedule).
	Gauges bool `json:"gauges,omitempty"`
	// TenantID, with Gauges, publishes that tenant's gauge only.
	TenantID string `json:"tenant_id,omitempty"`
	// Reconcile, with Sweep, also reconciles every tenant's DLQ depth
	// counter with the dead index (sent by the sweep's schedule).
	Reconcile bool `json:"reconcile,omitempty"`
}

func (w *Worker) rate() float64 {
	if w.Rate > 0 {
		return w.Rate
	}
	return 10
}

func (w *Worker) stepSends() int {
	if w.StepSends > 0 {
		return w.StepSends
	}
	return min(600, max(1, int(w.rate()*60)))
}

func (w *Worker) stale() time.Duration {
	if w.Stale > 0 {
		return w.Stale
	}
	return 15 * time.Minute
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Handle runs one step of each job named in the batch (or a sweep). A step
// that fails is reported, so SQS redelivers its message and the job resumes.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range ev.Records {
		var msg Message
		err := json.Unmarshal([]byte(m.Body), &msg)
		switch {
		case err != nil:
			w.Log.ErrorContext(ctx, "malformed job message dropped", "message_id", m.MessageId)
			continue
		case msg.Sweep:
			_, _, err = w.Sweep(ctx)
			if msg.Reconcile {
				err = errors.Join(err, w.ReconcileDepths(ctx))
			}
		case msg.Gauges:
			err = w.PublishDepths(ctx, msg.TenantID)
		default:
			err = w.Step(ctx, msg.JobID)
		}
		if err != nil {
			w.Log.ErrorContext(ctx, "replay step failed; SQS will redeliver it", "job_id", msg.JobID, "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// Enqueue sends a job's message (after delay) to the jobs queue.
func (w *Worker) Enqueue(ctx context.Context, msg Message, delay time.Duration) error {
	body, _ := json.Marshal(msg)
	secs := int32(min(900, max(0, int(delay.Seconds()))))
	_, err := w.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &w.JobsQueueURL, MessageBody: aws.String(string(body)), DelaySeconds: secs})
	if err != nil {
		return fmt.Errorf("enqueue replay job message: %w", err)
	}
	return nil
}

// Step runs one step of a job: it resumes the step a stopped worker left,
// or selects the next deliveries, checkpoints them, replays them paced, and
// then either schedules the next step or completes the job.
func (w *Worker) Step(ctx context.Context, jobID string) error {
	j, err := w.Store.Job(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		w.Log.WarnContext(ctx, "replay job not found; message dropped", "job_id", jobID)
		return nil
	}
	if err != nil {
		return err
	}
	if j.Status == StatusCompleted {
		return nil
	}
	if j.Kind == KindRedrive {
		return w.redriveStep(ctx, &j)
	}
	ids := j.Pending
	// A resumed step is the last if its checkpoint says so: a filter's last
	// page leaves no cursor (a job by ids is checked below).
	done := len(ids) > 0 && j.Kind == KindFilter && j.Cursor == ""
	if len(ids) == 0 {
		if ids, done, err = w.select_(ctx, &j); err != nil {
			return err
		}
		// Checkpoint before touching any delivery: a stop from here on is
		// resumed from Pending.
		j.Pending, j.Status = ids, StatusRunning
		if done && len(ids) == 0 {
			return w.complete(ctx, &j)
		}
		if err := w.Store.SaveJob(ctx, &j); err != nil {
			return err
		}
	}
	span, err := w.replayIDs(ctx, &j, ids)
	if err != nil {
		return err
	}
	j.Pending, j.Steps = nil, j.Steps+1
	if done || (j.Kind == KindIDs && j.Cursor == strconv.Itoa(len(j.IDs))) {
		return w.complete(ctx, &j)
	}
	if err := w.Store.SaveJob(ctx, &j); err != nil {
		return err
	}
	// The next step starts when this one's paced sends are due.
	return w.Enqueue(ctx, Message{JobID: j.JobID}, span)
}

// select_ picks the ids of the next step and advances the cursor; done is
// true when nothing follows them.
func (w *Worker) select_(ctx context.Context, j *store.ReplayJob) ([]string, bool, error) {
	n := w.stepSends()
	switch j.Kind {
	case KindIDs:
		from, _ := strconv.Atoi(j.Cursor)
		to := min(len(j.IDs), from+n)
		j.Cursor = strconv.Itoa(to)
		return j.IDs[from:to], to == len(j.IDs), nil
	case KindFilter:
		ds, next, err := w.Store.ListDead(ctx, j.TenantID, j.Filter, n, j.Cursor)
		if err != nil {
			return nil, false, err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.DeliveryID
		}
		j.Cursor = next
		return ids, next == "", nil
	}
	return nil, true, fmt.Errorf("replay job %s: unknown kind %q", j.JobID, j.Kind)
}

// skip counts a delivery left alone.
func skip(j *store.ReplayJob, id, reason string) {
	if j.Skipped == nil {
		j.Skipped = map[string]int{}
	}
	j.Skipped[reason]++
	if j.SkippedIDs == nil {
		j.SkippedIDs = map[string]string{}
	}
	if len(j.SkippedIDs) < 100 {
		j.SkippedIDs[id] = reason
	}
}

// replayIDs claims and sends each delivery, paced, and returns how long the
// paced sends take to come due.
func (w *Worker) replayIDs(ctx context.Context, j *store.ReplayJob, ids []string) (time.Duration, error) {
	var batch []sqstypes.SendMessageBatchRequestEntry
	var claimed []string
	disabled := map[string]bool{}
	sent := 0
	flush := func() error {
		if err := delivery.SendBatch(ctx, w.Queue, w.DeliveryQueueURL, batch); err != nil {
			return err
		}
		for _, id := range claimed {
			if err := w.Store.ReleaseReplay(ctx, id, j.JobID); err != nil {
				return err
			}
			j.Replayed++
		}
		w.Metrics.Put(metrics.Replayed, float64(len(claimed)), map[string]string{metrics.DimensionTenant: j.TenantID})
		batch, claimed = batch[:0], claimed[:0]
		return nil
	}
	var snap store.Snapshot
	for i, id := range ids {
		if i%100 == 0 {
			// Read the deliveries a hundred at a time, not one by one: the
			// claim below is what decides, so a read a moment old is fine.
			var err error
			if snap, err = w.Store.Load(ctx, ids[i:min(len(ids), i+100)], nil); err != nil {
				return 0, err
			}
		}
		j.Matched++
		d, found := snap.Deliveries[id]
		reason, err := w.check(ctx, j, d, found, disabled)
		if err != nil {
			return 0, err
		}
		if reason == "replayed" {
			j.Replayed++ // sent by this job before it stopped and resumed
			continue
		}
		if reason != "" {
			skip(j, id, reason)
			continue
		}
		d, err = w.Store.ClaimForReplay(ctx, id, j.TenantID, j.JobID, w.stale())
		switch {
		case errors.Is(err, store.ErrNotFound):
			skip(j, id, "not_found")
			continue
		case errors.Is(err, store.ErrNotDead):
			skip(j, id, "not_dead")
			continue
		case errors.Is(err, store.ErrReplayInFlight):
			skip(j, id, "replay_in_progress")
			continue
		case err != nil:
			return 0, err
		}
		delay := w.delay(sent)
		sent++
		// Its age counts from the replay: an event older than the retry
		// policy's maximum age is still attempted.
		body, err := delivery.Replayed(d.Message, w.now())
		if err != nil {
			body = d.Message // deliver parks a malformed message dead again, with its reason
		}
		batch = append(batch, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(batch))), MessageBody: aws.String(body), DelaySeconds: delay})
		claimed = append(claimed, id)
		if len(batch) == 10 {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return time.Duration(float64(sent)/w.rate()*float64(time.Second)) + time.Second, nil
}

// delay paces the n-th send of a step: n/Rate seconds, jittered by up to a
// second, within SQS's 900 s limit.
func (w *Worker) delay(n int) int32 {
	d := float64(n) / w.rate()
	if w.Rand != nil {
		d += w.Rand()
	}
	return int32(min(900, d))
}

// check looks at a delivery (as read before it is claimed; found false if
// it does not exist) and says why it is to be skipped ("" to replay it;
// "replayed" if this job already sent it).
func (w *Worker) check(ctx context.Context, j *store.ReplayJob, d store.Delivery, found bool, disabled map[string]bool) (string, error) {
	switch {
	case !found:
		return "not_found", nil
	case j.TenantID != "" && d.TenantID != j.TenantID:
		return "not_found", nil // another tenant's: as good as missing
	case d.ReplayJob == j.JobID:
		return "", nil // claimed by this job before it stopped: finish it
	case d.ReplayedBy == j.JobID && d.ReplayJob == "":
		return "replayed", nil // sent by this job before it stopped and resumed
	case d.State != delivery.StateDead:
		return "not_dead", nil
	case d.Message == "":
		return "no_message", nil
	}
	key := d.TenantID + "/" + d.EndpointID
	off, seen := disabled[key]
	if !seen {
		ep, err := w.Store.Endpoint(ctx, d.TenantID, d.EndpointID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		off = err != nil || ep.Disabled
		disabled[key] = off
	}
	if off {
		return "endpoint_disabled", nil
	}
	return "", nil
}

func (w *Worker) complete(ctx context.Context, j *store.ReplayJob) error {
	now := w.now().UTC()
	j.Status, j.CompletedAt, j.Pending = StatusCompleted, &now, nil
	if err := w.Store.SaveJob(ctx, j); err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "replay job completed", "job_id", j.JobID, "tenant_id", j.TenantID, "kind", j.Kind,
		"matched", j.Matched, "replayed", j.Replayed, "failed", j.Failed, "steps", j.Steps)
	// Bring the SQS DLQ in line once the replayed messages are in flight,
	// and once more a little later: a sweep only sees the messages nobody
	// else (another sweep, a redrive, a reader) holds hidden at that moment.
	if err := w.Enqueue(ctx, Message{Sweep: true}, 5*time.Second); err != nil {
		return err
	}
	return w.Enqueue(ctx, Message{Sweep: true}, 90*time.Second)
}

// isStale reports whether a DLQ message is an old copy of a delivery that was
// delivered, or replayed after the message was sent.
func isStale(d store.Delivery, sent time.Time) bool {
	if d.State == delivery.StateDelivered {
		return true
	}
	// replayed_at is set when a replay claims the delivery, before it sends
	// it: while the claim is not released, this copy may be the only one.
	return d.ReplayJob == "" && d.ReplayedAt != nil && sent.Before(*d.ReplayedAt)
}

// Start records a new job and sets it running: the API's side of a replay.
func (w *Worker) Start(ctx context.Context, j *store.ReplayJob) error {
	if err := w.Store.SaveJob(ctx, j); err != nil {
		return err
	}
	return w.Enqueue(ctx, Message{JobID: j.JobID}, 0)
}

// PublishDepths publishes every tenant's DLQ depth (or only tenant's, when
// not empty) as the TenantDLQDepth gauge, and the deepest of them as
// MaxTenantDLQDepth, which the per-tenant alarm watches: a value each
// minute, also when no depth changed.
func (w *Worker) PublishDepths(ctx context.Context, tenant string) error {
	if w.Depths == nil {
		return nil
	}
	depths, err := w.Depths.DLQDepths(ctx)
	if err != nil {
		return err
	}
	deepest := 0
	for t, n := range depths {
		if tenant == "" || t == tenant {
			w.Metrics.Put(metrics.TenantDLQDepth, float64(max(n, 0)), map[string]string{metrics.DimensionTenant: t})
		}
		deepest = max(deepest, n)
	}
	if tenant == "" {
		// One figure for the per-tenant alarm, however many tenants there are.
		w.Metrics.Put(metrics.MaxTenantDLQ, float64(deepest), nil)
	}
	return nil
}

// ReconcileDepths reconciles every tenant's DLQ depth counter with the dead
// index (store.ReconcileDLQDepth), for counters left off by earlier
// versions, which moved the counter in a write of its own. Each correction
// is logged and published as DLQDepthCorrections, 1 per corrected tenant
// (TenantId) and so their total stack-wide; a run that corrects nothing
// publishes 0. A tenant that fails does not stop the others; the error
// names them.
func (w *Worker) ReconcileDepths(ctx context.Context) error {
	if w.Depths == nil || w.Reconciler == nil {
		return nil
	}
	depths, err := w.Depths.DLQDepths(ctx)
	if err != nil {
		return err
	}
	corrected := 0
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(depths)) {
		c, err := w.Reconciler.ReconcileDLQDepth(ctx, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Corrected {
			corrected++
			w.Log.WarnContext(ctx, "tenant DLQ depth corrected", "tenant_id", t, "counter", c.Counter, "indexed", c.Indexed)
			w.Metrics.Put(metrics.DLQDepthCorrections, 1, map[string]string{metrics.DimensionTenant: t})
		}
	}
	if corrected == 0 {
		w.Metrics.Put(metrics.DLQDepthCorrections, 0, nil)
	}
	return errors.Join(errs...)
}
