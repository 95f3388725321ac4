package streamreprocess_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/fakes/streamsfake"
	"github.com/hookline/hookline/internal/streamreprocess"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

// seq is the n-th sequence number of the test shard.
func seq(n int) string { return fmt.Sprintf("1111%017d", n) }

// outboxItem is an outbox item as the table holds it, its payload padded to
// about pad bytes.
func outboxItem(id string, at time.Time, pad int) map[string]ddbtypes.AttributeValue {
	payload := `{"n":"` + strings.Repeat("x", pad) + `"}`
	return map[string]ddbtypes.AttributeValue{
		outbox.AttrID:         &ddbtypes.AttributeValueMemberS{Value: id},
		outbox.AttrTenantID:   &ddbtypes.AttributeValueMemberS{Value: "t_1"},
		outbox.AttrType:       &ddbtypes.AttributeValueMemberS{Value: "invoice.paid"},
		outbox.AttrPayload:    &ddbtypes.AttributeValueMemberS{Value: payload},
		outbox.AttrOccurredAt: &ddbtypes.AttributeValueMemberS{Value: at.Format(time.RFC3339Nano)},
		outbox.AttrSequence:   &ddbtypes.AttributeValueMemberN{Value: "7"},
	}
}

// streamRecord is the INSERT stream record of event n, written at `at`.
func streamRecord(n int, at time.Time, pad int) streamtypes.Record {
	id := fmt.Sprintf("evt_%d", n)
	payload := `{"n":"` + strings.Repeat("x", pad) + `"}`
	return streamtypes.Record{
		AwsRegion: aws.String("us-east-1"), EventID: aws.String(fmt.Sprintf("e%d", n)), EventName: streamtypes.OperationTypeInsert,
		EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"),
		Dynamodb: &streamtypes.StreamRecord{
			ApproximateCreationDateTime: aws.Time(at),
			Keys:                        map[string]streamtypes.AttributeValue{outbox.AttrID: &streamtypes.AttributeValueMemberS{Value: id}},
			NewImage: map[string]streamtypes.AttributeValue{
				outbox.AttrID:         &streamtypes.AttributeValueMemberS{Value: id},
				outbox.AttrTenantID:   &streamtypes.AttributeValueMemberS{Value: "t_1"},
				outbox.AttrType:       &streamtypes.AttributeValueMemberS{Value: "invoice.paid"},
				outbox.AttrPayload:    &streamtypes.AttributeValueMemberS{Value: payload},
				outbox.AttrOccurredAt: &streamtypes.AttributeValueMemberS{Value: at.Format(time.RFC3339)},
			},
			SequenceNumber: aws.String(seq(n)),
			SizeBytes:      aws.Int64(int64(120 + len(payload))),
			StreamViewType: streamtypes.StreamViewTypeNewImage,
		},
	}
}

