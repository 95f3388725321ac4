package sqsfake

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/fakes/awsfake"
)

// SQS's limits, as AWS documents them (Amazon SQS Developer Guide, "Amazon
// SQS message quotas" and the API Reference of each action), written here
// and not read from the product: the fake holds the product to AWS's
// numbers, so it must not share them. rules.go has the rest.
const (
	// MaxBatchEntries: "a maximum of 10 messages" per SendMessageBatch,
	// DeleteMessageBatch, ChangeMessageVisibilityBatch and ReceiveMessage.
	MaxBatchEntries = 10
	// MaxMessageBytes: a message, body and attributes, "up to 256 KiB
	// (262,144 bytes)".
	MaxMessageBytes = 262_144
	// MaxBatchBytes: "the total size of all messages in a batch" is
	// 256 KiB, counted as one message is.
	MaxBatchBytes = 262_144
	// MaxDelaySeconds: DelaySeconds "0 to 900" (15 minutes).
	MaxDelaySeconds = 900
	// MaxWaitSeconds: a long poll's WaitTimeSeconds "0 to 20".
	MaxWaitSeconds = 20
	// MaxVisibilitySeconds: VisibilityTimeout "0 to 43,200" (12 hours).
	MaxVisibilitySeconds = 43_200
	// MaxHidden: ChangeMessageVisibility cannot hide a message past
	// 12 hours from its receive (ChangeMessageVisibility, "the maximum is
	// 12 hours"); the fake counts from the latest receive.
	MaxHidden = 12 * time.Hour
	// DefaultInFlightLimit: "approximately 120,000" in-flight messages on
	// a standard queue.
	DefaultInFlightLimit = 120_000
	// DefaultVisibility: a queue's default VisibilityTimeout, 30 seconds.
	DefaultVisibility = 30 * time.Second
)

// Config sets up a Queue. Every field's zero value is SQS's default.
type Config struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// VisibilityTimeout is the queue's; zero is 30 s.
	VisibilityTimeout time.Duration
	// InFlightLimit is the most messages in flight; zero is 120,000.
	InFlightLimit int
	// CheckSend, if set, is a product rule the fake applies to each sent
	// message after SQS's own (a refusal fails the send or the entry);
	// entryID is the message's batch entry id, "" for a SendMessage.
	CheckSend func(queueURL, entryID string, in *sqs.SendMessageInput) error
	// Fail, if set, is asked before each request, named by its operation
	// ("SendMessageBatch") and queue URL: an error it returns fails the
	// request as an unavailable SQS does, before any rule and without a
	// refusal. It is called without the fake's lock held.
	Fail func(op, queueURL string) error
	// MustExist refuses a send to a queue not created first (CreateQueue,
	// AddQueue) with QueueDoesNotExist, as AWS does; false, a queue exists
	// from its first use.
	MustExist bool
	// Authorize, if set, is asked about each SendMessage the HTTP handler
	// serves: the access key that signed it and the queue's URL. False is
	// AccessDenied (403), as an IAM policy's refusal.
	Authorize func(accessKey, queueURL string) bool
	// Discard keeps no message sent, only its count (Sent): for a
	// benchmark, whose fake must not grow with b.N.
	Discard bool
}

type msg struct {
	id, body   string
	group      *string
	attrs      map[string]types.MessageAttributeValue
	visibleAt  time.Time
	sentAt     time.Time // when it was sent (SQS's SentTimestamp)
	receivedAt time.Time // the latest receive; zero before the first
	handle     string    // the latest receipt handle
	receives   int
	deleted    bool
}

// Queue is a fake SQS holding any number of queues, named by URL; a queue
// exists from its first use (or CreateQueue). Safe for concurrent use.
type Queue struct {
	cfg    Config
	mu     sync.Mutex
	queues map[string][]*msg
	seq    int
	// refused are the errors of the requests refused so far.
	refused []string
	// answered counts the requests answered without an error, by
	// operation and queue URL; sent the messages accepted, by queue URL.
	answered map[[2]string]int
	sent     map[string]int
}

