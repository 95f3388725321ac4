package streamredrive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/streamredrive"
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

// fakeQueue is the enqueue failure queue as SQS keeps it: ReceiveMessage
// returns at most MaxNumberOfMessages (1 to 10) visible messages, hides
// each for VisibilityTimeout (1 to 43,200 s; 0 is not sent by the SDK, so
// the queue's default of 30 s applies) and gives it a new receipt handle;
// DeleteMessage and ChangeMessageVisibility need the current one.
type fakeQueue struct {
	mu       sync.Mutex
	now      func() time.Time
	msgs     []*queued
	next     int
	receives int
	// onReceive, when set, runs before each receive (to move the clock).
	onReceive func()
	deleteErr error
}

type queued struct {
	id, body, receipt string
	visibleAt         time.Time
	receives          int
}

func newFakeQueue(now func() time.Time) *fakeQueue { return &fakeQueue{now: now} }

func (q *fakeQueue) add(body string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.next++
	id := "msg-" + strconv.Itoa(q.next)
	q.msgs = append(q.msgs, &queued{id: id, body: body})
	return id
}

// state answers whether the message is still on the queue, and whether it
// is visible now.
func (q *fakeQueue) state(id string) (present, visible bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.msgs {
		if m.id == id {
			return true, !m.visibleAt.After(q.now())
		}
	}
	return false, false
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if q.onReceive != nil {
		q.onReceive()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.receives++
	if aws.ToString(in.QueueUrl) != queueURL {
		return nil, errors.New("AWS.SimpleQueueService.NonExistentQueue")
	}
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 {
		return nil, fmt.Errorf("InvalidParameterValue: MaxNumberOfMessages %d", in.MaxNumberOfMessages)
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	if in.WaitTimeSeconds < 0 || in.WaitTimeSeconds > 20 {
		return nil, fmt.Errorf("InvalidParameterValue: WaitTimeSeconds %d", in.WaitTimeSeconds)
	}
	hide := in.VisibilityTimeout
	if hide == 0 {
		hide = 30 // the SDK does not send 0: the queue's default applies
	}
	now := q.now()
	out := &sqs.ReceiveMessageOutput{}
	for _, m := range q.msgs {
		if len(out.Messages) == int(in.MaxNumberOfMessages) {
			break
		}
		if m.visibleAt.After(now) {
			continue
		}
		q.next++
		m.receipt = "rh-" + strconv.Itoa(q.next)
		m.visibleAt = now.Add(time.Duration(hide) * time.Second)
		m.receives++
		out.Messages = append(out.Messages, sqstypes.Message{MessageId: aws.String(m.id), Body: aws.String(m.body), ReceiptHandle: aws.String(m.receipt)})
	}
	return out, nil
}

func (q *fakeQueue) byReceipt(url, h *string) (int, error) {
	if aws.ToString(url) != queueURL {
		return 0, errors.New("AWS.SimpleQueueService.NonExistentQueue")
	}
	for i, m := range q.msgs {
		if h != nil && m.receipt == *h {
			return i, nil
		}
	}
	return 0, fmt.Errorf("ReceiptHandleIsInvalid: %s", aws.ToString(h))
}

func (q *fakeQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.deleteErr != nil {
		return nil, q.deleteErr
	}
	i, err := q.byReceipt(in.QueueUrl, in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *fakeQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i, err := q.byReceipt(in.QueueUrl, in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	q.msgs[i].visibleAt = q.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// fakeStreams is one stream of DynamoDB Streams holding shards of records
// in sequence order, as the service serves them: an iterator
// AT_SEQUENCE_NUMBER of a trimmed record (or of a sequence number before
// the shard's first one left) is refused with TrimmedDataAccessException;
// an unknown shard is a ResourceNotFoundException; GetRecords takes a Limit
// of 1 to 1,000 and answers at most that many records and at most 1 MB,
// with no next iterator once a closed shard is read to its end.
type fakeStreams struct {
	mu     sync.Mutex
	shards map[string]*shard
	// pageSize, when set, caps a page lower than Limit (the service may
	// answer fewer records than asked for).
	pageSize int
	// emptyReads makes that many GetRecords calls answer no record first.
	emptyReads int
	reads      int
}

type shard struct {
	records []streamtypes.Record
	trimmed int // records[:trimmed] are gone
	closed  bool
}

func newFakeStreams() *fakeStreams { return &fakeStreams{shards: map[string]*shard{}} }

func (s *fakeStreams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if aws.ToString(in.StreamArn) != streamARN {
		return nil, &streamtypes.ResourceNotFoundException{Message: aws.String("Requested resource not found: Stream: " + aws.ToString(in.StreamArn) + " not found")}
	}
	sh, ok := s.shards[aws.ToString(in.ShardId)]
	if !ok {
		return nil, &streamtypes.ResourceNotFoundException{Message: aws.String("Requested resource not found: Shard does not exist")}
	}
	if in.ShardIteratorType != streamtypes.ShardIteratorTypeAtSequenceNumber || in.SequenceNumber == nil {
		return nil, errors.New("ValidationException: the fake serves AT_SEQUENCE_NUMBER iterators only")
	}
	want := *in.SequenceNumber
	if sh.trimmed > 0 && cmpSeq(want, aws.ToString(sh.records[sh.trimmed-1].Dynamodb.SequenceNumber)) <= 0 {
		return nil, &streamtypes.TrimmedDataAccessException{Message: aws.String("the operation attempted to read past the oldest stream record in a shard")}
	}
	pos := len(sh.records)
	for i := sh.trimmed; i < len(sh.records); i++ {
		if cmpSeq(aws.ToString(sh.records[i].Dynamodb.SequenceNumber), want) >= 0 {
			pos = i
			break
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(iterator(aws.ToString(in.ShardId), pos))}, nil
}

func iterator(shardID string, pos int) string { return shardID + "|" + strconv.Itoa(pos) }

func (s *fakeStreams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	limit := int(aws.ToInt32(in.Limit))
	if in.Limit != nil && (limit < 1 || limit > 1000) {
		return nil, fmt.Errorf("ValidationException: Limit %d is not within 1 and 1000", limit)
	}
	if in.Limit == nil {
		limit = 1000
	}
	var id string
	var pos int
	if it := aws.ToString(in.ShardIterator); it != "" {
		for i := len(it) - 1; i >= 0; i-- {
			if it[i] == '|' {
				id = it[:i]
				pos, _ = strconv.Atoi(it[i+1:])
				break
			}
		}
	}
	sh, ok := s.shards[id]
	if !ok {
		return nil, errors.New("ValidationException: invalid shard iterator")
	}
	if pos < sh.trimmed {
		return nil, &streamtypes.TrimmedDataAccessException{Message: aws.String("trimmed")}
	}
	next := aws.String(iterator(id, pos))
	if s.emptyReads > 0 {
		s.emptyReads--
		return &dynamodbstreams.GetRecordsOutput{NextShardIterator: next}, nil
	}
	if s.pageSize > 0 {
		limit = min(limit, s.pageSize)
	}
	out := &dynamodbstreams.GetRecordsOutput{}
	size := 0
	for pos < len(sh.records) && len(out.Records) < limit {
		rs := int(aws.ToInt64(sh.records[pos].Dynamodb.SizeBytes))
		if len(out.Records) > 0 && size+rs > 1<<20 {
			break
		}
		size += rs
		out.Records = append(out.Records, sh.records[pos])
		pos++
	}
	if !(sh.closed && pos == len(sh.records)) {
		out.NextShardIterator = aws.String(iterator(id, pos))
	}
	return out, nil
}

// cmpSeq compares decimal sequence numbers of no leading zero.
func cmpSeq(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fakeLambda is the enqueue function as Lambda runs it synchronously: it
// refuses a request payload over 6 MB, and decodes the payload with
// aws-lambda-go's handler, the production decoding. fail decides, per
// invocation (from 1), whether it answers a function error; itemFailures,
// whether it reports the batch's first record failed. batches are the
// events of the invocations that succeeded.
type fakeLambda struct {
	mu           sync.Mutex
	calls        int
	batches      []events.DynamoDBEvent
	fail         func(call int) bool
	itemFailures func(call int) bool
	maxPayload   int
}

func (f *fakeLambda) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.FunctionName) != function {
		return nil, errors.New("ResourceNotFoundException: Function not found: " + aws.ToString(in.FunctionName))
	}
	if in.InvocationType != "" && in.InvocationType != "RequestResponse" {
		return nil, fmt.Errorf("the re-drive must invoke synchronously, not %s", in.InvocationType)
	}
	if len(in.Payload) > streamredrive.MaxInvokePayload {
		return nil, fmt.Errorf("RequestEntityTooLargeException: request payload %d bytes exceeds %d", len(in.Payload), streamredrive.MaxInvokePayload)
	}
	if len(in.Payload) > f.maxPayload {
		f.maxPayload = len(in.Payload)
	}
	f.calls++
	call := f.calls
	var got events.DynamoDBEvent
	handler := awslambda.NewHandler(func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		got = ev
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
	})
	out, err := handler.Invoke(ctx, in.Payload)
	if got.Records == nil {
		return nil, fmt.Errorf("the payload does not decode as a DynamoDB stream event: %v", err)
	}
	if err != nil {
		body, _ := json.Marshal(map[string]string{"errorMessage": err.Error(), "errorType": "errorString"})
		return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: body}, nil
	}
	return &lambda.InvokeOutput{StatusCode: 200, Payload: out}, nil
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

// fakeOutbox is the outbox table: Scan answers its items in pages of at
// most pageSize (DynamoDB stops a page at 1 MB), with LastEvaluatedKey
// while more remain.
type fakeOutbox struct {
	items    []map[string]ddbtypes.AttributeValue
	pageSize int
	scans    int
	err      error
}

func (o *fakeOutbox) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	o.scans++
	if o.err != nil {
		return nil, o.err
	}
	if aws.ToString(in.TableName) != table {
		return nil, errors.New("ResourceNotFoundException: Requested resource not found")
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		key := in.ExclusiveStartKey["id"].(*ddbtypes.AttributeValueMemberS).Value
		for i, it := range o.items {
			if it["id"].(*ddbtypes.AttributeValueMemberS).Value == key {
				start = i + 1
			}
		}
	}
	end := min(start+o.pageSize, len(o.items))
	out := &dynamodb.ScanOutput{Items: o.items[start:end]}
	if end < len(o.items) {
		out.LastEvaluatedKey = map[string]ddbtypes.AttributeValue{"id": o.items[end-1]["id"]}
	}
	return out, nil
}
