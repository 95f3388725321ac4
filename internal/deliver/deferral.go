package deliver

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
)

// deferMessage sends the attempt's message again, delayed, for w, carrying
// the attempts made before this receive (which made none), and reports
// the original done (deleted): the new message's receive count starts
// again, so waiting burns neither an attempt nor a receive. A wait for
// the endpoint (rate limit, breaker, gate) counts one more deferral; a
// dependency's hitch one more hitch, its delay doubling with each (the
// bound on how often: every 5 s at first, every 15 min at most, until
// the age cap); a hop keeps the due time. A message that cannot be sent
// again is left, to come back after the queue's visibility timeout.
func (h *Handler) deferMessage(ctx context.Context, at *attempt, w Wait) bool {
	msg := at.in.Message
	msg.Attempts = at.in.Attempt - 1
	delay := at.deferDelay
	switch w {
	case WaitDependency:
		delay = h.hitchDelay(msg.Hitches)
		msg.Hitches++
	case WaitBackoff:
		delay = msg.NotBefore.Sub(h.now())
	default:
		msg.Deferrals++
	}
	return h.sendAgain(ctx, at, msg, delay, w)
}

// sendAgain sends msg to the delivery queue, delayed by delay (whole
// seconds, 1 to MaxDeferDelay), in its tenant's message group, and
// reports whether it was sent.
func (h *Handler) sendAgain(ctx context.Context, at *attempt, msg message.Message, delay time.Duration, w Wait) bool {
	delay = wholeSeconds(delay)
	body, err := message.Encode(msg)
	if err == nil {
		_, err = h.Queue.SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: &h.QueueURL, MessageBody: aws.String(string(body)),
			DelaySeconds: int32(delay / time.Second), MessageGroupId: message.GroupID(msg.TenantID),
		})
	}
	if err != nil {
		at.log.ErrorContext(ctx, "cannot send the message again to wait; it comes back after the visibility timeout", "wait", string(w), "error", err.Error())
		return false
	}
	at.mb.Put(metrics.Deferred, 1, map[string]string{metrics.DimensionReason: string(w)})
	at.log.InfoContext(ctx, "message sent again, delayed", "wait", string(w), "delay_s", int(delay.Seconds()))
	return true
}
