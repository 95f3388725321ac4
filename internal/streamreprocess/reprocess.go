package streamreprocess

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/enqueue"
)

// StreamRetention is how long DynamoDB Streams keeps a record: 24 hours,
// fixed by the service. Past it a record may be trimmed at any moment.
const StreamRetention = 24 * time.Hour

const streamRetention = StreamRetention

// Queue is what reprocessing does with the enqueue failure queue.
type Queue interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ Queue = (*sqs.Client)(nil)

// Reprocessor reprocesses the batches parked on the enqueue failure queue. Set
// the clients and names; every other field has a default.
type Reprocessor struct {
	// Queue and QueueURL: the enqueue failure queue. Required.
	Queue    Queue
	QueueURL string
	// Streams reads the outbox stream. Required.
	Streams Streams
	// Lambda and FunctionName: the enqueue function. Required.
	Lambda       Invoker
	FunctionName string
	// Bus puts the parked operational events (enqueue.ParkedEvent: the
	// operator's bus refused them) on the bus again. Nil: they are kept
	// and reported failed.
	Bus Bus

	// OutboxFallback, when true, reprocesses the batches no longer in the
	// stream from the outbox table (Outbox, OutboxTable: required then).
	// Default false: such batches are kept and reported.
	OutboxFallback bool
	Outbox         Scanner
	OutboxTable    string
	// OutboxMargin widens, on both sides, the time window of a batch's
	// arrivals in which its events' occurred_at is looked for. Default 1 h.
	OutboxMargin time.Duration
	// Region is the awsRegion of the records built from outbox items.
	Region string

	// Attempts is how many times a payload is invoked before its message is
	// kept for a later run. Default 5.
	Attempts int
	// Visibility hides each message received for this long, the run's time
	// to process it; the messages kept are made visible again when the run
	// ends. Default 30 min, at most 12 h (SQS's limit).
	Visibility time.Duration

	// Log receives a line per message. Default: discarded.
	Log *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Sleep pauses between retries. Default: a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// EmptyReadPause is the pause after a read of the shard that found no
	// record. Default 200 ms (a shard allows 5 reads a second).
	EmptyReadPause time.Duration
}

// MaxVisibility is the longest SQS hides a received message: 12 hours.
const MaxVisibility = 12 * time.Hour

// Outcome is what became of one parked message.
type Outcome string

// Outcomes. Only the reprocessed messages are deleted; the others are kept.
const (
	// Reprocessed: the batch was read from the stream and every record was
	// processed; the message is deleted.
	Reprocessed Outcome = "reprocessed"
	// ReprocessedFromOutbox: the records were gone from the stream, and the
	// events of the batch's time window were processed from the outbox
	// table; the message is deleted.
	ReprocessedFromOutbox Outcome = "reprocessed_from_outbox"
	// Gone: the records are no longer in the stream; the message is kept.
	Gone Outcome = "gone"
	// Failed: reading the stream or the enqueue function kept failing; the
	// message is kept.
	Failed Outcome = "failed"
	// Invalid: the message is not a stream failure record; it is kept.
	Invalid Outcome = "invalid"
	// Resent: the message was an operational event enqueue parked (the
	// operator's bus refused it), and it is now on the bus; the message is
	// deleted.
	Resent Outcome = "resent"
)

// Result is one message's outcome.
type Result struct {
	MessageID string    `json:"message_id"`
	Outcome   Outcome   `json:"outcome"`
	Batch     BatchInfo `json:"batch"`
	// Records is how many records were read back from the stream.
	Records int `json:"records"`
	// Retries counts the invocations that failed and were made again.
	Retries int    `json:"retries"`
	Error   string `json:"error,omitempty"`
}

// Report is what a run did.
type Report struct {
	Results []Result `json:"results"`
	// Deleted and Kept count the messages deleted and kept.
	Deleted int `json:"deleted"`
	Kept    int `json:"kept"`
	// Retries counts the invocations made again after a failure.
	Retries int `json:"retries"`
	// OutboxEvents is how many outbox events the fallback processed;
	// OutboxUnplaced, how many items it left alone for want of a readable
	// occurred_at.
	OutboxEvents   int `json:"outbox_events"`
	OutboxUnplaced int `json:"outbox_unplaced"`
}

// maxStaleReceives ends a run whose receives keep bringing back only the
// messages it already holds (their visibility ran out, the run being slower
// than Visibility), so that it cannot loop on them.
const maxStaleReceives = 10

// held is a message received and not deleted yet.
type held struct {
	receipt string
	result  *Result
}

// Run reprocesses every message on the queue once: it receives them until
// the queue answers none, processes each as it comes, deletes those
// processed, then (with the outbox fallback) processes the batches gone
// from the stream from the outbox table, and last makes the messages it
// keeps visible again, for the next run. A message it cannot handle never
// stops the run; the error is for a failure of the queue itself or ctx.
func (r *Reprocessor) Run(ctx context.Context) (Report, error) {
	if err := r.check(); err != nil {
		return Report{}, err
	}
	rep := Report{Results: []Result{}}
	hs := &holding{seen: map[string]*held{}}
	runErr := r.receiveAll(ctx, hs)
	if runErr == nil && r.OutboxFallback {
		r.fallback(ctx, hs.seen, hs.order, &rep)
	}
	r.release(ctx, hs, &rep)
	return rep, runErr
}

