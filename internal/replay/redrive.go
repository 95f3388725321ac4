package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
)

// redriveStep moves up to a step's worth of messages (StepSends) from the
// DLQ back to the delivery queue, paced: it never receives more than it may
// still send, so a step sends at most its step size. Each message is sent before it is deleted, so a stop
// anywhere leaves it in the DLQ or in flight (at worst both: a duplicate,
// never a loss). A delivery that is dead is claimed first, so a concurrent
// tenant replay does not send it twice; a message whose delivery was
// delivered or replayed since is a stale copy and is only deleted.
func (w *Worker) redriveStep(ctx context.Context, j *domain.ReplayJob) error {
	if j.Status != domain.StatusRunning {
		j.Status = domain.StatusRunning
		if err := w.Store.SaveJob(ctx, j); err != nil {
			return err
		}
	}
	budget := w.cfg().StepSends
	sent, handled, empty := 0, 0, 0
	// Messages sent to the DLQ after the job began (deaths since, including
	// of deliveries this job sent back) are not this job's: they are left,
	// hidden until the step ends so the step does not see them twice.
	var later []sqstypes.Message
	defer func() { w.dlq().Show(ctx, later) }()
	for sent < budget && empty < 2 {
		msgs, err := w.dlq().Receive(ctx, budget-sent, 10*time.Minute)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			empty++
			continue
		}
		empty = 0
		for _, m := range msgs {
			if dlq.SentAt(m).After(j.CreatedAt) {
				later = append(later, m)
				continue
			}
			handled++
			j.Matched++
			ok, err := w.redriveOne(ctx, j, m, sent)
			if err != nil {
				return err
			}
			if ok {
				sent++
			}
		}
		j.Steps++
		if err := w.Store.SaveJob(ctx, j); err != nil {
			return err
		}
	}
	if handled == 0 || empty >= 2 {
		return w.complete(ctx, j)
	}
	return w.enqueueJob(ctx, j, time.Duration(float64(sent)/w.cfg().Rate*float64(time.Second)))
}

// redriveOne handles one DLQ message and reports whether it was sent back.
func (w *Worker) redriveOne(ctx context.Context, j *domain.ReplayJob, m sqstypes.Message, n int) (bool, error) {
	body := aws.ToString(m.Body)
	msg, err := message.Decode(body)
	if err != nil {
		// Cannot be delivered as it is: left in the DLQ for a human.
		j.Failed++
		skip(j, aws.ToString(m.MessageId), "malformed_message")
		return false, nil
	}
	d, err := w.Store.Delivery(ctx, msg.DeliveryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d = domain.Delivery{DeliveryID: msg.DeliveryID, State: domain.StatePending}
	case err != nil:
		return false, err
	}
	if isStale(d, dlq.SentAt(m)) {
		skip(j, msg.DeliveryID, "stale_copy")
		return false, w.dlq().Delete(ctx, m)
	}
	claimed := false
	// Dead, or claimed and not released: claimed (again, if by this job
	// before it stopped, which the store allows) before it is sent.
	if d.State == domain.StateDead || d.ReplayJob != "" {
		_, err := w.Store.ClaimForReplay(ctx, msg.DeliveryID, "", j.JobID, w.cfg().Stale)
		switch {
		case errors.Is(err, store.ErrReplayInFlight), errors.Is(err, store.ErrNotDead):
			// A tenant's replay has it: that replay sends it; this copy goes.
			skip(j, msg.DeliveryID, "replay_in_progress")
			return false, w.dlq().Delete(ctx, m)
		case err != nil:
			return false, err
		}
		claimed = true
	}
	// Dead (now claimed), or pending with no replay since: its death was not
	// recorded, and this message is its only copy. Either way, send it back,
	// its age counted from now.
	if again, err := message.Replayed(body, w.now()); err == nil {
		body = again
	}
	// In its tenant's message group (message.GroupID), as enqueue sent it.
	in := &sqs.SendMessageInput{QueueUrl: &w.DeliveryQueueURL, MessageBody: &body, DelaySeconds: w.delay(n), MessageGroupId: message.GroupID(msg.TenantID)}
	if _, err := w.Queue.SendMessage(ctx, in); err != nil {
		return false, fmt.Errorf("redrive delivery %s: %w", msg.DeliveryID, err)
	}
	if claimed {
		if err := w.Store.ReleaseReplay(ctx, msg.DeliveryID, j.JobID); err != nil {
			return false, err
		}
	}
	j.Replayed++
	w.Metrics.Put(metrics.Replayed, 1, map[string]string{metrics.DimensionTenant: msg.TenantID})
	return true, w.dlq().Delete(ctx, m)
}

