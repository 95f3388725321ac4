// Command enqueue is the Lambda function on the outbox table's stream: it
// fans each new outbox event out to the tenant's endpoints as messages on the
// delivery queue, and puts hookline's operational events on the operator's
// EventBridge bus. It also consumes the deferred fan-out queue (a second
// event source, SQS): the part of a record's fan-out past its tenant's share
// of a stream invocation, which it sends to the tenant lane. Wiring only; the logic is in internal/enqueue, the
// environment it reads in internal/fnenv (EnqueueEnv).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/boot"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/payloadschema"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/trace"
)

func main() { boot.Serve("enqueue", fnenv.LoadEnqueue, build) }

// build wires the enqueue function's handler from its environment.
func build(cfg fnenv.EnqueueEnv, log *slog.Logger, aws aws.Config) (any, error) {
	db := dynamodb.NewFromConfig(aws)
	st := store.New(db, cfg.StateTable)
	st.Retention = cfg.Retention()
	tracer, err := trace.NewTracer("enqueue", os.Stdout, cfg.TraceDaemon(), cfg.TraceSampleRate())
	if err != nil {
		return nil, err
	}
	catalog, err := eventtypes.Open(cfg.EventTypes)
	if err != nil {
		return nil, err
	}
	queue := sqs.NewFromConfig(aws)
	h := &enqueue.Handler{
		Store:      st,
		Queue:      queue,
		Visibility: queue,
		Bus:        eventbridge.NewFromConfig(aws),
		Config:     config(cfg),
		Log:        log,
		Metrics:    metrics.New(os.Stdout),
		Tracer:     tracer,
	}
	if cfg.MessageLog {
		h.MessageLog = &messagelog.Pages{DB: db, Table: cfg.StateTable}
	}
	if catalog != nil {
		// Each type's schema compiled on its first payload (nil: no
		// catalog, no payload validated).
		h.Schemas = payloadschema.New(catalog)
	}
	handle, fanOut := h.Handle, h.HandleFanOut
	if rate := cfg.Faults[fault.EnqueueFail]; rate > 0 {
		// The soak only: an invocation may fail after its first request.
		// The fan-out path draws too, as each of its invocations starts,
		// so that an arming left unspent by a stream invocation (one that
		// sent nothing) never fails a fan-out's first send.
		f := &fault.FailAfterSend{Next: h.Queue, Rate: rate}
		h.Queue, handle, fanOut = f, fault.EachInvocation(f, h.Handle), fault.EachInvocation(f, h.HandleFanOut)
	}
	return dispatch(handle, fanOut), nil
}

// sourceSQS is the eventSource of every record of an SQS event.
const sourceSQS = "aws:sqs"

// dispatch is the Lambda handler of both event sources: an event whose first
// record comes from SQS (the deferred fan-out queue) goes to fanOut, any
// other (a stream batch, the operator's reprocessing of one, an empty event)
// to stream. An event that is not JSON of either shape is an error, and
// Lambda retries it as its source says.
func dispatch(
	stream func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error),
	fanOut func(context.Context, events.SQSEvent) (events.SQSEventResponse, error),
) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		source, err := firstEventSource(raw)
		if err != nil {
			return nil, fmt.Errorf("enqueue: the event is neither a stream batch nor an SQS batch: %w", err)
		}
		if source == sourceSQS {
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, fmt.Errorf("enqueue: the SQS batch: %w", err)
			}
			return fanOut(ctx, ev)
		}
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("enqueue: the stream batch: %w", err)
		}
		return stream(ctx, ev)
	}
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
		// there, through Queue, for make reprocess-enqueue.
		ParkQueueURL: cfg.FailureQueueURL,
		// Empty: no deferral, every record fanned out inline.
		FanOutQueueURL: cfg.FanOutQueueURL,
	}
}

// firstEventSource is the eventSource of the event's first record, reading
// only as far as that record ("" when the event has no records): the whole
// event is read once, by the unmarshal into its shape.
func firstEventSource(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return "", err
	} else if tok != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", err
		}
		if key != "Records" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return "", nil // not a list: the unmarshal into the shape says what is wrong
		}
		if !dec.More() {
			return "", nil
		}
		var first struct {
			EventSource string `json:"eventSource"`
		}
		if err := dec.Decode(&first); err != nil {
			return "", err
		}
		return first.EventSource, nil
	}
	return "", nil
}
