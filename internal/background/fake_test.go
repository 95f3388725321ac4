package background_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/background"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// newClock is the tests' clock, which moves only when a test advances it.
func newClock() *storetest.Clock {
	return storetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
}

// errInjected is the infrastructure failure the fakes inject.
var errInjected = errors.New("injected failure")

// fault makes the call-th call (1-based, counted per method from the fake's
// creation) of method fail. Before the call takes effect, or, with after,
// once it has (a write whose response was lost).
type fault struct {
	method string
	call   int
	after  bool
}

// faults counts calls per method and says which fail.
type faults struct {
	calls map[string]int
	rules []fault
}

// hit counts a call of method and returns the fault it triggers, if any.
func (f *faults) hit(method string) (before, after error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	for _, r := range f.rules {
		if r.method == method && r.call == f.calls[method] {
			err := fmt.Errorf("%s call %d: %w", method, r.call, errInjected)
			if r.after {
				return nil, err
			}
			return err, nil
		}
	}
	return nil, nil
}

// testStore is the real store on the fake table (storefake) with what
// these tests add:
// faults injected by method and call (before the call takes effect, or
// after: a write whose answer was lost), hooks that interleave other work
// before a claim or a recorded death, and a check that the worker reads
// deliveries only, at most 100 at once.
type testStore struct {
	*storefake.Store
	mu     sync.Mutex
	faults faults
	// beforeClaim, when set, runs (without the lock) at the start of every
	// ClaimForReplay: a test interleaves other work there.
	beforeClaim func(id, job string)
	// claimBatches are how many deliveries each ClaimForReplay call took.
	claimBatches []int
	// beforeRecord, when set, runs (without the lock) at the start of every
	// RecordAttemptIfUnchanged: a test makes or changes the record there.
	beforeRecord func(id string)
}

func newFakeStore(now func() time.Time) *testStore {
	s := &testStore{Store: storefake.New()}
	s.Store.Now = now
	return s
}

// ports is the worker's Store, every port this store.
func (s *testStore) ports() background.Store {
	return s
}

func timePtr(t time.Time) *time.Time { return &t }

// put writes a delivery as the delivery worker would have left it: a dead
// one (with its dead_at) is in the dead-letter index.
func (s *testStore) put(d domain.Delivery) { s.PutDelivery(d) }

// get reads a delivery as stored, and whether it is in the dead index.
func (s *testStore) get(id string) (domain.Delivery, bool) {
	d, _ := s.Store.Delivery(context.Background(), id)
	return d, s.InDeadIndex(id)
}

func (s *testStore) putEndpoint(e domain.Endpoint) {
	if err := s.PutEndpoint(context.Background(), e); err != nil {
		panic(err)
	}
}

func (s *testStore) fail(rules ...fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.rules = append(s.faults.rules, rules...)
}

// job reads a job as stored (the zero job if there is none).
func (s *testStore) job(id string) domain.Job {
	j, _ := s.Store.Job(context.Background(), id)
	return j
}

// argsOf decodes job j's arguments as their kind's type A.
func argsOf[A domain.JobArgs](t *testing.T, j domain.Job) *A {
	t.Helper()
	a, err := jobs.ArgsOf[A](&j)
	require.NoError(t, err)
	return a
}

// open returns the ids of a tenant's open jobs, as CreateJob counts them.
func (s *testStore) open(tenantID string) []string {
	ids, _ := s.Store.TenantJobs(context.Background(), tenantID)
	return ids
}

// hit counts a call of method and returns the faults it triggers.
func (s *testStore) hit(method string) (before, after error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.hit(method)
}

// faulty runs call as method, with the faults the tests injected: one
// before fails the call, one after fails it once it took effect.
func faulty[T any](s *testStore, method string, call func() (T, error)) (T, error) {
	var zero T
	before, after := s.hit(method)
	if before != nil {
		return zero, before
	}
	v, err := call()
	if err == nil && after != nil {
		return zero, after
	}
	return v, err
}

func (s *testStore) Job(ctx context.Context, id string) (domain.Job, error) {
	return faulty(s, "Job", func() (domain.Job, error) { return s.Store.Job(ctx, id) })
}

func (s *testStore) SaveJob(ctx context.Context, j *domain.Job) error {
	prev := j.Version
	_, err := faulty(s, "SaveJob", func() (struct{}, error) { return struct{}{}, s.Store.SaveJob(ctx, j) })
	if err != nil {
		j.Version = prev // as the real store does on any error
	}
	return err
}

