// Command enqueue is the Lambda function on the outbox table's stream: it
// fans each new outbox event out to the tenant's endpoints as messages on the
// delivery queue, and puts hookline's operational events on the operator's
// EventBridge bus. Wiring only; the logic is in internal/enqueue, the
// environment it reads in internal/fnenv (EnqueueEnv).
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

func main() { boot.Serve("enqueue", fnenv.LoadEnqueue, build) }

// build wires the enqueue function's handler from its environment.
func build(cfg fnenv.EnqueueEnv, log *slog.Logger, aws aws.Config) (any, error) {
	st := store.New(dynamodb.NewFromConfig(aws), cfg.StateTable)
	st.Retention = cfg.Retention()
	tracer, err := trace.NewTracer("enqueue", os.Stdout, cfg.TraceDaemon(), cfg.TraceSampleRate())
	if err != nil {
		return nil, err
	}
	h := &enqueue.Handler{
		Store:   st,
		Queue:   sqs.NewFromConfig(aws),
		Bus:     eventbridge.NewFromConfig(aws),
		Config:  config(cfg),
		Log:     log,
		Metrics: metrics.New(os.Stdout),
		Tracer:  tracer,
	}
	handle := h.Handle
	if rate := cfg.Faults[fault.EnqueueFail]; rate > 0 {
		// The soak only: an invocation may fail after its first request.
		f := &fault.FailAfterSend{Next: h.Queue, Rate: rate}
		h.Queue, handle = f, fault.EachInvocation(f, h.Handle)
	}
	return handle, nil
}

// config is the handler's Config from the environment; a zero (unset)
// field takes the handler's default (enqueue.Config.WithDefaults).
func config(cfg fnenv.EnqueueEnv) enqueue.Config {
	return enqueue.Config{
		QueueURL: cfg.QueueURL,
		// Zero (unset): the handler's default.
		SendConcurrency: cfg.SendConcurrency,
		// Empty: no lane. Zero LaneAfter: the handler's default.
		LaneQueueURL: cfg.LaneQueueURL,
		LaneAfter:    cfg.LaneAfter,
		BusName:      cfg.EventBus,
		// The operational events the bus keeps refusing are parked
		// there, through Queue, for make redrive-enqueue.
		ParkQueueURL: cfg.FailureQueueURL,
	}
}