// Sweep deletes from the DLQ the messages whose deliveries were delivered or
// replayed after the message was sent, records the death of a delivery whose
// message is here while its record still says pending or does not exist
// (its last attempt was cut off before it was recorded), and leaves every
// other message as it was. A death is recorded on the record as the sweep
// read it only: one made or changed meanwhile is read again and acted on as
// it is. It looks at each message once (each is hidden while the sweep runs,
// then made visible again) and returns how many it deleted and kept.
func (w *Worker) Sweep(ctx context.Context) (deleted, kept int, err error) {
	// Each message is hidden for two seconds only, so that a sweep never
	// keeps messages from anyone else for long; the sweep stops when three
	// receives in a row bring nothing it has not seen.
	seen := map[string]bool{}
	deadline := w.now().Add(2 * time.Minute)
	for quiet := 0; quiet < 3 && w.now().Before(deadline); {
		msgs, err := w.dlq().Receive(ctx, 10, 2*time.Second)
		if err != nil {
			return deleted, kept, err
		}
		fresh := false
		for _, m := range msgs {
			if seen[aws.ToString(m.MessageId)] {
				continue
			}
			seen[aws.ToString(m.MessageId)], fresh = true, true
			msg, derr := message.Decode(aws.ToString(m.Body))
			if derr != nil {
				kept++
				continue
			}
			d, gerr := w.Store.Delivery(ctx, msg.DeliveryID)
			if errors.Is(gerr, store.ErrNotFound) {
				// No record at all: every attempt stopped before it could
				// write one. The message is all there is; record it dead,
				// from the message, if there still is no record then.
				d, gerr = unrecorded(msg), nil
			}
			if gerr == nil && missedDeath(d, dlq.SentAt(m)) {
				// SQS moved it here after its last attempt, but the attempt
				// was never recorded (the function stopped first): record the
				// death, so the tenant sees and can replay it.
				d, gerr = w.recordMissedDeath(ctx, d, msg, aws.ToString(m.Body), dlq.SentAt(m))
			}
			if gerr != nil || !isStale(d, dlq.SentAt(m)) || w.dlq().Delete(ctx, m) != nil {
				kept++
				continue
			}
			deleted++
		}
		if fresh {
			quiet = 0
		} else {
			quiet++
		}
	}
	w.Log.InfoContext(ctx, "DLQ swept", "deleted", deleted, "kept", kept)
	return deleted, kept, nil
}

// unrecorded is a delivery that has no record, as its message describes it:
// its ids, and no state.
func unrecorded(msg message.Message) domain.Delivery {
	return domain.Delivery{DeliveryID: msg.DeliveryID, TenantID: msg.TenantID, EndpointID: msg.EndpointID, EventID: msg.EventID, EventType: msg.EventType}
}

// missedDeath reports whether a DLQ message's delivery has no record, or is
// pending with no claim and no replay since the message was sent: nothing
// will ever move it, unless its death is recorded.
func missedDeath(d domain.Delivery, sent time.Time) bool {
	return (d.State == "" || d.State == domain.StatePending) && d.ReplayJob == "" && (d.ReplayedAt == nil || d.ReplayedAt.Before(sent))
}

// recordMissedDeath records the death of d, read as a missed one, on the
// record as it was read only (none, if it had none): a record made or
// changed since (a copy of the delivery attempted at that moment) is not
// overwritten but read again, and its death recorded only if it still is a
// missed one. It returns the record as it now is.
func (w *Worker) recordMissedDeath(ctx context.Context, d domain.Delivery, msg message.Message, body string, sent time.Time) (domain.Delivery, error) {
	for try := 0; try < 3; try++ {
		a := domain.Attempt{Number: d.Attempts + 1, At: w.now().UTC(), Error: "death_not_recorded"}
		err := w.Store.RecordAttemptIfUnchanged(ctx, d, a, domain.Outcome{State: domain.StateDead, DeadReason: domain.ReasonAttemptsExhausted, Message: body})
		if err == nil {
			w.Log.WarnContext(ctx, "recorded a death its attempt did not", "delivery_id", d.DeliveryID, "tenant_id", d.TenantID)
			w.noteMissedDeath(ctx, d)
			d.State = domain.StateDead
			return d, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			w.Log.ErrorContext(ctx, "cannot record a missed death", "delivery_id", d.DeliveryID, "error", err.Error())
			return d, err
		}
		d, err = w.Store.Delivery(ctx, d.DeliveryID)
		if errors.Is(err, store.ErrNotFound) {
			d, err = unrecorded(msg), nil
		}
		if err != nil || !missedDeath(d, sent) {
			return d, err
		}
	}
	err := fmt.Errorf("record the death of delivery %s: %w", d.DeliveryID, store.ErrConflict)
	w.Log.ErrorContext(ctx, "cannot record a missed death", "delivery_id", d.DeliveryID, "error", err.Error())
	return d, err
}