// failureBody is the failure record Lambda parks for records first..last of
// the test shard, written at t0 + n seconds.
func failureBody(first, last int) string {
	var r streamreprocess.FailureRecord
	r.RequestContext.RequestID = "3f1c7a52-9d0e-4b8e-a1f4-6c2d8e0b5a17"
	r.RequestContext.FunctionARN = "arn:aws:lambda:us-east-1:000000000000:function:" + function
	r.RequestContext.Condition = "RetryAttemptsExhausted"
	r.RequestContext.ApproximateInvokeCount = 3
	r.ResponseContext.StatusCode = 200
	r.ResponseContext.ExecutedVersion = "$LATEST"
	r.ResponseContext.FunctionError = "Unhandled"
	r.Version = "1.0"
	r.Timestamp = t0.Add(20 * time.Hour)
	r.Batch = streamreprocess.BatchInfo{
		ShardID: shardID, StartSequenceNumber: seq(first), EndSequenceNumber: seq(last),
		FirstArrival: t0.Add(time.Duration(first) * time.Second), LastArrival: t0.Add(time.Duration(last) * time.Second),
		BatchSize: last - first + 1, StreamARN: streamARN,
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// env is a Reprocessor wired to fakes: a shard of records 1..n written a
// second apart from t0, the clock 21 h later (inside the retention).
type env struct {
	clock   *clock
	queue   *fakeQueue
	streams *streamsfake.Streams
	fn      *fakeLambda
	outbox  *dynamofake.Table
	sleeps  []time.Duration
	r       *streamreprocess.Reprocessor
}

func newEnv(t *testing.T, n, pad int) *env {
	t.Helper()
	e := &env{clock: &clock{t: t0.Add(21 * time.Hour)}, streams: streamsfake.New(), fn: newFakeLambda(), outbox: dynamofake.New(table, outbox.AttrID)}
	e.outbox.PageSize = 3
	e.queue = newFakeQueue(e.clock.Now)
	var recs []streamtypes.Record
	for i := 1; i <= n; i++ {
		recs = append(recs, streamRecord(i, t0.Add(time.Duration(i)*time.Second), pad))
	}
	e.streams.AddShard(streamARN, shardID, recs...)
	e.r = &streamreprocess.Reprocessor{
		Queue: e.queue, QueueURL: queueURL, Streams: e.streams, Lambda: e.fn, FunctionName: function,
		Outbox: e.outbox, OutboxTable: table, Region: "us-east-1",
		Now: e.clock.Now,
		Sleep: func(_ context.Context, d time.Duration) error {
			e.sleeps = append(e.sleeps, d)
			e.clock.Advance(d)
			return nil
		},
	}
	return e
}

func (e *env) run(t *testing.T) streamreprocess.Report {
	t.Helper()
	rep, err := e.r.Run(context.Background())
	require.NoError(t, err)
	return rep
}

func seqs(first, last int) []string {
	var out []string
	for i := first; i <= last; i++ {
		out = append(out, seq(i))
	}
	return out
}

func TestParseFailureRecord(t *testing.T) {
	t.Parallel()
	sample, err := os.ReadFile("../../events/dynamodb-stream-failure.json")
	require.NoError(t, err)
	tests := []struct {
		name string
		body string
		err  string
	}{
		{name: "the sample AWS sends", body: string(sample)},
		{name: "one built like it", body: failureBody(3, 9)},
		{name: "not JSON", body: "][", err: "not a stream failure record"},
		{name: "a Kinesis failure record", body: `{"requestContext":{"condition":"RetryAttemptsExhausted"},"KinesisBatchInfo":{"shardId":"shardId-000000000001","startSequenceNumber":"1","endSequenceNumber":"2","streamArn":"arn:aws:kinesis:us-east-1:000000000000:stream/s"}}`,
			err: "DDBStreamBatchInfo lacks endSequenceNumber, shardId, startSequenceNumber, streamArn"},
		{name: "no shard", body: strings.Replace(failureBody(1, 2), shardID, "", 1), err: "lacks shardId"},
		{name: "start after end", body: strings.Replace(failureBody(5, 9), seq(5), seq(10), 1), err: "is after the end"},
		{name: "a sequence number that is not a number", body: strings.Replace(failureBody(5, 9), seq(5), "abc", 1), err: "not decimal numbers"},
		{name: "a Kinesis stream ARN", body: strings.Replace(failureBody(1, 2), streamARN, "arn:aws:kinesis:us-east-1:000000000000:stream/s", 1), err: "is not a DynamoDB stream ARN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := streamreprocess.ParseFailureRecord(tt.body)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, r.Batch.ShardID)
			require.False(t, r.Batch.FirstArrival.IsZero())
			require.Positive(t, r.Batch.BatchSize)
		})
	}
}

func TestReprocessesTheParkedRecordsAndDeletesTheMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 300, 10)
	e.streams.PageSize = 7 // the batch takes many reads
	// 146 records: more than one invocation's 100.
	id := e.queue.add(failureBody(5, 150))
	rep := e.run(t)

	require.Equal(t, seqs(5, 150), e.fn.processed(), "exactly the batch's records, in stream order, each once")
	require.Len(t, e.fn.batches, 2)
	require.Len(t, e.fn.batches[0].Records, streamreprocess.MaxInvokeRecords)
	present, _ := e.queue.state(id)
	require.False(t, present, "the message is deleted once every record is processed")
	require.Equal(t, 1, rep.Deleted)
	require.Zero(t, rep.Kept)
	require.Equal(t, streamreprocess.Reprocessed, rep.Results[0].Outcome)
	require.Equal(t, 146, rep.Results[0].Records)

	// The records go out as Lambda sends them: the stream's ARN, the
	// images as the stream holds them.
	first := e.fn.batches[0].Records[0]
	require.Equal(t, streamARN, first.EventSourceArn)
	require.Equal(t, "INSERT", first.EventName)
	require.Equal(t, "evt_5", first.Change.NewImage[outbox.AttrID].String())
	require.Equal(t, "evt_5", first.Change.Keys[outbox.AttrID].String())
	require.Equal(t, t0.Add(5*time.Second), first.Change.ApproximateCreationDateTime.Time.UTC())
}