// holding is the messages a run holds, by id and in the order first
// received.
type holding struct {
	seen  map[string]*held
	order []string
}

// receiveAll receives the queue's messages until it answers none (or only
// messages already held, maxStaleReceives times in a row), processing each
// new one as it comes and deleting those reprocessed.
func (r *Reprocessor) receiveAll(ctx context.Context, hs *holding) error {
	stale := 0
	for stale < maxStaleReceives {
		out, err := r.Queue.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(r.QueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			VisibilityTimeout: int32(r.visibility().Seconds()),
		})
		if err != nil {
			return fmt.Errorf("receive from %s: %w", r.QueueURL, err)
		}
		if len(out.Messages) == 0 {
			return nil
		}
		fresh, err := r.take(ctx, hs, out.Messages)
		if err != nil {
			return err
		}
		if fresh {
			stale = 0
		} else {
			stale++
		}
	}
	return nil
}

// take processes the received messages not held yet, holds them, and
// deletes those reprocessed; fresh reports whether there was one. It stops
// when ctx is done.
func (r *Reprocessor) take(ctx context.Context, hs *holding, msgs []sqstypes.Message) (fresh bool, err error) {
	for _, m := range msgs {
		id := aws.ToString(m.MessageId)
		if h, ok := hs.seen[id]; ok {
			// Back after the visibility ran out: keep the newest
			// receipt; the receive hid it again.
			h.receipt = aws.ToString(m.ReceiptHandle)
			continue
		}
		fresh = true
		res := r.process(ctx, m)
		h := &held{receipt: aws.ToString(m.ReceiptHandle), result: &res}
		hs.seen[id] = h
		hs.order = append(hs.order, id)
		if res.Outcome == Reprocessed || res.Outcome == Resent {
			r.remove(ctx, h)
		}
		if ctx.Err() != nil {
			return fresh, ctx.Err()
		}
	}
	return fresh, nil
}

// release reports each held message's result and makes those kept visible
// again, even when ctx is done: the next run should not wait out the
// visibility timeout.
func (r *Reprocessor) release(ctx context.Context, hs *holding, rep *Report) {
	release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, id := range hs.order {
		h := hs.seen[id]
		res := *h.result
		rep.Results = append(rep.Results, res)
		rep.Retries += res.Retries
		if res.Outcome == Reprocessed || res.Outcome == ReprocessedFromOutbox || res.Outcome == Resent {
			rep.Deleted++
			continue
		}
		rep.Kept++
		if _, err := r.Queue.ChangeMessageVisibility(release, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(r.QueueURL), ReceiptHandle: aws.String(h.receipt), VisibilityTimeout: 0,
		}); err != nil {
			r.log().WarnContext(ctx, "could not make a kept message visible again; it will be after the visibility timeout", "message_id", id, "error", err.Error())
		}
	}
}

// process reprocesses one message, from the stream (a failure record) or to
// the operator's bus (a parked operational event), and says how it went.
func (r *Reprocessor) process(ctx context.Context, m sqstypes.Message) Result {
	res := Result{MessageID: aws.ToString(m.MessageId)}
	log := r.log().With("message_id", res.MessageID)
	fail := func(o Outcome, err error) Result {
		res.Outcome, res.Error = o, err.Error()
		log.WarnContext(ctx, "parked batch not reprocessed from the stream", "outcome", string(o), "shard_id", res.Batch.ShardID,
			"start_sequence_number", res.Batch.StartSequenceNumber, "end_sequence_number", res.Batch.EndSequenceNumber, "error", res.Error)
		return res
	}
	if p, parked, err := enqueue.ParseParked(aws.ToString(m.Body)); parked {
		if err != nil {
			return fail(Invalid, err)
		}
		return r.resend(ctx, res, p)
	}
	rec, err := ParseFailureRecord(aws.ToString(m.Body))
	if err != nil {
		return fail(Invalid, err)
	}
	res.Batch = rec.Batch
	recs, err := r.readBatch(ctx, rec.Batch)
	if errors.Is(err, ErrGone) {
		return fail(Gone, err)
	}
	if err != nil {
		return fail(Failed, err)
	}
	res.Records = len(recs)
	if rec.Batch.BatchSize > 0 && len(recs) != rec.Batch.BatchSize {
		// Not an error: the records between the two sequence numbers are
		// the batch. Worth a look all the same.
		log.WarnContext(ctx, "the batch read back does not have the size the failure record gives", "records", len(recs), "batch_size", rec.Batch.BatchSize)
	}
	evs := make([]events.DynamoDBEventRecord, 0, len(recs))
	for _, sr := range recs {
		ev, err := eventRecord(sr, rec.Batch.StreamARN)
		if err != nil {
			return fail(Failed, err)
		}
		evs = append(evs, ev)
	}
	bodies, err := payloads(evs)
	if err != nil {
		return fail(Failed, err)
	}
	for _, p := range bodies {
		retries, err := r.invoke(ctx, p)
		res.Retries += retries
		if err != nil {
			return fail(Failed, err)
		}
	}
	res.Outcome = Reprocessed
	log.InfoContext(ctx, "parked batch reprocessed", "shard_id", rec.Batch.ShardID, "start_sequence_number", rec.Batch.StartSequenceNumber,
		"end_sequence_number", rec.Batch.EndSequenceNumber, "records", len(recs), "retries", res.Retries)
	return res
}