// Message is a message the fake holds, as it was sent, and whether it is
// visible now and how many times it was received.
type Message struct {
	ID, Body   string
	GroupID    *string
	Attributes map[string]types.MessageAttributeValue
	Visible    bool
	Receives   int
}

// New returns an empty fake SQS.
func New(cfg Config) *Queue {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.VisibilityTimeout == 0 {
		cfg.VisibilityTimeout = DefaultVisibility
	}
	if cfg.InFlightLimit == 0 {
		cfg.InFlightLimit = DefaultInFlightLimit
	}
	return &Queue{cfg: cfg, queues: map[string][]*msg{}, answered: map[[2]string]int{}, sent: map[string]int{}}
}

// Refusals returns the errors of the requests refused so far, so that a
// test can fail when a request AWS would refuse was made.
func (q *Queue) Refusals() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.refused...)
}

// Bodies returns the bodies of the messages in queueURL not deleted, in the
// order sent (visible or not).
func (q *Queue) Bodies(queueURL string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for _, m := range q.queues[queueURL] {
		if !m.deleted {
			out = append(out, m.body)
		}
	}
	return out
}

// Messages returns the messages in queueURL not deleted, in the order
// sent (visible or not).
func (q *Queue) Messages(queueURL string) []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Message
	now := q.cfg.Now()
	for _, m := range q.queues[queueURL] {
		if !m.deleted {
			out = append(out, Message{ID: m.id, Body: m.body, GroupID: m.group, Attributes: m.attrs, Visible: !now.Before(m.visibleAt), Receives: m.receives})
		}
	}
	return out
}

// Answered is how many requests of operation op (as "SendMessageBatch") to
// queueURL the fake answered without an error.
func (q *Queue) Answered(op, queueURL string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.answered[[2]string{op, queueURL}]
}

// Sent is how many messages queueURL accepted, deleted and discarded ones
// included.
func (q *Queue) Sent(queueURL string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent[queueURL]
}

// begin asks Config.Fail about a request; then it takes the lock, which the
// returned function, deferred, releases after counting the answer.
func (q *Queue) begin(op, url string, err *error) (func(), error) {
	if q.cfg.Fail != nil {
		if e := q.cfg.Fail(op, url); e != nil {
			return nil, e
		}
	}
	q.mu.Lock()
	return func() {
		if *err == nil {
			q.answered[[2]string{op, url}]++
		}
		q.mu.Unlock()
	}, nil
}

func (q *Queue) refuse(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	q.refused = append(q.refused, err.Error())
	return err
}

