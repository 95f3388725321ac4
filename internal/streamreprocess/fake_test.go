package streamreprocess_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/fakes/lambdafake"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
)

const (
	queueURL  = "https://sqs.us-east-1.amazonaws.com/000000000000/EnqueueFailures"
	streamARN = "arn:aws:dynamodb:us-east-1:000000000000:table/Outbox/stream/2026-11-30T00:00:00.000"
	shardID   = "shardId-00000001796000000000-4f2a9c1b"
	function  = "Hookline-Enqueue"
	table     = "Outbox"
)

// clock is a fake clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeQueue is the enqueue failure queue: the one fake SQS (sqsfake),
// which also refuses what SQS does (MaxNumberOfMessages 1 to 10,
// VisibilityTimeout and WaitTimeSeconds in range, a stale receipt handle).
// onReceive, when set, runs before each receive (to move the clock);
// deleteErr fails every DeleteMessage.
type fakeQueue struct {
	*sqsfake.Queue
	mu        sync.Mutex
	onReceive func()
	deleteErr error
	receives  int
}

func newFakeQueue(now func() time.Time) *fakeQueue {
	q := &fakeQueue{}
	q.Queue = sqsfake.New(sqsfake.Config{Now: now, Fail: q.failing})
	return q
}

// failing is sqsfake's Config.Fail: onReceive and deleteErr.
func (q *fakeQueue) failing(op, _ string) error {
	q.mu.Lock()
	onReceive, deleteErr := q.onReceive, q.deleteErr
	if op == "ReceiveMessage" {
		q.receives++
	}
	q.mu.Unlock()
	switch op {
	case "ReceiveMessage":
		if onReceive != nil {
			onReceive()
		}
	case "DeleteMessage":
		return deleteErr
	}
	return nil
}

// add parks body on the queue and returns its message id.
func (q *fakeQueue) add(body string) string {
	out, err := q.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(body)})
	if err != nil {
		panic(err)
	}
	return *out.MessageId
}

// state answers whether the message is still on the queue, and whether it
// is visible now.
func (q *fakeQueue) state(id string) (present, visible bool) {
	for _, m := range q.Messages(queueURL) {
		if m.ID == id {
			return true, m.Visible
		}
	}
	return false, false
}

// fakeLambda is the enqueue function on the one fake Lambda (lambdafake),
// which runs it as Lambda does synchronously (6 MB payloads, the
// production decoding). fail decides, per invocation (from 1), whether it
// answers a function error; itemFailures, whether it reports the batch's
// first record failed. batches are the events of the invocations that
// succeeded.
type fakeLambda struct {
	*lambdafake.Function
	mu           sync.Mutex
	calls        int
	batches      []events.DynamoDBEvent
	fail         func(call int) bool
	itemFailures func(call int) bool
}

func newFakeLambda() *fakeLambda {
	f := &fakeLambda{}
	f.Function = lambdafake.New(function, f.handle)
	return f
}

func (f *fakeLambda) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Records == nil {
		return events.DynamoDBEventResponse{}, fmt.Errorf("the payload does not decode as a DynamoDB stream event")
	}
	f.calls++
	call := f.calls
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	if f.fail != nil && f.fail(call) {
		return resp, fmt.Errorf("records %s to %s: injected enqueue failure", ev.Records[0].Change.SequenceNumber, ev.Records[len(ev.Records)-1].Change.SequenceNumber)
	}
	if f.itemFailures != nil && f.itemFailures(call) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: ev.Records[0].Change.SequenceNumber})
		return resp, nil
	}
	f.batches = append(f.batches, ev)
	return resp, nil
}

// processed are the sequence numbers of the records the function processed
// without error, in order.
func (f *fakeLambda) processed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, b := range f.batches {
		for _, r := range b.Records {
			out = append(out, r.Change.SequenceNumber)
		}
	}
	return out
}
