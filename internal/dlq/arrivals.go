package dlq

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
)

// arrivalsHide is how long Arrivals hides each message it received: long
// enough for its check and move; a message whose move failed comes back
// for the next pass.
const arrivalsHide = time.Minute

// MoveArrivals works the arrivals queue: the messages SQS's redrive policy
// moved there from the delivery queue or the tenant lane after their last
// receive, which is what happens when the deliver function stopped during
// their attempts (a crash, a timeout) and never recorded their fate; the
// deaths it records go to the DLQ itself. Each arrival is checked as a DLQ
// message is (a missed death recorded, a stale copy or an erased tenant's
// message deleted) and the others are moved to the DLQ: sent there, then
// deleted here, so a stop between the two leaves a duplicate, never a
// loss. It returns how many it moved and deleted.
//
// Why a queue of its own: the sweep must check each message that enters
// the DLQ without SQS saying which are new, so a DLQ that SQS redrives to
// directly is received in full by every pass, each dead message about
// 4,032 times over its 14 days (issue 37). An arrival is received once.
// The price: a crashed delivery's message reaches the DLQ (and its depth
// alarm) at the next pass, within the schedule's 5 minutes, and the DLQ
// keeps it 14 days from its move (SQS's redrive kept the original enqueue
// time).
func (w *Sweeper) MoveArrivals(ctx context.Context) (moved, deleted int, err error) {
	if w.Arrivals.URL == "" {
		return 0, 0, nil
	}
	erased := map[string]bool{}
	deadline := w.now().Add(2 * time.Minute)
	var errs []error
	for w.now().Before(deadline) {
		msgs, err := w.Arrivals.Receive(ctx, 10, arrivalsHide)
		if err != nil {
			return moved, deleted, err
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			switch done, err := w.arrival(ctx, m, erased); {
			case err != nil:
				errs = append(errs, err)
			case done:
				deleted++
			default:
				moved++
			}
		}
	}
	w.Log.InfoContext(ctx, "DLQ arrivals moved", "moved", moved, "deleted", deleted, "failed", len(errs))
	return moved, deleted, errors.Join(errs...)
}

// arrival checks one arrival and moves it to the DLQ unless it deleted it
// (deleted true). An error leaves it in the arrivals queue, for the next
// pass.
func (w *Sweeper) arrival(ctx context.Context, m sqstypes.Message, erased map[string]bool) (deleted bool, err error) {
	msg, derr := message.Decode(aws.ToString(m.Body))
	if derr != nil {
		// Nothing to check: the DLQ keeps it as it is, as deliver's
		// malformed messages.
		return false, w.move(ctx, m, "", domain.ReasonMalformedMessage)
	}
	gone, gerr := w.erased(ctx, erased, msg.TenantID, false)
	if gerr != nil {
		return false, gerr
	}
	if gone {
		if !w.dropErased(ctx, w.Arrivals, m, msg) {
			return false, errors.New("delete an erased tenant's arrival")
		}
		return true, nil
	}
	done, d := w.checkRecord(ctx, w.Arrivals, m, msg, erased)
	switch {
	case done:
		return true, nil
	case d.DeliveryID == "":
		return false, errors.New("read the record of arrival " + msg.DeliveryID)
	}
	return false, w.move(ctx, m, msg.TenantID, deathReason(d.DeadReason))
}

// deathReason is a dead record's reason, attempts_exhausted for one that
// is not (yet) dead: a message SQS redrove ran out of receives.
func deathReason(r domain.DeadReason) domain.DeadReason {
	if r == "" {
		return domain.ReasonAttemptsExhausted
	}
	return r
}

// malformedGroup is the message group of an arrival that names no tenant
// (a group is only fair queues' hint: SQS accepts it on a standard queue).
const malformedGroup = "~malformed"

// move sends arrival m to the DLQ, in its tenant's message group and with
// the attributes deliver gives a death (message.DeadLetterAttributes),
// then deletes it from the arrivals queue.
func (w *Sweeper) move(ctx context.Context, m sqstypes.Message, tenantID string, reason domain.DeadReason) error {
	attrs := message.DeadLetterAttributes(string(reason), tenantID, "")
	group := message.GroupID(tenantID)
	if group == nil {
		group = aws.String(malformedGroup)
	}
	if _, err := w.Send.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &w.DLQ.URL, MessageBody: m.Body, MessageAttributes: attrs, MessageGroupId: group}); err != nil {
		return errors.Join(errors.New("move an arrival to the DLQ"), err)
	}
	return w.Arrivals.Delete(ctx, m)
}
