package streamreprocess

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/hookline/hookline/internal/enqueue"
)

// Bus puts events on the operator's EventBridge bus: the parked
// operational events (enqueue.ParkedEvent) go there again.
type Bus interface {
	PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ Bus = (*eventbridge.Client)(nil)

// resend puts a parked operational event on the bus it was meant for, as
// enqueue would have, again after a failure, up to Attempts times.
func (r *Reprocessor) resend(ctx context.Context, res Result, p enqueue.ParkedEvent) Result {
	log := r.log().With("message_id", res.MessageID, "bus", p.Bus, "detail_type", p.DetailType)
	if r.Bus == nil {
		res.Outcome, res.Error = Failed, "a parked operational event, and no EventBridge client to put it with"
		log.WarnContext(ctx, "parked operational event kept", "error", res.Error)
		return res
	}
	entry := p.Entry()
	for attempt := 1; ; attempt++ {
		err := r.putOnce(ctx, entry)
		if err == nil {
			res.Outcome = Resent
			log.InfoContext(ctx, "parked operational event put on the operator's bus", "retries", res.Retries)
			return res
		}
		if attempt >= r.attempts() || ctx.Err() != nil {
			res.Outcome, res.Error = Failed, fmt.Sprintf("put on the operator's bus, after %d attempts: %v", attempt, err)
			log.WarnContext(ctx, "parked operational event kept", "error", res.Error)
			return res
		}
		res.Retries++
		if err := r.sleep(ctx, retryDelay(attempt)); err != nil {
			res.Outcome, res.Error = Failed, err.Error()
			return res
		}
	}
}

// putOnce sends one PutEvents request of entry.
func (r *Reprocessor) putOnce(ctx context.Context, entry ebtypes.PutEventsRequestEntry) error {
	out, err := r.Bus.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
	if err != nil {
		return err
	}
	if out.FailedEntryCount > 0 {
		var codes []string
		for _, e := range out.Entries {
			if e.ErrorCode != nil {
				codes = append(codes, aws.ToString(e.ErrorCode)+": "+aws.ToString(e.ErrorMessage))
			}
		}
		return fmt.Errorf("the entry failed: %s", strings.Join(codes, "; "))
	}
	return nil
}