func TestKeepsTheMessageUntilEveryRecordIsProcessed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fail         func(call int) bool
		itemFailures func(call int) bool
		outcome      streamreprocess.Outcome
		retries      int
		processed    []string
		err          string
	}{
		{name: "enqueue fails twice, then succeeds", fail: func(call int) bool { return call <= 2 },
			outcome: streamreprocess.Reprocessed, retries: 2, processed: seqs(1, 120)},
		{name: "enqueue keeps failing", fail: func(int) bool { return true },
			outcome: streamreprocess.Failed, retries: 4, err: "injected enqueue failure"},
		{name: "the second invocation keeps failing: the first's records were processed, the message is kept all the same",
			fail:    func(call int) bool { return call >= 2 },
			outcome: streamreprocess.Failed, retries: 4, processed: seqs(1, 100), err: "after 5 attempts"},
		{name: "enqueue reports a record failed", itemFailures: func(int) bool { return true },
			outcome: streamreprocess.Failed, retries: 4, err: "reported 1 records failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 120, 10)
			e.fn.fail, e.fn.itemFailures = tt.fail, tt.itemFailures
			id := e.queue.add(failureBody(1, 120))
			rep := e.run(t)
			require.Equal(t, tt.outcome, rep.Results[0].Outcome)
			require.Equal(t, tt.retries, rep.Results[0].Retries)
			require.Equal(t, tt.retries, rep.Retries)
			require.Equal(t, tt.processed, e.fn.processed())
			present, visible := e.queue.state(id)
			if tt.outcome == streamreprocess.Reprocessed {
				require.False(t, present)
				return
			}
			require.ErrorContains(t, errors.New(rep.Results[0].Error), tt.err)
			require.True(t, present, "a batch not fully processed keeps its message")
			require.True(t, visible, "and the message is visible again for the next run")
			require.Equal(t, 1, rep.Kept)
			// Backoff between attempts: 1 s, 2 s, 4 s, 8 s.
			require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, e.sleeps[len(e.sleeps)-4:])
		})
	}
}

