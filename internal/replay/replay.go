package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

// Store is what a replay needs of the state table, composed of one small
// port per use: a *store.Store, on a fake table in the tests (storefake).
type Store interface {
	Checkpoints
	DeadLetters
	Claims
	Deliveries
}

// Checkpoints saves a replay's job record (conditional on the version
// read: store.ErrConflict).
type Checkpoints interface {
	SaveJob(ctx context.Context, j *domain.Job) error
}

// DeadLetters lists a tenant's dead deliveries, for a replay by filter.
type DeadLetters interface {
	ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error)
}

// Claims takes a dead delivery for a job and lets it go once its message is
// sent.
type Claims interface {
	ClaimForReplay(ctx context.Context, reads []domain.Delivery, tenantID, job string, stale time.Duration) ([]domain.Delivery, []error)
	ReleaseReplay(ctx context.Context, ids []string, job string) error
}

// Deliveries reads deliveries, a batch at a time, and endpoints: one, or
// a tenant's (a replay since a time selects through them).
type Deliveries interface {
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
	Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error)
}

var _ Store = (*store.Store)(nil)

// Replayer runs the steps of a tenant's replay of dead deliveries, by ids
// (domain.KindIDs) or by filter (domain.KindFilter): its Step is the
// jobs.StepFunc of both kinds.
type Replayer struct {
	Store Store
	// Queue and DeliveryQueueURL receive the replayed messages.
	Queue            message.BatchSender
	DeliveryQueueURL string
	// Config paces the sends and sizes the steps (jobs.Config's defaults).
	Config jobs.Config
	// Now is the clock; Rand draws jitter in [0, 1). Defaults: time.Now, none.
	Now  func() time.Time
	Rand func() float64
	// Metrics receives Replayed. Nil: none.
	Metrics *metrics.Writer
	// Tracer emits each step's span ("replay.step", in the job's own
	// trace) and each replayed delivery's ("replay.send", in its event's
	// trace: the replayed attempts are its children). Nil: none emitted;
	// the messages still carry their trace context.
	Tracer *trace.Tracer
	// MessageLog lists the events a replay since a time (domain.KindSince)
	// selects and reads the outbox items it rebuilds deliveries from. Nil:
	// such a job's steps fail.
	MessageLog MessageLog
	// PayloadRetention is how long after its occurred_at an event's
	// payload may be sent again (the API's rule for the message log and
	// resends). Default domain.DefaultPayloadRetention.
	PayloadRetention time.Duration
}

// stepSpan starts the span of one of j's steps, in the trace derived
// from the job.
func (w *Replayer) stepSpan(j *domain.Job) (end func(context.Context)) {
	sp := w.Tracer.Start(trace.Derive("job/"+j.JobID, j.CreatedAt), "replay.step")
	return func(ctx context.Context) {
		sp.End(ctx, slog.String("tenant_id", j.TenantID), slog.String("job_id", j.JobID), slog.Int("step", j.Steps),
			slog.Int("matched", j.Matched), slog.Int("replayed", j.Replayed))
	}
}

