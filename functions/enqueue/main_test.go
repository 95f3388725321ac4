package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/stretchr/testify/require"
)

// Every setting of the environment that tunes the handler reaches its
// Config, each to its own field.
func TestConfigCarriesTheEnvironment(t *testing.T) {
	t.Parallel()
	c := config(fnenv.EnqueueEnv{
		QueueURL: "q", EventBus: "bus", FailureQueueURL: "failures",
		SendConcurrency: 3, LaneQueueURL: "lane", LaneAfter: 40, FanOutQueueURL: "fanout",
	})
	require.Equal(t, "q", c.QueueURL)
	require.Equal(t, "bus", c.BusName)
	require.Equal(t, "failures", c.ParkQueueURL)
	require.Equal(t, 3, c.SendConcurrency)
	require.Equal(t, "lane", c.LaneQueueURL)
	require.Equal(t, 40, c.LaneAfter)
	require.Equal(t, "fanout", c.FanOutQueueURL)
}

// An environment without a lane leaves the handler without one, and the
// threshold to its default.
func TestConfigWithoutLane(t *testing.T) {
	t.Parallel()
	c := config(fnenv.EnqueueEnv{QueueURL: "q", EventBus: "bus"})
	require.Empty(t, c.LaneQueueURL)
	require.Zero(t, c.LaneAfter)
	require.Empty(t, c.FanOutQueueURL, "no fan-out queue: no deferral")
}

// An SQS event as the fan-out queue's mapping delivers it, and a stream
// batch as the outbox stream's mapping does (the shapes Lambda sends).
const (
	sqsEvent = `{"Records":[{"messageId":"m-1","receiptHandle":"rh-1","body":"{\"tenant\":\"t1\"}",
		"attributes":{"ApproximateReceiveCount":"1"},"messageAttributes":{},"md5OfBody":"x",
		"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:eu-west-1:111122223333:FanOut","awsRegion":"eu-west-1"}]}`
	streamEvent = `{"Records":[{"eventID":"e-1","eventName":"INSERT","eventVersion":"1.1","eventSource":"aws:dynamodb","awsRegion":"eu-west-1",
		"dynamodb":{"Keys":{"pk":{"S":"t1"}},"NewImage":{"pk":{"S":"t1"},"n":{"N":"7"}},"SequenceNumber":"111","SizeBytes":26,"StreamViewType":"NEW_IMAGE"},
		"eventSourceARN":"arn:aws:dynamodb:eu-west-1:111122223333:table/Outbox/stream/2026-01-01T00:00:00.000"}]}`
)

// recorder is the two handlers dispatch chooses between, remembering what
// each was given.
type recorder struct {
	stream []events.DynamoDBEvent
	fanOut []events.SQSEvent
}

func (r *recorder) dispatch() func(context.Context, json.RawMessage) (any, error) {
	return dispatch(
		func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			r.stream = append(r.stream, ev)
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: "111"}}}, nil
		},
		func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			r.fanOut = append(r.fanOut, ev)
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "m-1"}}}, nil
		})
}

// An SQS batch (the deferred fan-out queue) reaches the fan-out handler,
// whole, and its partial failures are what the function answers.
func TestDispatchSendsSQSToTheFanOut(t *testing.T) {
	t.Parallel()
	var r recorder
	resp, err := r.dispatch()(context.Background(), json.RawMessage(sqsEvent))
	require.NoError(t, err)
	require.Empty(t, r.stream)
	require.Len(t, r.fanOut, 1)
	require.Len(t, r.fanOut[0].Records, 1)
	m := r.fanOut[0].Records[0]
	require.Equal(t, "m-1", m.MessageId)
	require.Equal(t, `{"tenant":"t1"}`, m.Body)
	require.Equal(t, "arn:aws:sqs:eu-west-1:111122223333:FanOut", m.EventSourceARN)
	require.Equal(t, events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "m-1"}}}, resp)
}

// A stream batch reaches the stream handler, its records' images read, and
// its partial failures are what the function answers.
func TestDispatchSendsTheStreamToTheStreamHandler(t *testing.T) {
	t.Parallel()
	var r recorder
	resp, err := r.dispatch()(context.Background(), json.RawMessage(streamEvent))
	require.NoError(t, err)
	require.Empty(t, r.fanOut)
	require.Len(t, r.stream, 1)
	rec := r.stream[0].Records[0]
	require.Equal(t, "INSERT", rec.EventName)
	require.Equal(t, "111", rec.Change.SequenceNumber)
	require.Equal(t, "t1", rec.Change.NewImage["pk"].String())
	require.Equal(t, events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: "111"}}}, resp)
}