func (s *testStore) CreateJob(ctx context.Context, j *domain.Job, limit int) error {
	if j.Version == 0 && (j.TenantID == "" || limit <= 0) {
		return s.SaveJob(ctx, j) // as the store does: no slot to take
	}
	_, err := faulty(s, "CreateJob", func() (struct{}, error) { return struct{}{}, s.Store.CreateJob(ctx, j, limit) })
	if err != nil {
		j.Version = 0
	}
	return err
}

func (s *testStore) TenantJobs(ctx context.Context, tenantID string) ([]string, error) {
	return faulty(s, "TenantJobs", func() ([]string, error) { return s.Store.TenantJobs(ctx, tenantID) })
}

func (s *testStore) ReleaseJob(ctx context.Context, tenantID, jobID string) error {
	_, err := faulty(s, "ReleaseJob", func() (struct{}, error) { return struct{}{}, s.Store.ReleaseJob(ctx, tenantID, jobID) })
	return err
}

func (s *testStore) IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.Job, error) {
	return faulty(s, "IdleJobs", func() ([]domain.Job, error) { return s.Store.IdleJobs(ctx, before, limit) })
}

func (s *testStore) ClaimSweep(ctx context.Context, gap time.Duration) (bool, error) {
	return faulty(s, "ClaimSweep", func() (bool, error) { return s.Store.ClaimSweep(ctx, gap) })
}

func (s *testStore) Delivery(ctx context.Context, id string) (domain.Delivery, error) {
	return faulty(s, "Delivery", func() (domain.Delivery, error) { return s.Store.Delivery(ctx, id) })
}

func (s *testStore) Load(ctx context.Context, ids []string, refs []store.EndpointRef) (store.Snapshot, error) {
	return faulty(s, "Load", func() (store.Snapshot, error) {
		if len(ids) > 100 || len(refs) > 0 {
			return store.Snapshot{}, fmt.Errorf("the worker reads deliveries only, at most 100 at once; got %d and %d endpoints", len(ids), len(refs))
		}
		return s.Store.Load(ctx, ids, refs)
	})
}

func (s *testStore) Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	return faulty(s, "Endpoint", func() (domain.Endpoint, error) { return s.Store.Endpoint(ctx, tenantID, endpointID) })
}

func (s *testStore) ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	type page struct {
		ds   []domain.Delivery
		next string
	}
	p, err := faulty(s, "ListDead", func() (page, error) {
		ds, next, err := s.Store.ListDead(ctx, tenantID, f, limit, cursor)
		return page{ds, next}, err
	})
	return p.ds, p.next, err
}

// ClaimForReplay counts each delivery of the batch as a call of its own
// (so a fault at call k falls on the batch that claims the k-th delivery);
// a fault before fails the whole batch with nothing written, one after
// writes it all and answers the fault for each (the transaction's answer
// lost).
func (s *testStore) ClaimForReplay(ctx context.Context, reads []domain.Delivery, tenantID, job string, stale time.Duration) ([]domain.Delivery, []error) {
	s.mu.Lock()
	hook := s.beforeClaim
	s.claimBatches = append(s.claimBatches, len(reads))
	s.mu.Unlock()
	if hook != nil {
		for _, d := range reads {
			hook(d.DeliveryID, job)
		}
	}
	var before, after error
	for range reads {
		b, a := s.hit("ClaimForReplay")
		before, after = cmp.Or(before, b), cmp.Or(after, a)
	}
	all := func(err error) ([]domain.Delivery, []error) {
		errs := make([]error, len(reads))
		for i := range errs {
			errs[i] = err
		}
		return make([]domain.Delivery, len(reads)), errs
	}
	if before != nil {
		return all(before)
	}
	ds, errs := s.Store.ClaimForReplay(ctx, reads, tenantID, job, stale)
	if after != nil {
		return all(after)
	}
	return ds, errs
}

// ReleaseReplay counts each delivery as a call of its own, as
// ClaimForReplay does.
func (s *testStore) ReleaseReplay(ctx context.Context, ids []string, job string) error {
	var before, after error
	for range ids {
		b, a := s.hit("ReleaseReplay")
		before, after = cmp.Or(before, b), cmp.Or(after, a)
	}
	if before != nil {
		return before
	}
	if err := s.Store.ReleaseReplay(ctx, ids, job); err != nil {
		return err
	}
	return after
}