func TestBatchGoneFromTheStreamIsKept(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(e *env)
		body    string
		outcome streamreprocess.Outcome
		err     string
	}{
		{name: "trimmed: the first record is past the retention", body: failureBody(3, 8),
			setup:   func(e *env) { e.streams.Shard(streamARN, shardID).Trimmed = 5 },
			outcome: streamreprocess.Gone, err: "TrimmedDataAccessException"},
		{name: "the whole shard is gone, the batch older than the retention", body: strings.Replace(failureBody(3, 8), shardID, "shardId-00000001700000000000-00000000", 1),
			setup:   func(e *env) { e.clock.Advance(4 * time.Hour) },
			outcome: streamreprocess.Gone, err: "Shard does not exist"},
		{name: "no such shard, yet the batch is young: a wrong account or region, not gone", body: strings.Replace(failureBody(3, 8), shardID, "shardId-00000001700000000000-00000000", 1),
			outcome: streamreprocess.Failed, err: "is this the stream's account and region"},
		{name: "the shard closed before the last record", body: failureBody(3, 12),
			setup:   func(e *env) { e.streams.Shard(streamARN, shardID).Closed = true },
			outcome: streamreprocess.Gone, err: "before the batch's last record"},
		{name: "not a failure record", body: `{"hello":"world"}`,
			outcome: streamreprocess.Invalid, err: "not a DynamoDB stream failure record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 10, 10)
			if tt.setup != nil {
				tt.setup(e)
			}
			id := e.queue.add(tt.body)
			rep := e.run(t)
			require.Equal(t, tt.outcome, rep.Results[0].Outcome, rep.Results[0].Error)
			require.Contains(t, rep.Results[0].Error, tt.err)
			require.Empty(t, e.fn.processed(), "nothing is processed from a batch that cannot be read whole")
			present, visible := e.queue.state(id)
			require.True(t, present && visible, "the message is kept, visible for the next run")
			require.Equal(t, 1, rep.Kept)
			require.Zero(t, e.outbox.Calls("Scan"), "without the fallback the outbox table is not read")
		})
	}
}

func TestFirstRecordOfTheBatchMissing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10, 10)
	sh := e.streams.Shard(streamARN, shardID)
	sh.Records = append(sh.Records[:2], sh.Records[3:]...) // record 3 is not there
	id := e.queue.add(failureBody(3, 8))
	rep := e.run(t)
	require.Equal(t, streamreprocess.Gone, rep.Results[0].Outcome, rep.Results[0].Error)
	require.Contains(t, rep.Results[0].Error, "the batch's first record "+seq(3)+" is not in shard")
	require.Empty(t, e.fn.processed())
	present, _ := e.queue.state(id)
	require.True(t, present)
}

func TestEmptyReadsOfTheShard(t *testing.T) {
	t.Parallel()
	t.Run("a few empty reads, then the records", func(t *testing.T) {
		e := newEnv(t, 10, 10)
		e.streams.EmptyReads = 3
		e.queue.add(failureBody(2, 9))
		rep := e.run(t)
		require.Equal(t, streamreprocess.Reprocessed, rep.Results[0].Outcome)
		require.Equal(t, seqs(2, 9), e.fn.processed())
		require.Len(t, e.sleeps, 3, "a pause after each empty read")
	})
	t.Run("reads that never find the records end the batch for this run", func(t *testing.T) {
		e := newEnv(t, 10, 10)
		e.streams.EmptyReads = 1000
		id := e.queue.add(failureBody(2, 9))
		rep := e.run(t)
		require.Equal(t, streamreprocess.Failed, rep.Results[0].Outcome)
		require.Contains(t, rep.Results[0].Error, "reads in a row found no record")
		require.Less(t, e.streams.Reads(), 30)
		present, _ := e.queue.state(id)
		require.True(t, present)
	})
}

func TestInvocationsStayWithinLambdasPayloadLimit(t *testing.T) {
	t.Parallel()
	// 40 records of about 350 KB (an item may be 400 KB): 14 MB in all,
	// more than two invocations can carry.
	e := newEnv(t, 40, 350_000)
	e.queue.add(failureBody(1, 40))
	rep := e.run(t)
	require.Equal(t, streamreprocess.Reprocessed, rep.Results[0].Outcome, rep.Results[0].Error)
	require.Equal(t, seqs(1, 40), e.fn.processed())
	require.GreaterOrEqual(t, len(e.fn.batches), 3)
	require.LessOrEqual(t, e.fn.LargestPayload(), streamreprocess.MaxInvokePayload)
	require.Greater(t, e.fn.LargestPayload(), streamreprocess.MaxInvokePayload/2, "invocations are filled, not one per record")
}

func TestEveryMessageOnTheQueueOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 60, 10)
	var ids []string
	for i := 0; i < 12; i++ { // more than one receive
		ids = append(ids, e.queue.add(failureBody(i*5+1, i*5+5)))
	}
	bad := e.queue.add("not json")
	rep := e.run(t)
	require.Equal(t, seqs(1, 60), e.fn.processed())
	require.Equal(t, 12, rep.Deleted)
	require.Equal(t, 1, rep.Kept)
	for _, id := range ids {
		present, _ := e.queue.state(id)
		require.False(t, present)
	}
	present, visible := e.queue.state(bad)
	require.True(t, present && visible)
}

func TestAKeptMessageBackDuringTheRunIsNotProcessedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10, 10)
	e.r.Visibility = time.Minute
	e.fn.fail = func(int) bool { return true }
	e.r.Attempts = 1
	id := e.queue.add(failureBody(1, 5))
	// Every receive happens after the last one's visibility ran out.
	e.queue.onReceive = func() { e.clock.Advance(2 * time.Minute) }
	rep := e.run(t)
	require.Len(t, rep.Results, 1)
	require.Equal(t, 1, e.fn.calls, "received again, not invoked again")
	require.LessOrEqual(t, e.queue.receives, 12, "the run ends")
	present, visible := e.queue.state(id)
	require.True(t, present && visible, "released with its newest receipt handle")
}

func TestProcessedButNotDeletedIsKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10, 10)
	e.queue.deleteErr = errors.New("AccessDenied")
	e.queue.add(failureBody(1, 5))
	rep := e.run(t)
	require.Equal(t, seqs(1, 5), e.fn.processed())
	require.Equal(t, streamreprocess.Failed, rep.Results[0].Outcome)
	require.Contains(t, rep.Results[0].Error, "processed, but the message could not be deleted")
	require.Equal(t, 1, rep.Kept)
}

func TestOutboxFallbackForBatchesGoneFromTheStream(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*env, string) {
		e := newEnv(t, 10, 10)
		e.streams.Shard(streamARN, shardID).Trimmed = 10 // all gone
		e.r.OutboxFallback = true
		e.r.OutboxMargin = time.Minute
		// The batch's records arrived at t0+3s..t0+8s.
		for i, at := range []time.Time{
			t0.Add(-2 * time.Hour),                     // long before: left alone
			t0.Add(3*time.Second - 5*time.Millisecond), // occurred just before its write
			t0.Add(5 * time.Second),
			t0.Add(8*time.Second + 30*time.Second),
			t0.Add(3 * time.Hour), // long after: left alone
		} {
			e.outbox.Put(outboxItem(fmt.Sprintf("evt_o%d", i), at, 10))
		}
		noTime := outboxItem("evt_notime", t0, 10)
		delete(noTime, outbox.AttrOccurredAt)
		e.outbox.Put(noTime)
		return e, e.queue.add(failureBody(3, 8))
	}
	t.Run("the events of the batch's window are processed, the message deleted", func(t *testing.T) {
		e, id := setup(t)
		rep := e.run(t)
		require.Equal(t, streamreprocess.ReprocessedFromOutbox, rep.Results[0].Outcome, rep.Results[0].Error)
		var ids []string
		for _, b := range e.fn.batches {
			for _, r := range b.Records {
				require.Equal(t, "INSERT", r.EventName)
				require.Equal(t, streamARN, r.EventSourceArn)
				require.Equal(t, r.Change.NewImage[outbox.AttrID], r.Change.Keys[outbox.AttrID])
				ids = append(ids, r.Change.NewImage[outbox.AttrID].String())
			}
		}
		require.Equal(t, []string{"evt_o1", "evt_o2", "evt_o3"}, ids)
		require.Equal(t, 3, rep.OutboxEvents)
		require.Equal(t, 1, rep.OutboxUnplaced)
		require.Equal(t, 2, e.outbox.Calls("Scan"), "the table read once, a page (of 3 items) at a time")
		present, _ := e.queue.state(id)
		require.False(t, present)
	})
	t.Run("the outbox table cannot be read: kept", func(t *testing.T) {
		e, id := setup(t)
		e.outbox.Fail = func(string) error { return errors.New("AccessDeniedException") }
		rep := e.run(t)
		require.Equal(t, streamreprocess.Gone, rep.Results[0].Outcome)
		require.Contains(t, rep.Results[0].Error, "AccessDeniedException")
		present, visible := e.queue.state(id)
		require.True(t, present && visible)
	})
	t.Run("enqueue keeps failing: kept", func(t *testing.T) {
		e, id := setup(t)
		e.fn.fail = func(int) bool { return true }
		rep := e.run(t)
		require.Equal(t, streamreprocess.Gone, rep.Results[0].Outcome)
		require.Contains(t, rep.Results[0].Error, "injected enqueue failure")
		present, _ := e.queue.state(id)
		require.True(t, present)
	})
	t.Run("no event in the window: kept", func(t *testing.T) {
		e, id := setup(t)
		e.outbox.Truncate(1)
		rep := e.run(t)
		require.Equal(t, streamreprocess.Gone, rep.Results[0].Outcome)
		require.Contains(t, rep.Results[0].Error, "no outbox event occurred between")
		present, _ := e.queue.state(id)
		require.True(t, present)
	})
	t.Run("many gone batches: one scan of the table", func(t *testing.T) {
		e, _ := setup(t)
		e.queue.add(failureBody(1, 2))
		e.queue.add(failureBody(4, 9))
		rep := e.run(t)
		require.Equal(t, 3, rep.Deleted)
		require.Equal(t, 3, rep.OutboxEvents, "overlapping windows process an event once")
		require.Equal(t, 2, e.outbox.Calls("Scan"), "one scan of the table for all of them")
	})
}

