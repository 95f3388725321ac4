package replay

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
)

// Store is what the worker needs of the state table, composed of one small
// port per use: a *store.Store in production (the wiring passes the store
// once) and a memstore.Store in the tests.
type Store interface {
	jobs.Records
	jobs.Slots
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

var _ Store = (*store.Store)(nil)

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
	// Config is how jobs run: pacing, step sizes, slots, gaps (each field's
	// default in jobs.Config).
	jobs.Config
	// Now is the clock; Rand draws jitter in [0, 1). Defaults: time.Now, none.
	Now  func() time.Time
	Rand func() float64
	Log  *slog.Logger
	// Metrics receives Replayed, the TenantDLQDepth gauges and
	// DLQDepthCorrections (EMF). Nil: none.
	Metrics *metrics.Writer
	// Depths reads every tenant's DLQ depth, for the gauges and the
	// reconciliation. Nil: neither.
	Depths dlq.Counters
	// Reconciler recounts a tenant's DLQ depth from the dead index and
	// corrects its counter (store.ReconcileDLQDepth). Nil: no
	// reconciliation.
	Reconciler dlq.Reconciler
	// Notices writes the delivery.dead summaries of the windows whose
	// notices come in on the operations queue. Nil: the notices are
	// dropped, and the sweep's missed deaths not noted.
	Notices opevent.Emitter
	// Erasures deletes the items of the tenants erased (erase jobs). Nil:
	// an erase job's step fails.
	Erasures erasure.Erasures
	// Outbox lists and deletes the outbox items of the tenants erased (an
	// *erasure.OutboxTable). Nil: an erase job's step fails.
	Outbox erasure.Outbox
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// cfg is the worker's Config with its defaults filled in.
func (w *Worker) cfg() jobs.Config { return w.Config.WithDefaults() }

// starter is the worker's side of the job records, slots and queues.
func (w *Worker) starter() *jobs.Starter {
	return &jobs.Starter{Store: w.Store, Queue: w.Queue, JobsQueueURL: w.JobsQueueURL, OpsQueueURL: w.OpsQueueURL, MaxOpenJobs: w.MaxOpenJobs, Now: w.Now}
}

// handler handles one message of its kind.
type handler func(w *Worker, ctx context.Context, msg jobs.Message) error

// routes is every kind of message the worker handles, and its handler: the
// one table a new kind is added to.
var routes = map[jobs.Kind]handler{
	jobs.KindStep:  func(w *Worker, ctx context.Context, m jobs.Message) error { return w.Step(ctx, m.JobID) },
	jobs.KindSweep: func(w *Worker, ctx context.Context, _ jobs.Message) error { return w.coalescedSweep(ctx) },
	jobs.KindSweepReconcile: func(w *Worker, ctx context.Context, _ jobs.Message) error {
		// The counters are reconciled even when the sweep itself is
		// coalesced away.
		return errors.Join(w.coalescedSweep(ctx), w.ReconcileDepths(ctx))
	},
	jobs.KindRecover: func(w *Worker, ctx context.Context, _ jobs.Message) error { _, err := w.Recover(ctx); return err },
	jobs.KindGauges:  func(w *Worker, ctx context.Context, m jobs.Message) error { return w.PublishDepths(ctx, m.TenantID) },
	jobs.KindDeadNotice: func(w *Worker, ctx context.Context, m jobs.Message) error {
		if m.DeadNotice == nil {
			w.Log.ErrorContext(ctx, "delivery.dead notice without its window dropped")
			return nil
		}
		return w.SummarizeDeaths(ctx, *m.DeadNotice)
	},
}

// Handle routes each message of the batch to its kind's handler (routes).
// A handler that fails is reported, so SQS redelivers its message and the
// job resumes; a message that cannot be decoded, or of no known kind, is
// dropped.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, m := range ev.Records {
		var msg jobs.Message
		err := json.Unmarshal([]byte(m.Body), &msg)
		h, known := routes[msg.Kind]
		if err != nil || !known {
			w.Log.ErrorContext(ctx, "malformed job message dropped", "message_id", m.MessageId, "kind", string(msg.Kind))
			continue
		}
		if err := h(w, ctx, msg); err != nil {
			w.Log.ErrorContext(ctx, "replay step failed; SQS will redeliver it", "job_id", msg.JobID, "kind", string(msg.Kind), "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// Enqueue sends a message (after delay): a job's step to the jobs queue,
// any other kind (sweep, gauges, recovery) to the operations queue
// (jobs.Starter.Enqueue).
func (w *Worker) Enqueue(ctx context.Context, msg jobs.Message, delay time.Duration) error {
	return w.starter().Enqueue(ctx, msg, delay)
}

// enqueueJob sends a job's message (after delay): a tenant's to the jobs
// queue, the operator's to the operations queue (jobs.Starter.EnqueueJob).
func (w *Worker) enqueueJob(ctx context.Context, j *domain.ReplayJob, delay time.Duration) error {
	return w.starter().EnqueueJob(ctx, j, delay)
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
	n := w.cfg().StepSends
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
	return time.Duration(float64(out.sent)/w.cfg().Rate*float64(time.Second)) + time.Second, nil
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
		jobs.Skip(j, id, reason)
		return d, false, nil
	}
	d, err = w.Store.ClaimForReplay(ctx, id, j.TenantID, j.JobID, w.cfg().Stale)
	switch {
	case errors.Is(err, store.ErrNotFound):
		jobs.Skip(j, id, "not_found")
		return d, false, nil
	case errors.Is(err, store.ErrNotDead):
		jobs.Skip(j, id, "not_dead")
		return d, false, nil
	case errors.Is(err, store.ErrReplayInFlight):
		jobs.Skip(j, id, "replay_in_progress")
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

// delay paces the n-th send of a step (jobs.Config.Delay).
func (w *Worker) delay(n int) int32 { return w.cfg().Delay(n, w.Rand) }

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
	if err := w.Enqueue(ctx, jobs.Message{Kind: jobs.KindSweep}, 5*time.Second); err != nil {
		return err
	}
	return w.Enqueue(ctx, jobs.Message{Kind: jobs.KindSweep}, 90*time.Second)
}

// Start records a new job and sets it running (jobs.Starter.Start).
func (w *Worker) Start(ctx context.Context, j *domain.ReplayJob) error {
	return w.starter().Start(ctx, j)
}

// eraseStep runs one step of a tenant's erasure (erasure.Eraser), then
// completes the job or sends its next step.
func (w *Worker) eraseStep(ctx context.Context, j *domain.ReplayJob) error {
	e := erasure.Eraser{Store: w.Store, Erasures: w.Erasures, Outbox: w.Outbox, DLQ: w.dlq(), Now: w.Now}
	done, err := e.Step(ctx, j)
	if err != nil {
		return err
	}
	if done {
		return w.complete(ctx, j)
	}
	return w.enqueueJob(ctx, j, 0)
}

// dlq is the delivery DLQ.
func (w *Worker) dlq() dlq.Queue { return dlq.Queue{SQS: w.Queue, URL: w.DLQURL} }

// release gives back the place a completed tenant's job held.
func (w *Worker) release(ctx context.Context, j *domain.ReplayJob) error {
	return w.starter().Release(ctx, j)
}

// Recover sends again the jobs idle longer than JobIdle
// (jobs.Starter.Recover) and returns how many.
func (w *Worker) Recover(ctx context.Context) (int, error) {
	return w.starter().Recover(ctx, w.cfg().JobIdle, w.Log)
}

// PublishDepths publishes the DLQ depth gauges (dlq.Depths.Publish).
func (w *Worker) PublishDepths(ctx context.Context, tenant string) error {
	return w.depths().Publish(ctx, tenant)
}

// ReconcileDepths reconciles the DLQ depth counters (dlq.Depths.Reconcile).
func (w *Worker) ReconcileDepths(ctx context.Context) error {
	return w.depths().Reconcile(ctx)
}

func (w *Worker) depths() *dlq.Depths {
	return &dlq.Depths{Counters: w.Depths, Reconciler: w.Reconciler, Metrics: w.Metrics, Log: w.Log}
}
