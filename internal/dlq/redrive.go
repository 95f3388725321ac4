package dlq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// RedriveStore is what the redrive needs of the state table: its job's
// checkpoints, the deliveries' records, and their claims.
type RedriveStore interface {
	SaveJob(ctx context.Context, j *domain.Job) error
	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	ClaimForReplay(ctx context.Context, reads []domain.Delivery, tenantID, job string, stale time.Duration) ([]domain.Delivery, []error)
	ReleaseReplay(ctx context.Context, ids []string, job string) error
}

var _ RedriveStore = (*store.Store)(nil)

// Sender sends a message (an *sqs.Client): the redrive's back to the
// delivery queue, the sweep's moves of arrivals to the DLQ.
type Sender interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Redriver runs the steps of the operator's redrive of the whole DLQ
// (domain.KindRedrive), on the operations queue.
type Redriver struct {
	Store RedriveStore
	DLQ   Queue
	// Queue and DeliveryQueueURL receive the messages sent back.
	Queue            Sender
	DeliveryQueueURL string
	// StepSends bounds a step's sends, Stale is how old another job's claim
	// must be to be taken over (jobs.Config's, filled in).
	StepSends int
	Stale     time.Duration
	// Delay paces the n-th send of a step (jobs.Config.Delay).
	Delay func(n int) int32
	// Metrics receives Replayed. Nil: none.
	Metrics *metrics.Writer
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (w *Redriver) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Step moves up to a step's worth of messages (StepSends) from the
// DLQ back to the delivery queue, paced: it never receives more than it may
// still send, so a step sends at most its step size. Each message is sent before it is deleted, so a stop
// anywhere leaves it in the DLQ or in flight (at worst both: a duplicate,
// never a loss). A delivery that is dead is claimed first, so a concurrent
// tenant replay does not send it twice; a message whose delivery was
// delivered or replayed since is a stale copy and is only deleted.
//
// The job ends on what SQS counts, not on a run of empty receives (which a
// reader holding messages hidden, a sweep or a test, defeats): when a
// receive finds nothing visible and the DLQ counts no message visible and
// none hidden but those this step holds (sent after the job began, or
// malformed). While someone else holds messages the step ends not done,
// its next one redriveWait later; after redriveWaits such steps in a row
// with nothing moved, the job ends, the messages still hidden counted in
// Skipped (SkipHiddenElsewhere). wait is how long the next step should
// wait beyond its sends' pacing.
func (w *Redriver) Step(ctx context.Context, j *domain.Job) (done bool, sent int, wait time.Duration, err error) {
	a, err := w.begin(ctx, j)
	if err != nil {
		return false, 0, 0, err
	}
	budget := w.StepSends
	// Messages sent to the DLQ after the job began (deaths since, including
	// of deliveries this job sent back) are not this job's, and malformed
	// ones cannot be moved: they are held, hidden until the
	// step ends so the step does not see them twice, then shown again.
	var held []sqstypes.Message
	defer func() { w.DLQ.Show(ctx, held) }()
	paced := 0 // the step's sends paced so far, sent back or not
	for sent < budget {
		msgs, err := w.DLQ.Receive(ctx, budget-sent, 10*time.Minute)
		if err != nil {
			return false, sent, 0, err
		}
		if len(msgs) == 0 {
			return w.drained(ctx, j, a, sent, len(held))
		}
		var todo []dlqDelivery
		for _, m := range msgs {
			if SentAt(m).After(j.CreatedAt) {
				held = append(held, m)
				continue
			}
			msg, err := message.Decode(aws.ToString(m.Body))
			if err != nil {
				// Cannot be delivered as it is: left in the DLQ for a
				// human, counted once (while SkippedIDs names it), held.
				if id := aws.ToString(m.MessageId); j.SkippedIDs[id] != domain.SkipMalformedMessage {
					j.Matched++
					j.Failed++
					jobs.Skip(j, id, domain.SkipMalformedMessage)
				}
				held = append(held, m)
				continue
			}
			todo = append(todo, dlqDelivery{m, msg})
		}
		if len(todo) == 0 {
			continue
		}
		j.Matched += len(todo)
		n, err := w.redriveAll(ctx, j, todo, paced)
		sent, paced = sent+n, paced+len(todo)
		if err != nil {
			return false, sent, 0, err
		}
		j.Steps++
		a.DLQWaits = 0
		if err := w.Store.SaveJob(ctx, j); err != nil {
			return false, sent, 0, err
		}
	}
	return false, sent, 0, nil
}

// begin reads the job's arguments and, on its first step, records it
// running.
func (w *Redriver) begin(ctx context.Context, j *domain.Job) (*RedriveArgs, error) {
	a, err := jobs.ArgsOf[RedriveArgs](j)
	if err != nil || j.Status == domain.StatusRunning {
		return a, err
	}
	j.Status = domain.StatusRunning
	return a, w.Store.SaveJob(ctx, j)
}

// drained ends a step whose receive found nothing visible for the job,
// holding held messages hidden: done when SQS counts none visible and no
// more hidden than held; else not done while the job has waited fewer than
// redriveWaits times in a row, else done, what is left counted.
func (w *Redriver) drained(ctx context.Context, j *domain.Job, a *RedriveArgs, sent, held int) (bool, int, time.Duration, error) {
	visible, hidden, err := w.DLQ.Counts(ctx)
	if err != nil {
		return false, sent, 0, err
	}
	left := visible + max(0, hidden-held)
	if left == 0 {
		return true, sent, 0, nil
	}
	if a.DLQWaits < redriveWaits {
		a.DLQWaits++
		return false, sent, redriveWait, w.Store.SaveJob(ctx, j)
	}
	if j.Skipped == nil {
		j.Skipped = map[string]int{}
	}
	j.Skipped[domain.SkipHiddenElsewhere] += left
	return true, sent, 0, nil
}

// redriveWait is how long a redrive waits for DLQ messages that someone
// else holds hidden (or that SQS still counts), redriveWaits how many times
// in a row at most: 12 minutes with nothing moved, more than the longest
// any of hookline's readers hides a DLQ message (a redrive step's receive,
// 10 minutes, left by a step that stopped; a sweep's is 2 s).
const (
	redriveWait  = 15 * time.Second
	redriveWaits = 48
)

// moved is what became of a DLQ message the redrive handled.
type moved int

const (
	movedBack     moved = iota // sent back to the delivery queue
	movedStale                 // a stale copy, deleted
	movedInReplay              // a tenant's replay has it; this copy deleted
)

// redriveAll handles a receive's delivery messages at once (a round trip
// per receive of ten, not one per message), the k-th paced as the
// (first+k)-th send of the step, then counts what became of each, in
// order, and reports how many were sent back.
func (w *Redriver) redriveAll(ctx context.Context, j *domain.Job, ds []dlqDelivery, first int) (int, error) {
	outs := make([]moved, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for k, d := range ds {
		wg.Go(func() { outs[k], errs[k] = w.redriveOne(ctx, j.JobID, d, first+k) })
	}
	wg.Wait()
	n := 0
	for k, d := range ds {
		if errs[k] != nil {
			continue
		}
		msg := d.msg
		switch outs[k] {
		case movedStale:
			jobs.Skip(j, msg.DeliveryID, domain.SkipStaleCopy)
		case movedInReplay:
			jobs.Skip(j, msg.DeliveryID, domain.SkipReplayInProgress)
		default:
			n++
			j.Replayed++
			w.Metrics.Put(metrics.Replayed, 1, map[string]string{metrics.DimensionTenant: msg.TenantID})
		}
	}
	return n, errors.Join(errs...)
}

// dlqDelivery is a DLQ message and the delivery message it holds, decoded
// once (Step holds the malformed).
type dlqDelivery struct {
	m   sqstypes.Message
	msg message.Message
}

// redriveOne handles one DLQ delivery message, the n-th send of the step,
// and says what became of it.
func (w *Redriver) redriveOne(ctx context.Context, jobID string, dm dlqDelivery, n int) (moved, error) {
	m, msg, body := dm.m, dm.msg, aws.ToString(dm.m.Body)
	d, err := w.delivery(ctx, msg.DeliveryID)
	if err != nil {
		return 0, err
	}
	if IsStale(d, SentAt(m)) {
		return movedStale, w.DLQ.Delete(ctx, m)
	}
	claimed, err := w.claim(ctx, jobID, d)
	switch {
	case errors.Is(err, store.ErrReplayInFlight), errors.Is(err, store.ErrNotDead):
		// A tenant's replay has it: that replay sends it; this copy goes.
		return movedInReplay, w.DLQ.Delete(ctx, m)
	case err != nil:
		return 0, err
	}
	// Dead (now claimed), or pending with no replay since: its death was not
	// recorded, and this message is its only copy. Either way, send it back.
	if err := w.sendBack(ctx, body, msg, n); err != nil {
		return 0, err
	}
	if claimed {
		if err := w.Store.ReleaseReplay(ctx, []string{msg.DeliveryID}, jobID); err != nil {
			return 0, err
		}
	}
	return movedBack, w.DLQ.Delete(ctx, m)
}

// delivery is the delivery id a DLQ message is of, as stored; pending when
// the store has none.
func (w *Redriver) delivery(ctx context.Context, id string) (domain.Delivery, error) {
	d, err := w.Store.Delivery(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return domain.Delivery{DeliveryID: id, State: domain.StatePending}, nil
	}
	return d, err
}

// claim claims delivery d (as read) for job before its message is sent
// back, when it is dead or claimed and not released (again, if by this job
// before it stopped, which the store allows), and reports whether it did. A
// pending delivery with no replay since is not claimed: its death was not
// recorded, and its message is its only copy.
func (w *Redriver) claim(ctx context.Context, job string, d domain.Delivery) (bool, error) {
	if d.State != domain.StateDead && d.ReplayClaimedBy == "" {
		return false, nil
	}
	if _, errs := w.Store.ClaimForReplay(ctx, []domain.Delivery{d}, "", job, w.Stale); errs[0] != nil {
		return false, errs[0]
	}
	return true, nil
}

// sendBack sends a dead delivery's message body back to the delivery queue,
// its age counted from now, the n-th of the redrive's paced sends, in its
// tenant's message group (message.GroupID), as enqueue sent it.
func (w *Redriver) sendBack(ctx context.Context, body string, msg message.Message, n int) error {
	if again, err := message.Replayed(body, w.now()); err == nil {
		body = again
	}
	// Its trace context (the body's, kept) mirrored in its attribute.
	in := &sqs.SendMessageInput{QueueUrl: &w.DeliveryQueueURL, MessageBody: &body, DelaySeconds: w.Delay(n), MessageGroupId: message.GroupID(msg.TenantID),
		MessageAttributes: message.TraceAttributes(msg.TraceParent)}
	if _, err := w.Queue.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("redrive delivery %s: %w", msg.DeliveryID, err)
	}
	return nil
}