// The event built from a stream record is the one Lambda sends for it: the
// sample's first record, read back as DynamoDB Streams answers it, encodes
// to the same JSON.
func TestEventRecordIsTheOneLambdaSends(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../events/dynamodb-outbox-insert.json")
	require.NoError(t, err)
	var sample struct {
		Records []json.RawMessage `json:"Records"`
	}
	require.NoError(t, json.Unmarshal(raw, &sample))
	rec := streamtypes.Record{
		AwsRegion: aws.String("us-east-1"), EventID: aws.String("c4ca4238a0b923820dcc509a6f75849b"), EventName: streamtypes.OperationTypeInsert,
		EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"),
		Dynamodb: &streamtypes.StreamRecord{
			ApproximateCreationDateTime: aws.Time(time.Unix(1796000000, 0)),
			Keys:                        map[string]streamtypes.AttributeValue{"id": &streamtypes.AttributeValueMemberS{Value: "evt_sample_1"}},
			NewImage: map[string]streamtypes.AttributeValue{
				"id":          &streamtypes.AttributeValueMemberS{Value: "evt_sample_1"},
				"tenant_id":   &streamtypes.AttributeValueMemberS{Value: "tenant_sample"},
				"type":        &streamtypes.AttributeValueMemberS{Value: "payment.succeeded"},
				"payload":     &streamtypes.AttributeValueMemberS{Value: `{"amount":1250,"currency":"eur"}`},
				"occurred_at": &streamtypes.AttributeValueMemberS{Value: "2026-11-30T01:00:00Z"},
				"sequence":    &streamtypes.AttributeValueMemberN{Value: "7"},
			},
			SequenceNumber: aws.String("111100000000000000001"), SizeBytes: aws.Int64(160), StreamViewType: streamtypes.StreamViewTypeNewImage,
		},
	}
	e := newEnv(t, 0, 0)
	e.streams.AddShard(streamARN, shardID, rec)
	body := strings.NewReplacer(seq(1), "111100000000000000001").Replace(failureBody(1, 1))
	body = strings.ReplaceAll(body, streamARN, "arn:aws:dynamodb:us-east-1:000000000000:table/Outbox/stream/2026-11-30T00:00:00.000")
	e.queue.add(body)
	rep := e.run(t)
	require.Equal(t, streamreprocess.Reprocessed, rep.Results[0].Outcome, rep.Results[0].Error)
	got, err := json.Marshal(e.fn.batches[0].Records[0])
	require.NoError(t, err)
	require.JSONEq(t, string(sample.Records[0]), string(got))
}