func (s *testStore) RecordAttemptIfUnchanged(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	s.mu.Lock()
	hook := s.beforeRecord
	s.mu.Unlock()
	if hook != nil {
		hook(d.DeliveryID)
	}
	_, err := faulty(s, "RecordAttemptIfUnchanged", func() (struct{}, error) {
		return struct{}{}, s.Store.RecordAttemptIfUnchanged(ctx, d, a, o)
	})
	return err
}

// Queue URLs of the tests.
const (
	deliveryURL = "https://sqs.test/1/delivery"
	dlqURL      = "https://sqs.test/1/delivery-dlq"
	arrivalsURL = "https://sqs.test/1/delivery-dlq-arrivals"
	jobsURL     = "https://sqs.test/1/replay-jobs"
	opsURL      = "https://sqs.test/1/replay-ops"
)

// sentMsg is one message a test's worker sent.
type sentMsg struct {
	Queue string
	Body  string
	Delay int32
	At    time.Time
	Batch bool
	// Group is the message's MessageGroupId ("" without one).
	Group string
}

// dlqMsg is a message in the fake DLQ.
type dlqMsg struct {
	ID, Body  string
	SentAt    time.Time
	VisibleAt time.Time
	Receipt   string
	Receives  int
	// ReceivedAt is the time of the receive that issued Receipt.
	ReceivedAt time.Time
}

// visChange records a ChangeMessageVisibility call.
type visChange struct {
	MessageID string
	Timeout   int32
}

// fakeQueue is an in-memory background.Queue: it records every message sent (to
// the delivery, jobs and operations queues) with its delay, and holds a dead-letter
// queue that ReceiveMessage reads as SQS does: only visible messages, at
// most MaxNumberOfMessages (and at most perReceive, as SQS may return
// fewer), each then hidden for the VisibilityTimeout and given a new
// receipt handle, with the SentTimestamp attribute when asked for it.
// DeleteMessage and ChangeMessageVisibility take a current receipt handle.
// Requests SQS would reject (delays over 900 s, empty bodies or over 256
// KiB, visibility timeouts outside 0..43200 s or ending more than 12 h after
// the message's receive, and batches that message.CheckBatch refuses: over
// 10 entries or 256 KiB, repeated ids, characters SQS refuses) fail, and so
// does a message sent to the delivery queue or the DLQ outside its
// tenant's message group (message.CheckGroupID). It is safe for concurrent
// use.
type fakeQueue struct {
	mu  sync.Mutex
	now func() time.Time

	sends      []sentMsg
	dlq        []*dlqMsg
	arrivals   []*dlqMsg      // the DLQ's arrivals: SQS's redrive target
	receives   map[string]int // ReceiveMessage calls by queue URL
	deleted    []string       // ids of DLQ messages deleted
	visibility []visChange
	perReceive int
	nextID     int

	faults faults
	// failEntry, when set, makes SendMessageBatch report the entries it
	// returns true for as failed (not sent).
	failEntry func(call int, body string) bool
}

var _ background.Queue = (*fakeQueue)(nil)

func newFakeQueue(now func() time.Time) *fakeQueue { return &fakeQueue{now: now} }

func (q *fakeQueue) fail(rules ...fault) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults.rules = append(q.faults.rules, rules...)
}

// addDLQ puts a message in the DLQ as sent at sentAt, visible now.
func (q *fakeQueue) addDLQ(body string, sentAt time.Time) string {
	return q.add(&q.dlq, "m-", body, sentAt)
}

// addArrival puts a message in the DLQ's arrivals as SQS's redrive does,
// sent (to the delivery queue) at sentAt, visible now.
func (q *fakeQueue) addArrival(body string, sentAt time.Time) string {
	return q.add(&q.arrivals, "a-", body, sentAt)
}

// add puts a message in box, its id prefix and a number.
func (q *fakeQueue) add(box *[]*dlqMsg, prefix, body string, sentAt time.Time) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nextID++
	id := prefix + strconv.Itoa(q.nextID)
	*box = append(*box, &dlqMsg{ID: id, Body: body, SentAt: sentAt})
	return id
}

// box is the messages of the queue at url the fake receives from: the
// DLQ's or its arrivals'.
func (q *fakeQueue) box(url *string) (*[]*dlqMsg, error) {
	switch aws.ToString(url) {
	case dlqURL:
		return &q.dlq, nil
	case arrivalsURL:
		return &q.arrivals, nil
	}
	return nil, errors.New("the fake receives from the DLQ and its arrivals only")
}