// CreateQueue answers the queue's URL, http://sqs.fake/<name>.
func (q *Queue) CreateQueue(_ context.Context, in *sqs.CreateQueueInput, _ ...func(*sqs.Options)) (_ *sqs.CreateQueueOutput, err error) {
	done, err := q.begin("CreateQueue", "http://sqs.fake/"+aws.ToString(in.QueueName), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	url := "http://sqs.fake/" + aws.ToString(in.QueueName)
	if _, ok := q.queues[url]; !ok {
		q.queues[url] = nil
	}
	return &sqs.CreateQueueOutput{QueueUrl: &url}, nil
}

// DeleteQueue forgets a queue and its messages.
func (q *Queue) DeleteQueue(_ context.Context, in *sqs.DeleteQueueInput, _ ...func(*sqs.Options)) (_ *sqs.DeleteQueueOutput, err error) {
	done, err := q.begin("DeleteQueue", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	delete(q.queues, aws.ToString(in.QueueUrl))
	return &sqs.DeleteQueueOutput{}, nil
}

// SendMessage sends one message after SQS's rules (and Config.CheckSend).
func (q *Queue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (_ *sqs.SendMessageOutput, err error) {
	done, err := q.begin("SendMessage", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	id, err := q.sendLocked(aws.ToString(in.QueueUrl), "", in)
	if err != nil {
		return nil, err
	}
	return &sqs.SendMessageOutput{MessageId: &id}, nil
}

func (q *Queue) sendLocked(url, entryID string, in *sqs.SendMessageInput) (string, error) {
	if _, ok := q.queues[url]; !ok && q.cfg.MustExist {
		q.refused = append(q.refused, "QueueDoesNotExist: "+url)
		return "", &awsfake.Error{Status: 400, Code: "QueueDoesNotExist", QueryCode: "AWS.SimpleQueueService.NonExistentQueue", Message: "The specified queue does not exist."}
	}
	if err := checkSend(in); err != nil {
		return "", q.refuse("%v", err)
	}
	if q.cfg.CheckSend != nil {
		if err := q.cfg.CheckSend(url, entryID, in); err != nil {
			return "", q.refuse("%v", err)
		}
	}
	q.seq++
	q.sent[url]++
	if q.cfg.Discard {
		return "m-" + strconv.Itoa(q.seq), nil
	}
	m := &msg{id: "m-" + strconv.Itoa(q.seq), body: aws.ToString(in.MessageBody), group: in.MessageGroupId, attrs: in.MessageAttributes,
		sentAt: q.cfg.Now(), visibleAt: q.cfg.Now().Add(time.Duration(in.DelaySeconds) * time.Second)}
	q.queues[url] = append(q.queues[url], m)
	return m.id, nil
}

// SendMessageBatch checks the batch's rules (entries, ids, bytes), refusing
// the whole request as SQS does, then sends each entry by SendMessage's
// rules, answering a refused entry as failed.
func (q *Queue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (_ *sqs.SendMessageBatchOutput, err error) {
	done, err := q.begin("SendMessageBatch", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	ids := make([]*string, len(in.Entries))
	size := 0
	for i, e := range in.Entries {
		ids[i] = e.Id
		size += messageSize(aws.ToString(e.MessageBody), e.MessageAttributes)
	}
	if err := checkBatch(ids); err != nil {
		return nil, q.refuse("%v", err)
	}
	if size > MaxBatchBytes {
		return nil, q.refuse("AWS.SimpleQueueService.BatchRequestTooLong: %d bytes, at most %d", size, MaxBatchBytes)
	}
	out := &sqs.SendMessageBatchOutput{Successful: []types.SendMessageBatchResultEntry{}, Failed: []types.BatchResultErrorEntry{}}
	for _, e := range in.Entries {
		id, err := q.sendLocked(aws.ToString(in.QueueUrl), aws.ToString(e.Id), &sqs.SendMessageInput{QueueUrl: in.QueueUrl, MessageBody: e.MessageBody,
			DelaySeconds: e.DelaySeconds, MessageGroupId: e.MessageGroupId, MessageAttributes: e.MessageAttributes})
		if err != nil {
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidParameterValue"), Message: aws.String(err.Error()), SenderFault: true})
			continue
		}
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(id)})
	}
	return out, nil
}

// ReceiveMessage hands out up to MaxNumberOfMessages (1..10) visible
// messages, oldest first, hiding each for the request's VisibilityTimeout
// (else the queue's). Past the in-flight limit it receives nothing and
// says nothing, as SQS does; the fake keeps the refusal.
func (q *Queue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (_ *sqs.ReceiveMessageOutput, err error) {
	done, err := q.begin("ReceiveMessage", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	n := in.MaxNumberOfMessages
	if n == 0 {
		n = 1
	}
	if n < 1 || n > MaxBatchEntries {
		return nil, q.refuse("InvalidParameterValue: MaxNumberOfMessages %d is not in 1..10", n)
	}
	if in.WaitTimeSeconds < 0 || in.WaitTimeSeconds > MaxWaitSeconds {
		return nil, q.refuse("InvalidParameterValue: WaitTimeSeconds %d is not in 0..20", in.WaitTimeSeconds)
	}
	hide := q.cfg.VisibilityTimeout
	if in.VisibilityTimeout != 0 {
		if err := checkVisibility(in.VisibilityTimeout); err != nil {
			return nil, q.refuse("%v", err)
		}
		hide = time.Duration(in.VisibilityTimeout) * time.Second
	}
	now := q.cfg.Now()
	out := &sqs.ReceiveMessageOutput{Messages: []types.Message{}}
	for _, m := range q.queues[aws.ToString(in.QueueUrl)] {
		if len(out.Messages) == int(n) {
			break
		}
		if m.deleted || now.Before(m.visibleAt) {
			continue
		}
		if inflight := q.inFlightLocked(aws.ToString(in.QueueUrl), now); inflight >= q.cfg.InFlightLimit {
			_ = q.refuse("OverLimit: %d messages in flight, the limit is %d: nothing received", inflight, q.cfg.InFlightLimit)
			break
		}
		q.seq++
		m.receives++
		m.receivedAt, m.visibleAt = now, now.Add(hide)
		m.handle = m.id + "#" + strconv.Itoa(q.seq)
		out.Messages = append(out.Messages, m.message())
	}
	return out, nil
}

func (m *msg) message() types.Message {
	return types.Message{MessageId: aws.String(m.id), ReceiptHandle: aws.String(m.handle), Body: aws.String(m.body),
		MessageAttributes: m.attrs, Attributes: map[string]string{
			string(types.MessageSystemAttributeNameApproximateReceiveCount): strconv.Itoa(m.receives),
			string(types.MessageSystemAttributeNameSentTimestamp):           strconv.FormatInt(m.sentAt.UnixMilli(), 10),
		}}
}

// InFlight is how many messages of queueURL are in flight now: received,
// not deleted, still hidden.
func (q *Queue) InFlight(queueURL string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlightLocked(queueURL, q.cfg.Now())
}

func (q *Queue) inFlightLocked(url string, now time.Time) int {
	n := 0
	for _, m := range q.queues[url] {
		if !m.deleted && m.receives > 0 && now.Before(m.visibleAt) {
			n++
		}
	}
	return n
}

func (q *Queue) byHandle(url, handle string) (*msg, error) {
	for _, m := range q.queues[url] {
		if m.handle == handle && handle != "" {
			return m, nil
		}
	}
	return nil, fmt.Errorf("ReceiptHandleIsInvalid: %q", handle)
}

// DeleteMessage deletes the message a receipt handle names. As on SQS, the
// latest handle of a message deletes it even when it is visible again.
func (q *Queue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (_ *sqs.DeleteMessageOutput, err error) {
	done, err := q.begin("DeleteMessage", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := q.deleteLocked(aws.ToString(in.QueueUrl), aws.ToString(in.ReceiptHandle)); err != nil {
		return nil, err
	}
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *Queue) deleteLocked(url, handle string) error {
	m, err := q.byHandle(url, handle)
	if err != nil {
		return q.refuse("%v", err)
	}
	m.deleted = true
	return nil
}

// DeleteMessageBatch deletes each entry's message after the batch rules.
func (q *Queue) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (_ *sqs.DeleteMessageBatchOutput, err error) {
	done, err := q.begin("DeleteMessageBatch", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	ids := make([]*string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.Id
	}
	if err := checkBatch(ids); err != nil {
		return nil, q.refuse("%v", err)
	}
	out := &sqs.DeleteMessageBatchOutput{Successful: []types.DeleteMessageBatchResultEntry{}, Failed: []types.BatchResultErrorEntry{}}
	for _, e := range in.Entries {
		if err := q.deleteLocked(aws.ToString(in.QueueUrl), aws.ToString(e.ReceiptHandle)); err != nil {
			out.Failed = append(out.Failed, failed(e.Id, err))
			continue
		}
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func failed(id *string, err error) types.BatchResultErrorEntry {
	return types.BatchResultErrorEntry{Id: id, Code: aws.String("InvalidParameterValue"), Message: aws.String(err.Error()), SenderFault: true}
}

// ChangeMessageVisibility hides an in-flight message for VisibilityTimeout
// from now (0..43200), refusing a message no longer in flight and one that
// would stay hidden more than 12 h after its receive.
func (q *Queue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (_ *sqs.ChangeMessageVisibilityOutput, err error) {
	done, err := q.begin("ChangeMessageVisibility", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := q.changeLocked(aws.ToString(in.QueueUrl), aws.ToString(in.ReceiptHandle), in.VisibilityTimeout); err != nil {
		return nil, err
	}
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func (q *Queue) changeLocked(url, handle string, timeout int32) error {
	m, err := q.byHandle(url, handle)
	if err != nil {
		return q.refuse("%v", err)
	}
	now := q.cfg.Now()
	if m.deleted || !now.Before(m.visibleAt) {
		return q.refuse("MessageNotInflight: %s", m.id)
	}
	if err := checkVisibility(timeout); err != nil {
		return q.refuse("%v", err)
	}
	until := now.Add(time.Duration(timeout) * time.Second)
	if until.Sub(m.receivedAt) > MaxHidden {
		return q.refuse("InvalidParameterValue: VisibilityTimeout %d, received %s ago: hidden past 12 h from the receive", timeout, now.Sub(m.receivedAt))
	}
	m.visibleAt = until
	return nil
}

// ChangeMessageVisibilityBatch changes each entry after the batch rules.
func (q *Queue) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (_ *sqs.ChangeMessageVisibilityBatchOutput, err error) {
	done, err := q.begin("ChangeMessageVisibilityBatch", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	ids := make([]*string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.Id
	}
	if err := checkBatch(ids); err != nil {
		return nil, q.refuse("%v", err)
	}
	out := &sqs.ChangeMessageVisibilityBatchOutput{Successful: []types.ChangeMessageVisibilityBatchResultEntry{}, Failed: []types.BatchResultErrorEntry{}}
	for _, e := range in.Entries {
		if err := q.changeLocked(aws.ToString(in.QueueUrl), aws.ToString(e.ReceiptHandle), e.VisibilityTimeout); err != nil {
			out.Failed = append(out.Failed, failed(e.Id, err))
			continue
		}
		out.Successful = append(out.Successful, types.ChangeMessageVisibilityBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

// GetQueueAttributes answers ApproximateNumberOfMessages (visible),
// ApproximateNumberOfMessagesNotVisible (in flight) and
// ApproximateNumberOfMessagesDelayed, whatever names are asked.
func (q *Queue) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (_ *sqs.GetQueueAttributesOutput, err error) {
	done, err := q.begin("GetQueueAttributes", aws.ToString(in.QueueUrl), &err)
	if err != nil {
		return nil, err
	}
	defer done()
	now := q.cfg.Now()
	var visible, hidden, delayed int
	for _, m := range q.queues[aws.ToString(in.QueueUrl)] {
		switch {
		case m.deleted:
		case !now.Before(m.visibleAt):
			visible++
		case m.receives > 0:
			hidden++
		default:
			delayed++
		}
	}
	attrs := map[string]string{
		string(types.QueueAttributeNameApproximateNumberOfMessages):           strconv.Itoa(visible),
		string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible): strconv.Itoa(hidden),
		string(types.QueueAttributeNameApproximateNumberOfMessagesDelayed):    strconv.Itoa(delayed),
	}
	return &sqs.GetQueueAttributesOutput{Attributes: attrs}, nil
}

// URLs returns the queues' URLs, sorted.
func (q *Queue) URLs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for u := range q.queues {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}