// remove deletes a processed message. If that fails, the message is kept
// (its records were processed; a later run processes them again, which is
// harmless).
func (r *Reprocessor) remove(ctx context.Context, h *held) {
	if _, err := r.Queue.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(r.QueueURL), ReceiptHandle: aws.String(h.receipt)}); err != nil {
		h.result.Outcome = Failed
		h.result.Error = fmt.Sprintf("processed, but the message could not be deleted: %v", err)
		r.log().WarnContext(ctx, "could not delete a reprocessed message", "message_id", h.result.MessageID, "error", err.Error())
	}
}

// fallback reprocesses the gone batches from the outbox table, all in one
// scan. It deletes the message of a batch once every event of the outbox
// that occurred in the batch's window was processed, if there was any: a
// window with no event keeps its message (the items expired too, or their
// occurred_at is further from their write than the margin).
func (r *Reprocessor) fallback(ctx context.Context, seen map[string]*held, order []string, rep *Report) {
	var gone []*held
	var ws []window
	for _, id := range order {
		h := seen[id]
		if h.result.Outcome != Gone {
			continue
		}
		if b := h.result.Batch; b.FirstArrival.IsZero() || b.LastArrival.IsZero() {
			h.result.Error += "; not reprocessed from the outbox table: the failure record gives no arrival times"
			continue
		}
		gone = append(gone, h)
		ws = append(ws, outboxWindow(h.result.Batch, r.outboxMargin()))
	}
	if len(gone) == 0 {
		return
	}
	r.log().InfoContext(ctx, "reprocessing the batches gone from the stream from the outbox table", "messages", len(gone), "table", r.OutboxTable)
	res, err := r.fromOutbox(ctx, ws, gone[0].result.Batch.StreamARN)
	rep.OutboxEvents, rep.OutboxUnplaced = res.Events, res.Unplaced
	rep.Retries += res.Retries
	if err != nil {
		for _, h := range gone {
			h.result.Error += "; not reprocessed from the outbox table: " + err.Error()
		}
		r.log().WarnContext(ctx, "reprocessing from the outbox table failed; the messages are kept", "error", err.Error())
		return
	}
	for i, h := range gone {
		if res.Found[i] == 0 {
			h.result.Error += fmt.Sprintf("; no outbox event occurred between %s and %s (expired, or occurred_at further than the margin from the write)",
				ws[i].from.UTC().Format(time.RFC3339), ws[i].to.UTC().Format(time.RFC3339))
			continue
		}
		h.result.Outcome = ReprocessedFromOutbox
		r.log().InfoContext(ctx, "parked batch reprocessed from the outbox table", "message_id", h.result.MessageID,
			"events_in_window", res.Found[i], "from", ws[i].from.UTC().Format(time.RFC3339), "to", ws[i].to.UTC().Format(time.RFC3339))
		r.remove(ctx, h)
	}
}

func (r *Reprocessor) check() error {
	switch {
	case r.Queue == nil || r.QueueURL == "":
		return errors.New("the enqueue failure queue is required")
	case r.Streams == nil:
		return errors.New("a DynamoDB Streams client is required")
	case r.Lambda == nil || r.FunctionName == "":
		return errors.New("the enqueue function is required")
	case r.OutboxFallback && (r.Outbox == nil || r.OutboxTable == ""):
		return errors.New("the outbox fallback needs the outbox table")
	case r.Visibility < 0 || r.Visibility > MaxVisibility:
		return fmt.Errorf("visibility %s is not within 0 and %s", r.Visibility, MaxVisibility)
	case r.Attempts < 0:
		return fmt.Errorf("attempts %d is negative", r.Attempts)
	}
	return nil
}

func (r *Reprocessor) attempts() int {
	if r.Attempts > 0 {
		return r.Attempts
	}
	return 5
}

func (r *Reprocessor) visibility() time.Duration {
	if r.Visibility > 0 {
		return r.Visibility
	}
	return 30 * time.Minute
}

func (r *Reprocessor) outboxMargin() time.Duration {
	if r.OutboxMargin > 0 {
		return r.OutboxMargin
	}
	return time.Hour
}

func (r *Reprocessor) emptyReadPause() time.Duration {
	if r.EmptyReadPause > 0 {
		return r.EmptyReadPause
	}
	return 200 * time.Millisecond
}

func (r *Reprocessor) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reprocessor) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Reprocessor) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}