func (w *Replayer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// cfg is the Config with its defaults filled in.
func (w *Replayer) cfg() jobs.Config { return w.Config.WithDefaults() }

// Step runs one step of replay j: it resumes the step a stopped worker
// left, or selects the next deliveries, checkpoints them and replays them
// paced. It reports done when nothing follows, else how long until the
// paced sends are due (jobs.StepFunc).
func (w *Replayer) Step(ctx context.Context, j *domain.Job) (done bool, next time.Duration, err error) {
	defer w.stepSpan(j)(ctx)
	ids := j.Pending
	// A resumed step is the last if its checkpoint says so: a filter's last
	// page leaves no cursor (a job by ids is checked below).
	done = len(ids) > 0 && (j.Kind == domain.KindFilter || j.Kind == domain.KindSince) && j.Cursor == ""
	if len(ids) == 0 {
		if ids, done, err = w.select_(ctx, j); err != nil {
			return false, 0, err
		}
		// Checkpoint before touching any delivery: a stop from here on is
		// resumed from Pending.
		j.Pending, j.Status = ids, domain.StatusRunning
		if done && len(ids) == 0 {
			return true, 0, nil
		}
		if err := w.Store.SaveJob(ctx, j); err != nil {
			return false, 0, err
		}
	}
	one := w.replayChunk
	if j.Kind == domain.KindSince {
		one = w.sinceChunk
	}
	span, err := w.sendPaced(ctx, j, ids, one)
	if err != nil {
		return false, 0, err
	}
	j.Pending, j.Steps = nil, j.Steps+1
	if done || w.idsDone(j) {
		return true, 0, nil
	}
	if err := w.Store.SaveJob(ctx, j); err != nil {
		return false, 0, err
	}
	return false, span, nil
}

// idsDone reports whether a replay by ids has sent its last id.
func (w *Replayer) idsDone(j *domain.Job) bool {
	if j.Kind != domain.KindIDs {
		return false
	}
	a, err := jobs.ArgsOf[IDs](j)
	return err == nil && j.Cursor == strconv.Itoa(len(a.IDs))
}

// select_ picks the ids of the next step and advances the cursor; done is
// true when nothing follows them.
func (w *Replayer) select_(ctx context.Context, j *domain.Job) ([]string, bool, error) {
	n := w.cfg().StepSends
	switch j.Kind {
	case domain.KindIDs:
		a, err := jobs.ArgsOf[IDs](j)
		if err != nil {
			return nil, false, err
		}
		from, _ := strconv.Atoi(j.Cursor)
		to := min(len(a.IDs), from+n)
		j.Cursor = strconv.Itoa(to)
		return a.IDs[from:to], to == len(a.IDs), nil
	case domain.KindFilter:
		a, err := jobs.ArgsOf[Filter](j)
		if err != nil {
			return nil, false, err
		}
		ds, next, err := w.Store.ListDead(ctx, j.TenantID, a.Filter, n, j.Cursor)
		if err != nil {
			return nil, false, err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.DeliveryID
		}
		j.Cursor = next
		return ids, next == "", nil
	case domain.KindSince:
		return w.selectSince(ctx, j, n)
	}
	return nil, true, fmt.Errorf("replay job %s: unknown kind %q", j.JobID, j.Kind)
}

// sendChunk sends the deliveries ids of a chunk (at most chunkSize, as
// snap read them) again, or counts why not, in order.
type sendChunk func(ctx context.Context, j *domain.Job, ids []string, snap store.Snapshot, disabled map[string]bool, out *replaySends) error

// chunkSize is how many deliveries of a step are claimed at once (and
// their claims released at once): an SQS batch's. A step's writes are
// then a round trip per ten deliveries, not one per delivery: the
// soak's replay of 20,007 deliveries at 200 a second ran at about 35, its
// claims and releases one after another.
const chunkSize = 10

// sendPaced sends each delivery of a step, a chunk at a time, each due
// its place in the step over the job's rate after the step began
// (jobs.Config.Delay), and returns how long until the last of them is due
// (jobs.Config.Next): the next step starts then, so that a job whose steps'
// work is quicker than their span sends at its rate, and one whose work is
// slower sends as fast as its work goes.
func (w *Replayer) sendPaced(ctx context.Context, j *domain.Job, ids []string, send sendChunk) (time.Duration, error) {
	out := &replaySends{w: w, j: j, start: w.now()}
	disabled := map[string]bool{}
	var snap store.Snapshot
	for i := 0; i < len(ids); i += chunkSize {
		if i%100 == 0 {
			// Read the deliveries a hundred at a time, not one by one: the
			// claim is what decides, so a read a moment old is fine.
			var err error
			if snap, err = w.Store.Load(ctx, ids[i:min(len(ids), i+100)], nil); err != nil {
				return 0, err
			}
		}
		chunk := ids[i:min(len(ids), i+chunkSize)]
		j.Matched += len(chunk)
		if err := send(ctx, j, chunk, snap, disabled, out); err != nil {
			return 0, err
		}
	}
	if err := out.flush(ctx); err != nil {
		return 0, err
	}
	return w.cfg().Next(out.sent, w.now().Sub(out.start)), nil
}

// replayChunk claims the dead deliveries ids for job j, at once, and
// sends their stored messages again, in order (a replay by ids or by
// filter).
func (w *Replayer) replayChunk(ctx context.Context, j *domain.Job, ids []string, snap store.Snapshot, disabled map[string]bool, out *replaySends) error {
	ds, claimed, err := w.claimAll(ctx, j, ids, snap, disabled)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if claimed[i] {
			if err := out.add(ctx, id, ds[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimAll checks each delivery of ids (as snap read it), one after
// another, then claims those to replay at once (one write for the chunk,
// store.ClaimForReplay), and counts the rest as claim does, in order.
func (w *Replayer) claimAll(ctx context.Context, j *domain.Job, ids []string, snap store.Snapshot, disabled map[string]bool) ([]domain.Delivery, []bool, error) {
	ds := make([]domain.Delivery, len(ids))
	reasons := make([]string, len(ids))
	errs := make([]error, len(ids))
	var reads []domain.Delivery
	var at []int
	for i, id := range ids {
		d, found := snap.Deliveries[id]
		r, err := w.check(ctx, j, d, found, disabled)
		if err != nil {
			return nil, nil, err
		}
		ds[i], reasons[i] = d, r
		if r == "" {
			reads, at = append(reads, d), append(at, i)
		}
	}
	if len(reads) > 0 {
		got, gotErrs := w.Store.ClaimForReplay(ctx, reads, j.TenantID, j.JobID, w.cfg().Stale)
		for k, i := range at {
			ds[i], errs[i] = got[k], gotErrs[k]
		}
	}
	claimed := make([]bool, len(ids))
	for i, id := range ids {
		var err error
		claimed[i], err = w.counted(j, id, reasons[i], errs[i])
		if err != nil {
			return nil, nil, err
		}
	}
	return ds, claimed, nil
}

// claim checks delivery id (as snap read it) and claims it for job j. It
// reports false, and counts why, for a delivery left alone: skipped, or
// replayed by this job before it stopped and resumed.
func (w *Replayer) claim(ctx context.Context, j *domain.Job, id string, snap store.Snapshot, disabled map[string]bool) (domain.Delivery, bool, error) {
	ds, claimed, err := w.claimAll(ctx, j, []string{id}, snap, disabled)
	if err != nil {
		return domain.Delivery{}, false, err
	}
	return ds[0], claimed[0], nil
}

// counted counts delivery id of job j by what its check said (reason) or,
// checked fine, by what its claim answered (err): it reports whether the
// delivery was claimed, to be sent; a claim's unknown error is returned.
func (w *Replayer) counted(j *domain.Job, id, reason string, err error) (bool, error) {
	if reason == "replayed" {
		j.Replayed++ // sent by this job before it stopped and resumed
		return false, nil
	}
	if reason != "" {
		jobs.Skip(j, id, reason)
		return false, nil
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		jobs.Skip(j, id, domain.SkipNotFound)
		return false, nil
	case errors.Is(err, store.ErrNotDead):
		jobs.Skip(j, id, domain.SkipNotDead)
		return false, nil
	case errors.Is(err, store.ErrReplayInFlight):
		jobs.Skip(j, id, domain.SkipReplayInProgress)
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// replaySends gathers a replay step's claimed deliveries into paced SQS
// batches.
type replaySends struct {
	w       *Replayer
	j       *domain.Job
	batch   []sqstypes.SendMessageBatchRequestEntry
	claimed []string  // the claimed deliveries in batch
	sent    int       // how many this step has paced so far
	start   time.Time // when the step began, what its sends are paced from
}

// add paces claimed delivery d's fresh message into the batch, sending the
// batch first when it is full.
func (r *replaySends) add(ctx context.Context, id string, d domain.Delivery) error {
	// Its age counts from the replay: an event older than the retry
	// policy's maximum age is still attempted.
	var tp string
	body, err := message.Replayed(d.Message, r.w.now(), func(m *message.Message) { tp = r.traceSend(ctx, m) })
	if err != nil {
		body = d.Message // deliver parks a malformed message dead again, with its reason
	}
	return r.addBody(ctx, id, body, cmp.Or(d.TenantID, r.j.TenantID), tp, true)
}

// addBody paces the message body of delivery id (of tenantID, in the
// trace tp; claimed by the job when claimed) into the batch, sending the
// batch first when it is full.
func (r *replaySends) addBody(ctx context.Context, id, body, tenantID, tp string, claimed bool) error {
	delay := r.w.cfg().Delay(r.sent, r.w.now().Sub(r.start), r.w.Rand)
	r.sent++
	// In its tenant's message group (message.GroupID), as enqueue sent it.
	e := sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(r.batch))), MessageBody: aws.String(body), DelaySeconds: delay,
		MessageGroupId: message.GroupID(tenantID), MessageAttributes: message.TraceAttributes(tp)}
	if !message.Fits(r.batch, e) {
		// Ten entries, or SQS's 256 KiB for the request: send what is
		// gathered first.
		if err := r.flush(ctx); err != nil {
			return err
		}
		e.Id = aws.String("0")
	}
	r.batch = append(r.batch, e)
	if claimed {
		r.claimed = append(r.claimed, id)
	}
	return nil
}

// traceSend emits the span of m's replay in its event's trace and makes
// it m's trace context, which it returns: the replayed attempts are the
// span's children.
func (r *replaySends) traceSend(ctx context.Context, m *message.Message) string {
	sp := r.w.Tracer.Start(trace.Or(m.TraceParent, trace.Derive(trace.EventKey(m.TenantID, m.EventID), m.OccurredAt)), "replay.send")
	m.TraceParent = sp.TraceParent()
	sp.End(ctx, slog.String("tenant_id", m.TenantID), slog.String("job_id", r.j.JobID), slog.String("delivery_id", m.DeliveryID))
	return m.TraceParent
}

// flush sends the batch and releases its claimed deliveries' claims,
// counting every message replayed.
func (r *replaySends) flush(ctx context.Context) error {
	if len(r.batch) == 0 {
		return nil
	}
	if err := message.SendBatch(ctx, r.w.Queue, r.w.DeliveryQueueURL, r.batch); err != nil {
		return err
	}
	// The batch's claims released at once (one write).
	if err := r.w.Store.ReleaseReplay(ctx, r.claimed, r.j.JobID); err != nil {
		return err
	}
	r.j.Replayed += len(r.batch)
	r.w.Metrics.Put(metrics.Replayed, float64(len(r.batch)), map[string]string{metrics.DimensionTenant: r.j.TenantID})
	r.batch, r.claimed = r.batch[:0], r.claimed[:0]
	return nil
}

// check looks at a delivery (as read before it is claimed; found false if
// it does not exist) and says why it is to be skipped ("" to replay it;
// "replayed" if this job already sent it).
func (w *Replayer) check(ctx context.Context, j *domain.Job, d domain.Delivery, found bool, disabled map[string]bool) (string, error) {
	switch {
	case !found:
		return domain.SkipNotFound, nil
	case j.TenantID != "" && d.TenantID != j.TenantID:
		return domain.SkipNotFound, nil // another tenant's: as good as missing
	case d.ReplayClaimedBy == j.JobID:
		return "", nil // claimed by this job before it stopped: finish it
	case d.ReplayedBy == j.JobID && d.ReplayClaimedBy == "":
		return "replayed", nil // sent by this job before it stopped and resumed
	case d.State != domain.StateDead:
		return domain.SkipNotDead, nil
	case d.Message == "":
		return domain.SkipNoMessage, nil
	}
	off, err := w.endpointOff(ctx, d, disabled)
	if err != nil || !off {
		return "", err
	}
	return domain.SkipEndpointDisabled, nil
}

// endpointOff reports whether d's endpoint is disabled or gone, read once
// per step (disabled holds what was read).
func (w *Replayer) endpointOff(ctx context.Context, d domain.Delivery, disabled map[string]bool) (bool, error) {
	key := d.TenantID + "/" + d.EndpointID
	off, seen := disabled[key]
	if !seen {
		ep, err := w.Store.Endpoint(ctx, d.TenantID, d.EndpointID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		off = err != nil || ep.Disabled
		disabled[key] = off
	}
	return off, nil
}