// dlqState returns a copy of a DLQ message, and whether it is still there.
func (q *fakeQueue) dlqState(id string) (dlqMsg, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range q.dlq {
		if m.ID == id {
			return *m, true
		}
	}
	return dlqMsg{}, false
}

// sentTo returns the messages sent to any of the queues urls, in order.
func (q *fakeQueue) sentTo(urls ...string) []sentMsg {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []sentMsg
	for _, m := range q.sends {
		if slices.Contains(urls, m.Queue) {
			out = append(out, m)
		}
	}
	return out
}

// replayed counts the delivery messages sent back, by delivery id.
func (q *fakeQueue) replayed() map[string]int {
	n := map[string]int{}
	for _, m := range q.sentTo(deliveryURL) {
		msg, err := message.Decode(m.Body)
		if err != nil {
			panic("a replayed message does not decode: " + err.Error())
		}
		n[msg.DeliveryID]++
	}
	return n
}

func checkQueue(url *string) error {
	if url == nil || (*url != deliveryURL && *url != dlqURL && *url != arrivalsURL && *url != jobsURL && *url != opsURL) {
		return errors.New("AWS.SimpleQueueService.NonExistentQueue")
	}
	return nil
}

// checkGroup refuses a message sent to the delivery queue or the DLQ
// outside its tenant's message group (message.CheckGroupID).
func checkGroup(url string, body *string, group *string) error {
	if url != deliveryURL && url != dlqURL {
		return nil
	}
	return message.CheckGroupID(aws.ToString(body), group)
}

func checkSend(body *string, delay int32) error {
	if body == nil || *body == "" {
		return errors.New("InvalidParameterValue: the message body is empty")
	}
	if len(*body) > message.MaxBatchBytes {
		return fmt.Errorf("InvalidParameterValue: a message of %d bytes is over SQS's 256 KiB", len(*body))
	}
	if delay < 0 || delay > 900 {
		return fmt.Errorf("InvalidParameterValue: DelaySeconds %d is not in 0..900", delay)
	}
	return nil
}

func (q *fakeQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	before, after := q.faults.hit("SendMessage")
	if before != nil {
		return nil, before
	}
	if err := checkQueue(in.QueueUrl); err != nil {
		return nil, err
	}
	if err := checkSend(in.MessageBody, in.DelaySeconds); err != nil {
		return nil, err
	}
	if err := checkGroup(*in.QueueUrl, in.MessageBody, in.MessageGroupId); err != nil {
		return nil, err
	}
	q.sends = append(q.sends, sentMsg{Queue: *in.QueueUrl, Body: *in.MessageBody, Delay: in.DelaySeconds, At: q.now(), Group: aws.ToString(in.MessageGroupId)})
	q.nextID++
	id := "m-" + strconv.Itoa(q.nextID)
	if *in.QueueUrl == dlqURL {
		q.dlq = append(q.dlq, &dlqMsg{ID: id, Body: *in.MessageBody, SentAt: q.now()})
	}
	if after != nil {
		return nil, after
	}
	return &sqs.SendMessageOutput{MessageId: &id}, nil
}