// The source is read from the first record wherever "Records" stands among
// the event's keys, and a record's fields in any order.
func TestDispatchFindsTheRecordsAnywhere(t *testing.T) {
	t.Parallel()
	var r recorder
	ev := `{"extra":{"Records":[{"eventSource":"aws:dynamodb"}],"n":[1,{"a":"}"}]},"Records":[{"body":"{}","eventSource":"aws:sqs","messageId":"m-9"}]}`
	_, err := r.dispatch()(context.Background(), json.RawMessage(ev))
	require.NoError(t, err)
	require.Empty(t, r.stream)
	require.Len(t, r.fanOut, 1)
	require.Equal(t, "m-9", r.fanOut[0].Records[0].MessageId)
}

// An event without records (or one whose records name no source, as an
// operator's hand-made reprocessing may) goes to the stream handler, as every
// event did before the fan-out queue.
func TestDispatchDefaultsToTheStream(t *testing.T) {
	t.Parallel()
	for _, ev := range []string{`{}`, `{"Records":[]}`, `{"Records":[{"eventName":"INSERT"}]}`} {
		var r recorder
		_, err := r.dispatch()(context.Background(), json.RawMessage(ev))
		require.NoError(t, err, ev)
		require.Len(t, r.stream, 1, ev)
		require.Empty(t, r.fanOut, ev)
	}
}

// An event that is not JSON, or whose records are not of the shape their
// source names, is an error naming it, and neither handler runs.
func TestDispatchRefusesWhatIsNeitherShape(t *testing.T) {
	t.Parallel()
	for ev, want := range map[string]string{
		`not json`: "neither a stream batch nor an SQS batch",
		`{"Records":[{"eventSource":"aws:sqs","body":7}]}`:                   "the SQS batch",
		`{"Records":[{"eventSource":"aws:dynamodb","dynamodb":{"Keys":7}}]}`: "the stream batch",
		`{"Records":7}`:                        "the stream batch",
		`[{"Records":[]}]`:                     "neither a stream batch nor an SQS batch",
		`{"Records":[{"eventSource":"aws:sqs"`: "neither a stream batch nor an SQS batch",
	} {
		var r recorder
		_, err := r.dispatch()(context.Background(), json.RawMessage(ev))
		require.ErrorContains(t, err, want, ev)
		require.Empty(t, r.stream, ev)
		require.Empty(t, r.fanOut, ev)
	}
}

// A handler's error is the function's: Lambda retries the batch.
func TestDispatchReturnsTheHandlersError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	d := dispatch(
		func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			return events.DynamoDBEventResponse{}, boom
		},
		func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, boom
		})
	for _, ev := range []string{sqsEvent, streamEvent} {
		_, err := d(context.Background(), json.RawMessage(ev))
		require.ErrorIs(t, err, boom)
	}
}

// The dispatcher is a handler lambda.Start runs as it is: through the
// runtime's own invocation path an SQS batch reaches the fan-out handler and
// the function's answer is its partial failures, in Lambda's JSON.
func TestDispatchRunsUnderTheLambdaRuntime(t *testing.T) {
	t.Parallel()
	var r recorder
	out, err := lambda.NewHandler(r.dispatch()).Invoke(context.Background(), []byte(sqsEvent))
	require.NoError(t, err)
	require.Len(t, r.fanOut, 1)
	require.JSONEq(t, `{"batchItemFailures":[{"itemIdentifier":"m-1"}]}`, string(out))
	out, err = lambda.NewHandler(r.dispatch()).Invoke(context.Background(), []byte(streamEvent))
	require.NoError(t, err)
	require.Len(t, r.stream, 1)
	require.JSONEq(t, `{"batchItemFailures":[{"itemIdentifier":"111"}]}`, string(out))
}

// BenchmarkDispatchStream prices the dispatcher's peek on a full stream
// batch (100 records, as the stream mapping's largest): "direct" is what
// the runtime did before (one unmarshal into events.DynamoDBEvent),
// "dispatch" the peek and that unmarshal. Compare the two in one run.
func BenchmarkDispatchStream(b *testing.B) {
	var ev struct {
		Records []json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal([]byte(streamEvent), &ev); err != nil {
		b.Fatal(err)
	}
	for len(ev.Records) < 100 {
		ev.Records = append(ev.Records, ev.Records[0])
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	stream := func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{}, nil
	}
	fanOut := func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{}, nil
	}
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var e events.DynamoDBEvent
			if err := json.Unmarshal(raw, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dispatch", func(b *testing.B) {
		d := dispatch(stream, fanOut)
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := d(context.Background(), raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
