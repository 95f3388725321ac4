package replay

import (
	"cmp"
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
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
)

// Store is what the worker needs of the state table: one small port per
// use, each declared here, each a *store.Store in production (the wiring
// passes the same store to every field) and a memstore.Store in the tests.
// The API's Start needs JobSlots and Jobs only.
type Store struct {
	Jobs
	JobSlots
	Sweeps
	DeadLetters
	Claims
	Deliveries
	DeadWindows
}

// DeadWindows are the endpoints' delivery.dead coalescing windows: the
// sweep adds a missed death to one, a notice reads one to sum it up (unless
// its tenant is being erased).
type DeadWindows interface {
	Erased(ctx context.Context, tenantID string) (bool, error)
	AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error)
	DeadWindow(ctx context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error)
}

// Notices writes operational events into the outbox (an *opevent.Writer).
type Notices interface {
	Emit(ctx context.Context, ev opevent.Event) error
}

var _ Notices = (*opevent.Writer)(nil)

// Jobs reads and checkpoints replay jobs, and finds those whose message was
// lost. SaveJob is conditional on the version read (store.ErrConflict).
type Jobs interface {
	Job(ctx context.Context, id string) (domain.ReplayJob, error)
	SaveJob(ctx context.Context, j *domain.ReplayJob) error
	IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.ReplayJob, error)
}

// JobSlots bound each tenant's open jobs: CreateJob records a job and takes
// a place in one write (store.ErrTooManyJobs), ReleaseJob gives it back.
type JobSlots interface {
	CreateJob(ctx context.Context, j *domain.ReplayJob, limit int) error
	TenantJobs(ctx context.Context, tenantID string) ([]string, error)
	ReleaseJob(ctx context.Context, tenantID, jobID string) error
}

// Sweeps lets one DLQ sweep run per gap.
type Sweeps interface {
	ClaimSweep(ctx context.Context, gap time.Duration) (bool, error)
}

// DeadLetters lists a tenant's dead deliveries, for a replay by filter.
type DeadLetters interface {
	ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error)
}

// Claims takes a dead delivery for a job and lets it go once its message is
// sent; RecordAttemptIfUnchanged records the death of a delivery the sweep
// found without a record, on the record as read.
type Claims interface {
	ClaimForReplay(ctx context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error)
	ReleaseReplay(ctx context.Context, id, job string) error
	RecordAttemptIfUnchanged(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
}

// Deliveries reads deliveries (one, or a batch) and endpoints.
type Deliveries interface {
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
}

// Depths reads every tenant's DLQ depth counter.
type Depths interface {
	DLQDepths(ctx context.Context) (map[string]int, error)
}

// Reconciler recounts a tenant's DLQ depth from the dead index and corrects
// its counter.
type Reconciler interface {
	ReconcileDLQDepth(ctx context.Context, tenantID string) (store.DepthCheck, error)
}

var (
	_            = Store{Jobs: (*store.Store)(nil), JobSlots: (*store.Store)(nil), Sweeps: (*store.Store)(nil), DeadLetters: (*store.Store)(nil), Claims: (*store.Store)(nil), Deliveries: (*store.Store)(nil), DeadWindows: (*store.Store)(nil)}
	_ Depths     = (*store.Store)(nil)
	_ Reconciler = (*store.Store)(nil)
)

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
	// a redrive, drained; JobsQueueURL carries the messages of tenants'
	// jobs.
	DeliveryQueueURL, DLQURL, JobsQueueURL string
	// OpsQueueURL carries the operator's redrive and the sweeps, gauges and
	// job recoveries: a queue of its own, worked with its own concurrency,
	// so that no tenant's jobs can hold them up. Empty: JobsQueueURL.
	OpsQueueURL string
	// MaxOpenJobs bounds each tenant's jobs queued or running at once;
	// Start refuses one more with store.ErrTooManyJobs. With it the jobs
	// queue holds at most MaxOpenJobs job messages per tenant, and since a
	// job gives its worker up after every step, another tenant's job waits
	// for at most that many steps of each other tenant. Default
	// DefaultMaxOpenJobs.
	MaxOpenJobs int
	// SweepGap is the least time between two sweeps of the DLQ: the sweeps
	// asked for after jobs (and by the schedule) within it are dropped.
	// Default 60 s, so that the sweep a job asks for 90 s after it
	// completes either runs or was preceded by one that began after the job
	// completed.
	SweepGap time.Duration
	// JobIdle is how long a job may go unsaved before Recover takes its
	// message for lost and sends it again: longer than a step's delay (at
	// most 15 min) and the jobs queue's visibility timeout (30 min)
	// together. Default 1 h.
	JobIdle time.Duration
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
	Depths Depths
	// Reconciler recounts a tenant's DLQ depth from the dead index and
	// corrects its counter (store.ReconcileDLQDepth). Nil: no
	// reconciliation.
	Reconciler Reconciler
	// Notices writes the delivery.dead summaries of the windows whose
	// notices come in on the operations queue. Nil: the notices are
	// dropped, and the sweep's missed deaths not noted.
	Notices Notices
	// Erasures deletes the items of the tenants erased (erase jobs). Nil:
	// an erase job's step fails.
	Erasures Erasures
	// Outbox lists and deletes the outbox items of the tenants erased. Nil:
	// an erase job's step fails.
	Outbox Outbox
	// DeadWindow is delivery.dead's coalescing window, as deliver's
	// (Handler.DeadWindow), for the missed deaths the sweep records.
	// Default 5 min.
	DeadWindow time.Duration
}