func (q *fakeQueue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	before, after := q.faults.hit("SendMessageBatch")
	if before != nil {
		return nil, before
	}
	if err := checkQueue(in.QueueUrl); err != nil {
		return nil, err
	}
	if err := message.CheckBatch(in.Entries); err != nil {
		return nil, err
	}
	for _, e := range in.Entries {
		if err := checkSend(e.MessageBody, e.DelaySeconds); err != nil {
			return nil, err
		}
		if err := checkGroup(*in.QueueUrl, e.MessageBody, e.MessageGroupId); err != nil {
			return nil, err
		}
	}
	out := &sqs.SendMessageBatchOutput{}
	call := q.faults.calls["SendMessageBatch"]
	for _, e := range in.Entries {
		if q.failEntry != nil && q.failEntry(call, *e.MessageBody) {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: strPtr("InternalError"), Message: strPtr("injected entry failure"), SenderFault: false})
			continue
		}
		q.sends = append(q.sends, sentMsg{Queue: *in.QueueUrl, Body: *e.MessageBody, Delay: e.DelaySeconds, At: q.now(), Batch: true, Group: aws.ToString(e.MessageGroupId)})
		q.nextID++
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: strPtr("m-" + strconv.Itoa(q.nextID))})
	}
	if after != nil {
		return nil, after
	}
	return out, nil
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("ReceiveMessage"); err != nil {
		return nil, err
	}
	box, err := q.box(in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if q.receives == nil {
		q.receives = map[string]int{}
	}
	q.receives[*in.QueueUrl]++
	if in.MaxNumberOfMessages < 1 || in.MaxNumberOfMessages > 10 {
		return nil, fmt.Errorf("InvalidParameterValue: MaxNumberOfMessages %d", in.MaxNumberOfMessages)
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	wantSent := slices.Contains(in.MessageSystemAttributeNames, sqstypes.MessageSystemAttributeNameSentTimestamp) ||
		slices.Contains(in.MessageSystemAttributeNames, sqstypes.MessageSystemAttributeNameAll)
	n := int(in.MaxNumberOfMessages)
	if q.perReceive > 0 {
		n = min(n, q.perReceive)
	}
	now := q.now()
	out := &sqs.ReceiveMessageOutput{}
	for _, m := range *box {
		if len(out.Messages) == n {
			break
		}
		if m.VisibleAt.After(now) {
			continue
		}
		q.nextID++
		m.Receipt = "rh-" + strconv.Itoa(q.nextID)
		m.ReceivedAt = now
		m.VisibleAt = now.Add(time.Duration(in.VisibilityTimeout) * time.Second)
		m.Receives++
		msg := sqstypes.Message{MessageId: strPtr(m.ID), Body: strPtr(m.Body), ReceiptHandle: strPtr(m.Receipt),
			Attributes: map[string]string{string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount): strconv.Itoa(m.Receives)}}
		if wantSent {
			msg.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)] = strconv.FormatInt(m.SentAt.UnixMilli(), 10)
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

func byReceipt(box []*dlqMsg, h *string) (int, error) {
	if h == nil {
		return 0, errors.New("MissingParameter: ReceiptHandle")
	}
	for i, m := range box {
		if m.Receipt == *h {
			return i, nil
		}
	}
	return 0, fmt.Errorf("ReceiptHandleIsInvalid: %s", *h)
}

func (q *fakeQueue) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("DeleteMessage"); err != nil {
		return nil, err
	}
	box, err := q.box(in.QueueUrl)
	if err != nil {
		return nil, err
	}
	i, err := byReceipt(*box, in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	q.deleted = append(q.deleted, (*box)[i].ID)
	*box = slices.Delete(*box, i, i+1)
	return &sqs.DeleteMessageOutput{}, nil
}

func (q *fakeQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("ChangeMessageVisibility"); err != nil {
		return nil, err
	}
	if in.QueueUrl == nil || *in.QueueUrl != dlqURL {
		return nil, errors.New("the fake changes visibility in the DLQ only")
	}
	i, err := byReceipt(q.dlq, in.ReceiptHandle)
	if err != nil {
		return nil, err
	}
	if in.VisibilityTimeout < 0 || in.VisibilityTimeout > 43200 {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d", in.VisibilityTimeout)
	}
	if held := q.now().Sub(q.dlq[i].ReceivedAt); held+time.Duration(in.VisibilityTimeout)*time.Second > 12*time.Hour {
		return nil, fmt.Errorf("InvalidParameterValue: VisibilityTimeout %d, received %s ago: hidden past 12 h from the receive", in.VisibilityTimeout, held)
	}
	q.dlq[i].VisibleAt = q.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
	q.visibility = append(q.visibility, visChange{MessageID: q.dlq[i].ID, Timeout: in.VisibilityTimeout})
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func strPtr(s string) *string { return &s }

// GetQueueAttributes answers the DLQ's ApproximateNumberOfMessagesNotVisible
// and ApproximateNumberOfMessages: its messages hidden and visible now
// (exactly; SQS's figures are approximate).
func (q *fakeQueue) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err, _ := q.faults.hit("GetQueueAttributes"); err != nil {
		return nil, err
	}
	if in.QueueUrl == nil || *in.QueueUrl != dlqURL {
		return nil, errors.New("the fake answers the DLQ's attributes only")
	}
	hidden, visible := 0, 0
	for _, m := range q.dlq {
		if m.VisibleAt.After(q.now()) {
			hidden++
		} else {
			visible++
		}
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
		string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible): strconv.Itoa(hidden),
		string(sqstypes.QueueAttributeNameApproximateNumberOfMessages):           strconv.Itoa(visible),
	}}, nil
}