// DefaultMaxOpenJobs is a Worker's MaxOpenJobs when not set.
const DefaultMaxOpenJobs = 3

// Message is the body of a message on the jobs and operations queues.
type Message struct {
	JobID string `json:"job_id,omitempty"`
	// Sweep asks for a sweep of the DLQ instead of a job step (dropped if
	// another ran within SweepGap).
	Sweep bool `json:"sweep,omitempty"`
	// Recover asks for the jobs idle longer than JobIdle to be sent again
	// (sent every few minutes by a schedule).
	Recover bool `json:"recover,omitempty"`
	// Gauges asks for the per-tenant DLQ depth gauges (sent every minute by
	// a schedule).
	Gauges bool `json:"gauges,omitempty"`
	// TenantID, with Gauges, publishes that tenant's gauge only.
	TenantID string `json:"tenant_id,omitempty"`
	// Reconcile, with Sweep, also reconciles every tenant's DLQ depth
	// counter with the dead index (sent by the sweep's schedule).
	Reconcile bool `json:"reconcile,omitempty"`
	// DeadNotice asks for the delivery.dead summary of an endpoint's
	// coalescing window, which has ended (sent by deliver, delayed, when a
	// death opens the window: opevent.NoticeBody).
	DeadNotice *opevent.DeadNotice `json:"dead_notice,omitempty"`
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

func (w *Worker) maxOpenJobs() int {
	if w.MaxOpenJobs > 0 {
		return w.MaxOpenJobs
	}
	return DefaultMaxOpenJobs
}

func (w *Worker) sweepGap() time.Duration {
	if w.SweepGap > 0 {
		return w.SweepGap
	}
	return time.Minute
}

func (w *Worker) jobIdle() time.Duration {
	if w.JobIdle > 0 {
		return w.JobIdle
	}
	return time.Hour
}

func (w *Worker) opsQueueURL() string {
	if w.OpsQueueURL != "" {
		return w.OpsQueueURL
	}
	return w.JobsQueueURL
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
			err = w.coalescedSweep(ctx)
			if msg.Reconcile {
				// The counters are reconciled even when the sweep itself
				// is coalesced away.
				err = errors.Join(err, w.ReconcileDepths(ctx))
			}
		case msg.Recover:
			_, err = w.Recover(ctx)
		case msg.Gauges:
			err = w.PublishDepths(ctx, msg.TenantID)
		case msg.DeadNotice != nil:
			err = w.SummarizeDeaths(ctx, *msg.DeadNotice)
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

// Enqueue sends a message (after delay): a job's to the jobs queue, any
// other (sweep, gauges, recovery) to the operations queue. A redrive's
// messages go to the operations queue through enqueueJob.
func (w *Worker) Enqueue(ctx context.Context, msg Message, delay time.Duration) error {
	url := w.JobsQueueURL
	if msg.JobID == "" {
		url = w.opsQueueURL()
	}
	return w.send(ctx, url, msg, delay)
}

// enqueueJob sends a job's message (after delay): a tenant's to the jobs
// queue, the operator's redrive to the operations queue, where no tenant's
// jobs are ahead of it.
func (w *Worker) enqueueJob(ctx context.Context, j *domain.ReplayJob, delay time.Duration) error {
	url := w.JobsQueueURL
	if j.Kind == domain.KindRedrive || j.Kind == domain.KindErase {
		url = w.opsQueueURL()
	}
	return w.send(ctx, url, Message{JobID: j.JobID}, delay)
}

func (w *Worker) send(ctx context.Context, url string, msg Message, delay time.Duration) error {
	body, _ := json.Marshal(msg)
	secs := int32(min(900, max(0, int(delay.Seconds()))))
	_, err := w.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(string(body)), DelaySeconds: secs})
	if err != nil {
		return fmt.Errorf("enqueue replay message: %w", err)
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
	if j.Status == domain.StatusCompleted {
		// Its place may not have been given back (the release failed
		// after the completion was saved): give it back now.
		return w.release(ctx, &j)
	}
	if j.Kind == domain.KindRedrive {
		return w.redriveStep(ctx, &j)
	}
	if j.Kind == domain.KindErase {
		return w.eraseStep(ctx, &j)
	}
	ids := j.Pending
	// A resumed step is the last if its checkpoint says so: a filter's last
	// page leaves no cursor (a job by ids is checked below).
	done := len(ids) > 0 && j.Kind == domain.KindFilter && j.Cursor == ""
	if len(ids) == 0 {
		if ids, done, err = w.select_(ctx, &j); err != nil {
			return err
		}
		// Checkpoint before touching any delivery: a stop from here on is
		// resumed from Pending.
		j.Pending, j.Status = ids, domain.StatusRunning
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
	if done || (j.Kind == domain.KindIDs && j.Cursor == strconv.Itoa(len(j.IDs))) {
		return w.complete(ctx, &j)
	}
	if err := w.Store.SaveJob(ctx, &j); err != nil {
		return err
	}
	// The next step starts when this one's paced sends are due; meanwhile
	// the worker is free for other jobs.
	return w.enqueueJob(ctx, &j, span)
}

// select_ picks the ids of the next step and advances the cursor; done is
// true when nothing follows them.
func (w *Worker) select_(ctx context.Context, j *domain.ReplayJob) ([]string, bool, error) {
	n := w.stepSends()
	switch j.Kind {
	case domain.KindIDs:
		from, _ := strconv.Atoi(j.Cursor)
		to := min(len(j.IDs), from+n)
		j.Cursor = strconv.Itoa(to)
		return j.IDs[from:to], to == len(j.IDs), nil
	case domain.KindFilter:
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
func skip(j *domain.ReplayJob, id, reason string) {
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
func (w *Worker) replayIDs(ctx context.Context, j *domain.ReplayJob, ids []string) (time.Duration, error) {
	out := &replaySends{w: w, j: j}
	disabled := map[string]bool{}
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
		d, claimed, err := w.claim(ctx, j, id, snap, disabled)
		if err != nil {
			return 0, err
		}
		if !claimed {
			continue
		}
		if err := out.add(ctx, id, d); err != nil {
			return 0, err
		}
	}
	if err := out.flush(ctx); err != nil {
		return 0, err
	}
	return time.Duration(float64(out.sent)/w.rate()*float64(time.Second)) + time.Second, nil
}

// claim checks delivery id (as snap read it) and claims it for job j. It
// reports false, and counts why, for a delivery left alone: skipped, or
// replayed by this job before it stopped and resumed.
func (w *Worker) claim(ctx context.Context, j *domain.ReplayJob, id string, snap store.Snapshot, disabled map[string]bool) (domain.Delivery, bool, error) {
	d, found := snap.Deliveries[id]
	reason, err := w.check(ctx, j, d, found, disabled)
	if err != nil {
		return d, false, err
	}
	if reason == "replayed" {
		j.Replayed++ // sent by this job before it stopped and resumed
		return d, false, nil
	}
	if reason != "" {
		skip(j, id, reason)
		return d, false, nil
	}
	d, err = w.Store.ClaimForReplay(ctx, id, j.TenantID, j.JobID, w.stale())
	switch {
	case errors.Is(err, store.ErrNotFound):
		skip(j, id, "not_found")
		return d, false, nil
	case errors.Is(err, store.ErrNotDead):
		skip(j, id, "not_dead")
		return d, false, nil
	case errors.Is(err, store.ErrReplayInFlight):
		skip(j, id, "replay_in_progress")
		return d, false, nil
	case err != nil:
		return d, false, err
	}
	return d, true, nil
}

// replaySends gathers a replay step's claimed deliveries into paced SQS
// batches.
type replaySends struct {
	w       *Worker
	j       *domain.ReplayJob
	batch   []sqstypes.SendMessageBatchRequestEntry
	claimed []string // the deliveries in batch
	sent    int      // how many this step has paced so far
}

// add paces claimed delivery d's fresh message into the batch, sending the
// batch first when it is full.
func (r *replaySends) add(ctx context.Context, id string, d domain.Delivery) error {
	delay := r.w.delay(r.sent)
	r.sent++
	// Its age counts from the replay: an event older than the retry
	// policy's maximum age is still attempted.
	body, err := message.Replayed(d.Message, r.w.now())
	if err != nil {
		body = d.Message // deliver parks a malformed message dead again, with its reason
	}
	// In its tenant's message group (message.GroupID), as enqueue sent it.
	e := sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(r.batch))), MessageBody: aws.String(body), DelaySeconds: delay,
		MessageGroupId: message.GroupID(cmp.Or(d.TenantID, r.j.TenantID))}
	if !message.Fits(r.batch, e) {
		// Ten entries, or SQS's 256 KiB for the request: send what is
		// gathered first.
		if err := r.flush(ctx); err != nil {
			return err
		}
		e.Id = aws.String("0")
	}
	r.batch = append(r.batch, e)
	r.claimed = append(r.claimed, id)
	return nil
}

// flush sends the batch and releases its deliveries' claims, counting them
// replayed.
func (r *replaySends) flush(ctx context.Context) error {
	if err := message.SendBatch(ctx, r.w.Queue, r.w.DeliveryQueueURL, r.batch); err != nil {
		return err
	}
	for _, id := range r.claimed {
		if err := r.w.Store.ReleaseReplay(ctx, id, r.j.JobID); err != nil {
			return err
		}
		r.j.Replayed++
	}
	r.w.Metrics.Put(metrics.Replayed, float64(len(r.claimed)), map[string]string{metrics.DimensionTenant: r.j.TenantID})
	r.batch, r.claimed = r.batch[:0], r.claimed[:0]
	return nil
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
func (w *Worker) check(ctx context.Context, j *domain.ReplayJob, d domain.Delivery, found bool, disabled map[string]bool) (string, error) {
	switch {
	case !found:
		return "not_found", nil
	case j.TenantID != "" && d.TenantID != j.TenantID:
		return "not_found", nil // another tenant's: as good as missing
	case d.ReplayJob == j.JobID:
		return "", nil // claimed by this job before it stopped: finish it
	case d.ReplayedBy == j.JobID && d.ReplayJob == "":
		return "replayed", nil // sent by this job before it stopped and resumed
	case d.State != domain.StateDead:
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

func (w *Worker) complete(ctx context.Context, j *domain.ReplayJob) error {
	now := w.now().UTC()
	j.Status, j.CompletedAt, j.Pending = domain.StatusCompleted, &now, nil
	if err := w.Store.SaveJob(ctx, j); err != nil {
		return err
	}
	w.Log.InfoContext(ctx, "replay job completed", "job_id", j.JobID, "tenant_id", j.TenantID, "kind", j.Kind,
		"matched", j.Matched, "replayed", j.Replayed, "failed", j.Failed, "steps", j.Steps)
	if err := w.release(ctx, j); err != nil {
		return err
	}
	// Bring the SQS DLQ in line once the replayed messages are in flight,
	// and once more a little later: a sweep only sees the messages nobody
	// else (another sweep, a redrive, a reader) holds hidden at that moment.
	// However many jobs complete, the sweeps run at most once per SweepGap.
	if err := w.Enqueue(ctx, Message{Sweep: true}, 5*time.Second); err != nil {
		return err
	}
	return w.Enqueue(ctx, Message{Sweep: true}, 90*time.Second)
}

// isStale reports whether a DLQ message is an old copy of a delivery that was
// delivered, or replayed after the message was sent.
func isStale(d domain.Delivery, sent time.Time) bool {
	if d.State == domain.StateDelivered {
		return true
	}
	// replayed_at is set when a replay claims the delivery, before it sends
	// it: while the claim is not released, this copy may be the only one.
	return d.ReplayJob == "" && d.ReplayedAt != nil && sent.Before(*d.ReplayedAt)
}

// Start records a new job and sets it running: the API's side of a replay.
// A tenant with MaxOpenJobs jobs queued or running gets
// store.ErrTooManyJobs and nothing is recorded. A replay by filter without
// an upper bound on the time of death is bounded to the deaths before it
// started: deliveries that die while it runs (its own, dying again,
// included) are not its to replay.
func (w *Worker) Start(ctx context.Context, j *domain.ReplayJob) error {
	if j.Kind == domain.KindFilter && j.Filter.Until.IsZero() {
		j.Filter.Until = w.now().UTC()
	}
	err := w.Store.CreateJob(ctx, j, w.maxOpenJobs())
	if errors.Is(err, store.ErrTooManyJobs) {
		// The places may be held by jobs that completed but could not give
		// theirs back, or expired: give those back, and try once more.
		freed, ferr := w.releaseFinished(ctx, j.TenantID)
		if ferr != nil {
			return ferr
		}
		if freed {
			err = w.Store.CreateJob(ctx, j, w.maxOpenJobs())
		}
	}
	if err != nil {
		return err
	}
	return w.enqueueJob(ctx, j, 0)
}

// release gives back the place a completed tenant's job held.
func (w *Worker) release(ctx context.Context, j *domain.ReplayJob) error {
	if j.TenantID == "" {
		return nil
	}
	return w.Store.ReleaseJob(ctx, j.TenantID, j.JobID)
}

// releaseFinished gives back the places of a tenant's jobs that are
// completed or gone, and reports whether it freed any.
func (w *Worker) releaseFinished(ctx context.Context, tenantID string) (bool, error) {
	ids, err := w.Store.TenantJobs(ctx, tenantID)
	if err != nil {
		return false, err
	}
	freed := false
	for _, id := range ids {
		j, err := w.Store.Job(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return false, err
		case j.Status != domain.StatusCompleted:
			continue
		}
		if err := w.Store.ReleaseJob(ctx, tenantID, id); err != nil {
			return false, err
		}
		freed = true
	}
	return freed, nil
}

// coalescedSweep sweeps the DLQ unless another sweep began within SweepGap.
func (w *Worker) coalescedSweep(ctx context.Context) error {
	ok, err := w.Store.ClaimSweep(ctx, w.sweepGap())
	if err != nil {
		return err
	}
	if !ok {
		w.Log.DebugContext(ctx, "DLQ sweep skipped: another began within the gap")
		return nil
	}
	_, _, err = w.Sweep(ctx)
	return err
}

// maxRecoveries bounds the jobs one Recover sends again.
const maxRecoveries = 100

// Recover sends again the message of every job not completed and not saved
// for longer than JobIdle: its message was lost (a purged queue, a message
// that expired), else a step would have saved it. The job is saved first,
// which makes one recovery win against another and leaves it alone for
// another JobIdle; a job that resumes from a recovered message and from its
// original one at once is safe, as any redelivered job message is. It
// returns how many it sent again.
func (w *Worker) Recover(ctx context.Context) (int, error) {
	idle, err := w.Store.IdleJobs(ctx, w.now().Add(-w.jobIdle()), maxRecoveries)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range idle {
		if j.Status == domain.StatusCompleted || j.CompletedAt != nil {
			continue // the index lags a completion
		}
		err := w.Store.SaveJob(ctx, &j)
		if errors.Is(err, store.ErrConflict) {
			continue // saved since it was listed: it is alive
		}
		if err != nil {
			return n, err
		}
		if err := w.enqueueJob(ctx, &j, 0); err != nil {
			return n, err
		}
		n++
		w.Log.WarnContext(ctx, "replay job idle too long: its message was lost, sent again", "job_id", j.JobID, "tenant_id", j.TenantID,
			"kind", j.Kind, "status", j.Status)
	}
	return n, nil
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
