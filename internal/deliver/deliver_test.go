package deliver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/internal/trace"
	"github.com/stretchr/testify/require"
)

var errBoom = errors.New("boom: service unavailable")

// testStore is the real store on the fake table (storefake) with what
// these tests add:
// a record of every attempt, death and read the handler asked for, and the
// failures they inject.
type testStore struct {
	*storefake.Store
	mu       sync.Mutex
	outcomes map[string][]domain.Outcome
	attempts map[string][]domain.Attempt
	recorded map[string]domain.Delivery // the delivery each RecordAttempt was given
	marked   map[string]string          // MarkDeadBeforeLastAttempt: delivery id -> message
	resets   int                        // RecordEndpointHealth calls that reset
	// healthWrites are the RecordEndpointHealth calls: reset, failures.
	healthWrites []healthWrite
	loads        int // LoadWith calls
	// endpointReads counts the endpoints LoadWith was asked to read the
	// records of, strongEndpointReads those of them strongly consistent.
	endpointReads, strongEndpointReads int
	singles                            int  // Delivery and Endpoint calls
	failRead                           bool // Load and Delivery fail
	failLoad                           bool // Load fails; single reads still work unless failRead
	failDead                           bool // RecordAttempt fails on deaths (the death and its DLQ depth are one transaction), writing nothing
	failFirsts                         bool // RecordFirstAttempts fails, writing nothing
	firstBatches                       int  // RecordFirstAttempts calls
	// lagging are the endpoints an eventually consistent read answers
	// with, as a replica behind the latest writes would.
	lagging map[store.EndpointRef]domain.Endpoint
}

func newFakeStore(eps ...domain.Endpoint) *testStore {
	s := &testStore{Store: storefake.New(), outcomes: map[string][]domain.Outcome{}, attempts: map[string][]domain.Attempt{}, recorded: map[string]domain.Delivery{}, marked: map[string]string{}}
	for _, e := range eps {
		s.setEndpoint(e)
	}
	return s
}

// testPorts is a Store of one value per port, so that a test can put a
// fake in place of one.
type testPorts struct {
	Snapshots
	Attempts
	EndpointHealth
	Counters
	DeadWindows
	Limiter
	Gates
	FailureRates
}

// ports is the handler's Store, every port this store.
func (s *testStore) ports() testPorts {
	return testPorts{Snapshots: s, Attempts: s, EndpointHealth: s, Counters: s, DeadWindows: s, Limiter: s, Gates: s, FailureRates: s}
}

// withPorts puts fakes in place of some of the handler's ports.
func (f *fixture) withPorts(change func(p *testPorts)) {
	p := f.h.Store.(testPorts)
	change(&p)
	f.h.Store = p
}

// endpoint reads an endpoint by "tenant/endpoint" (the zero endpoint if
// there is none).
func (s *testStore) endpoint(key string) domain.Endpoint {
	tenant, id, _ := strings.Cut(key, "/")
	e, _ := s.Store.Endpoint(context.Background(), tenant, id)
	return e
}

func (s *testStore) setEndpoint(e domain.Endpoint) {
	if err := s.PutEndpoint(context.Background(), e); err != nil {
		panic(err)
	}
}

func (s *testStore) deleteEndpoint(key string) {
	tenant, id, _ := strings.Cut(key, "/")
	if err := s.DeleteEndpoint(context.Background(), tenant, id); err != nil {
		panic(err)
	}
}

func (s *testStore) LoadWith(ctx context.Context, opts store.LoadOptions, ids []string, refs []store.EndpointRef) (store.Snapshot, error) {
	s.mu.Lock()
	s.loads++
	if !opts.NoRecords {
		s.endpointReads += len(refs)
		if !opts.Eventual {
			s.strongEndpointReads += len(refs)
		}
	}
	fail := s.failRead || s.failLoad
	lagging := s.lagging
	s.mu.Unlock()
	if fail {
		return store.Snapshot{}, errBoom
	}
	snap, err := s.Store.LoadWith(ctx, opts, ids, refs)
	if err == nil && opts.Eventual {
		for r, e := range lagging {
			if _, ok := snap.Endpoints[r]; ok {
				snap.Endpoints[r] = e // the replica behind
			}
		}
	}
	return snap, err
}

func (s *testStore) Delivery(ctx context.Context, id string) (domain.Delivery, error) {
	s.mu.Lock()
	s.singles++
	fail := s.failRead
	s.mu.Unlock()
	if fail {
		return domain.Delivery{}, errBoom
	}
	return s.Store.Delivery(ctx, id)
}

func (s *testStore) Endpoint(ctx context.Context, tenant, id string) (domain.Endpoint, error) {
	s.mu.Lock()
	s.singles++
	s.mu.Unlock()
	return s.Store.Endpoint(ctx, tenant, id)
}

func (s *testStore) RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error {
	s.mu.Lock()
	s.outcomes[d.DeliveryID] = append(s.outcomes[d.DeliveryID], o)
	s.attempts[d.DeliveryID] = append(s.attempts[d.DeliveryID], a)
	s.recorded[d.DeliveryID] = d
	fail := s.failDead && o.State == domain.StateDead
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("record attempt: %w", errBoom)
	}
	return s.Store.RecordAttempt(ctx, d, a, o)
}

func (s *testStore) RecordFirstAttempts(ctx context.Context, firsts []store.FirstAttempt) ([]int, error) {
	s.mu.Lock()
	s.firstBatches++
	fail := s.failFirsts
	s.mu.Unlock()
	if fail {
		all := make([]int, len(firsts))
		for i := range all {
			all[i] = i
		}
		return all, fmt.Errorf("record first attempts: %w", errBoom)
	}
	left, err := s.Store.RecordFirstAttempts(ctx, firsts)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range firsts {
		if slices.Contains(left, i) {
			continue // recorded on its own (RecordAttempt), counted there
		}
		id := f.Delivery.DeliveryID
		s.outcomes[id] = append(s.outcomes[id], domain.Outcome{State: domain.StateDelivered})
		s.attempts[id] = append(s.attempts[id], f.Attempt)
		s.recorded[id] = f.Delivery
	}
	return left, err
}

func (s *testStore) MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error {
	s.mu.Lock()
	s.marked[d.DeliveryID] = message
	s.mu.Unlock()
	return s.Store.MarkDeadBeforeLastAttempt(ctx, d, reason, message, at)
}

func (s *testStore) isMarked(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.marked[id]
	return ok
}

// failedBefore sets ep_1's consecutive failures in the store, as earlier
// batches left them.
func (f *fixture) failedBefore(n int) {
	e := f.store.endpoint("t1/ep_1")
	e.ConsecutiveFailures = n
	f.store.setEndpoint(e)
}

// healthWrite is a RecordEndpointHealth call's reset and count.
type healthWrite struct {
	reset bool
	n     int
}

func (s *testStore) RecordEndpointHealth(ctx context.Context, tenant, id string, reset bool, n int, th store.HealthThresholds) (store.HealthEffect, error) {
	s.mu.Lock()
	if reset {
		s.resets++
	}
	s.healthWrites = append(s.healthWrites, healthWrite{reset, n})
	s.mu.Unlock()
	return s.Store.RecordEndpointHealth(ctx, tenant, id, reset, n, th)
}

func (s *testStore) healthCalls() []healthWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.healthWrites)
}

// queueVisibility is the delivery queue's visibility timeout in these
// tests, as the stack sets it: six times the deliver function's 60 s.
const queueVisibility = 6 * time.Minute

// lastInFlight is the longest after its receive a message is still in
// flight, for a ChangeMessageVisibility to find: at the queue's visibility
// timeout it is visible again.
const lastInFlight = queueVisibility - time.Nanosecond

// The queues the handlers of these tests send to: the delivery queue, its
// DLQ, and the replay worker's operations queue.
const (
	queueURL = "https://sqs.example/q"
	dlqURL   = "https://sqs.example/dlq"
	opsURL   = "https://sqs.example/ops"
	// laneURL is the tenant lane, which a message's event source names by
	// ARN (laneARN).
	laneURL = "https://sqs.example/123456789012/hookline-lane"
	laneARN = "arn:aws:sqs:us-east-1:123456789012:hookline-lane"
)

// sourceURL is the queue a test message was received from: the lane's
// when its EventSourceARN is laneARN, else the delivery queue's.
func sourceURL(m events.SQSMessage) string {
	if m.EventSourceARN == laneARN {
		return laneURL
	}
	return queueURL
}

// fakeQueue is the delivery queue, its DLQ and the operations queue: the
// shared fake SQS (sqsfake), which holds the handler to the limits SQS
// enforces and the local cloud does not (DelaySeconds, the visibility of a
// message in flight and 12 h from its receive, the batch rules, the
// in-flight quota) and, as deliver's CheckSend, to the fair queues' rule
// (message.CheckGroupID: every delivery message in its tenant's group);
// with what these tests add. They play the poller (receive, done) with
// messages they make themselves, named by receipt handles of their own,
// which the fake translates; they read what the handler sent to each
// queue, and the visibility it set on each message; and they make SQS fail
// (failDLQ, failRequeue).
//
// Every refusal is kept; a fixture fails its test if there was one it did
// not expect.
type fakeQueue struct {
	sqs *sqsfake.Queue
	cfg sqsfake.Config
	mu  sync.Mutex
	// handles maps the tests' receipt handles to the fake's.
	handles map[string]string
	// visibility is the visibility last set on each message, by the
	// tests' receipt handle.
	visibility map[string]int32
	dlq        []string
	dlqReason  []domain.DeadReason
	dlqTrace   []string // each DLQ message's traceparent attribute
	failDLQ    bool     // every send fails
	// ops are the messages sent to the operations queue, with their
	// delays.
	ops      []string
	opsDelay []int32
	// requeued are the messages sent back to the delivery queue to wait,
	// with their delays.
	requeued     []string
	requeueDelay []int32
	requeueGroup []string
	failRequeue  bool // sends to the delivery queue fail
	// laned are the messages sent to the tenant lane, with their delays.
	laned      []string
	lanedDelay []int32
}

func newFakeQueue(now func() time.Time, visibilityTimeout time.Duration) *fakeQueue {
	q := &fakeQueue{handles: map[string]string{}, visibility: map[string]int32{}}
	q.cfg = sqsfake.Config{Now: now, VisibilityTimeout: visibilityTimeout, CheckSend: checkGroup}
	q.sqs = sqsfake.New(q.cfg)
	return q
}

// checkGroup is deliver's rule of the fair queues: every delivery message
// is in its tenant's group (one that is not a delivery message,
// dead-lettered as malformed, names no tenant: it may have none). The
// operations queue is not a fair queue.
func checkGroup(url, _ string, in *sqs.SendMessageInput) error {
	body := aws.ToString(in.MessageBody)
	if _, err := message.Decode(body); url == opsURL || err != nil && in.MessageGroupId == nil {
		return nil
	}
	return message.CheckGroupID(body, in.MessageGroupId)
}

// withInFlightLimit makes the queue an empty one whose in-flight quota is
// n, for a test to start with.
func (q *fakeQueue) withInFlightLimit(n int) {
	q.cfg.InFlightLimit = n
	q.sqs = sqsfake.New(q.cfg)
}

// receive records that the messages were received (handed to the poller
// that invokes the handler) at at, as sqsfake.Queue.ReceiveAt does: one
// past the in-flight quota is not received (SQS receives nothing then, and
// says nothing), the refusal kept.
func (q *fakeQueue) receive(at time.Time, msgs ...events.SQSMessage) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		if h, ok := q.sqs.ReceiveAt(sourceURL(m), m.Body, at); ok {
			q.handles[m.ReceiptHandle] = h
			delete(q.visibility, m.ReceiptHandle)
		}
	}
}

// received reports whether the message with the test's receipt handle was
// received (receive took it: under the in-flight quota).
func (q *fakeQueue) received(handle string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.handles[handle]
	return ok
}

// done records the poller's end of a batch: every message not reported as
// a failure is deleted.
func (q *fakeQueue) done(msgs []events.SQSMessage, failed []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		if h, ok := q.handles[m.ReceiptHandle]; ok && !slices.Contains(failed, m.MessageId) {
			_, _ = q.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(sourceURL(m)), ReceiptHandle: &h})
		}
	}
}

// inFlight is how many received messages are in flight now: received, not
// deleted, and hidden.
func (q *fakeQueue) inFlight() int {
	return q.sqs.InFlight(queueURL)
}

// refusals returns the errors of the requests refused so far.
func (q *fakeQueue) refusals() []string {
	return q.sqs.Refusals()
}

// visibilityOf returns the visibility last set on a receipt handle.
func (q *fakeQueue) visibilityOf(handle string) (int32, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.visibility[handle]
	return v, ok
}

func (q *fakeQueue) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	handle := aws.ToString(in.ReceiptHandle)
	theirs := *in
	if h, ok := q.handles[handle]; ok {
		theirs.ReceiptHandle = &h
	}
	out, err := q.sqs.ChangeMessageVisibility(ctx, &theirs)
	if err == nil {
		q.visibility[handle] = in.VisibilityTimeout
	}
	return out, err
}

// failing says whether a send to url fails, by the test's wish.
func (q *fakeQueue) failing(url string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failDLQ || url == queueURL && q.failRequeue
}

func (q *fakeQueue) SendMessage(ctx context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	url := aws.ToString(in.QueueUrl)
	if url != queueURL && url != dlqURL && url != opsURL && url != laneURL {
		return nil, errors.New("sent to the wrong queue: " + url)
	}
	if q.failing(url) {
		return nil, errBoom
	}
	out, err := q.sqs.SendMessage(ctx, in)
	if err == nil {
		q.sent(url, in)
	}
	return out, err
}

// SendMessageBatch sends the entries after SQS's batch rules (at most ten,
// distinct ids, 256 KiB), answering each refused entry as failed, as SQS
// does.
func (q *fakeQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	url := aws.ToString(in.QueueUrl)
	if url != queueURL && url != dlqURL && url != opsURL && url != laneURL {
		return nil, errors.New("sent to the wrong queue: " + url)
	}
	if q.failing(url) {
		out := &sqs.SendMessageBatchOutput{}
		for _, e := range in.Entries {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), Message: aws.String(errBoom.Error())})
		}
		return out, nil
	}
	out, err := q.sqs.SendMessageBatch(ctx, in)
	if err != nil {
		return out, err
	}
	for _, ok := range out.Successful {
		for _, e := range in.Entries {
			if aws.ToString(e.Id) == aws.ToString(ok.Id) {
				q.sent(url, &sqs.SendMessageInput{MessageBody: e.MessageBody, DelaySeconds: e.DelaySeconds, MessageAttributes: e.MessageAttributes, MessageGroupId: e.MessageGroupId})
			}
		}
	}
	return out, nil
}

// sent keeps what the fake SQS accepted, by queue.
func (q *fakeQueue) sent(url string, in *sqs.SendMessageInput) {
	q.mu.Lock()
	defer q.mu.Unlock()
	body := aws.ToString(in.MessageBody)
	switch url {
	case opsURL:
		q.ops, q.opsDelay = append(q.ops, body), append(q.opsDelay, in.DelaySeconds)
	case laneURL:
		q.laned, q.lanedDelay = append(q.laned, body), append(q.lanedDelay, in.DelaySeconds)
	case queueURL:
		q.requeued, q.requeueDelay = append(q.requeued, body), append(q.requeueDelay, in.DelaySeconds)
		q.requeueGroup = append(q.requeueGroup, aws.ToString(in.MessageGroupId))
	default:
		q.dlq = append(q.dlq, body)
		q.dlqReason = append(q.dlqReason, domain.DeadReason(aws.ToString(in.MessageAttributes["dead_reason"].StringValue)))
		q.dlqTrace = append(q.dlqTrace, aws.ToString(in.MessageAttributes[message.TraceAttribute].StringValue))
	}
}

// fixture is a handler wired to fakes and a real loopback receiver.
type fixture struct {
	h     *Handler
	store *testStore
	queue *fakeQueue
	kms   *sealingtest.KMS
	// secret is the plaintext of t1/ep_1's signing secret, stored sealed.
	secret string
	hits   atomic.Int32
	now    time.Time
	// held is how long before now the messages run were received. Default
	// lastInFlight, the latest a ChangeMessageVisibility can still find a
	// message in flight: the hardest case for SQS's 12 h rule.
	held time.Duration
	// refusalsExpected turns off the check, at the end of the test, that
	// the fake SQS refused nothing.
	refusalsExpected bool
}

// seal seals secret for an endpoint, as the api function does.
func (f *fixture) seal(t *testing.T, tenantID, endpointID, secret string) string {
	t.Helper()
	sealed, err := (&sealing.Sealer{KMS: f.kms, KeyID: sealingtest.KeyARN}).Seal(context.Background(), sealing.Ref{TenantID: tenantID, EndpointID: endpointID}, secret)
	require.NoError(t, err)
	return sealed
}

func newFixture(t *testing.T, answer http.HandlerFunc) *fixture {
	t.Helper()
	f := &fixture{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), held: lastInFlight}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	secret, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	f.kms, f.secret = sealingtest.New(), secret
	f.store = newFakeStore(domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: srv.URL, SealedSecrets: []string{f.seal(t, "t1", "ep_1", secret)}})
	f.store.Now = func() time.Time { return f.now } // the store's clock is the handler's
	f.queue = newFakeQueue(func() time.Time { return f.now }, queueVisibility)
	t.Cleanup(func() {
		if r := f.queue.refusals(); len(r) > 0 && !f.refusalsExpected {
			t.Errorf("SQS would have refused %d request(s): %v", len(r), r)
		}
	})
	guard := &netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	f.h = &Handler{
		Store:   f.store.ports(),
		Queue:   f.queue,
		Sender:  &sender.Client{HTTP: sender.NewHTTPClient(sender.ClientOptions{Guard: guard, RequestTimeout: 2 * time.Second})},
		Secrets: &sealing.Opener{KMS: f.kms, KeyID: sealingtest.KeyARN},
		Config: Config{
			QueueURL: "https://sqs.example/q",
			DLQURL:   "https://sqs.example/dlq",
			Policy:   retry.Policy{Schedule: []time.Duration{0, 10 * time.Second, 60 * time.Second}, Mode: retry.JitterNone, VisibilityTimeout: queueVisibility},
			Now:      func() time.Time { return f.now },
		},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	return f
}

func sqsMessage(t *testing.T, id string, receiveCount string, occurred time.Time) events.SQSMessage {
	t.Helper()
	body, err := json.Marshal(message.Message{
		DeliveryID: id, TenantID: "t1", EndpointID: "ep_1", EventID: "evt_" + id, EventType: "order.created",
		OccurredAt: occurred, Payload: json.RawMessage(`{"n":1}`),
	})
	require.NoError(t, err)
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": receiveCount}}
}

// run hands the messages, received held ago, to the handler and returns the
// ids it reports as batch item failures.
func (f *fixture) run(t *testing.T, msgs ...events.SQSMessage) []string {
	t.Helper()
	return f.runCtx(context.Background(), t, msgs...)
}

func (f *fixture) runCtx(ctx context.Context, t *testing.T, msgs ...events.SQSMessage) []string {
	t.Helper()
	f.queue.receive(f.now.Add(-f.held), msgs...)
	resp, err := f.h.Handle(ctx, events.SQSEvent{Records: msgs})
	require.NoError(t, err)
	require.NotNil(t, resp.BatchItemFailures)
	var failed []string
	for _, fi := range resp.BatchItemFailures {
		failed = append(failed, fi.ItemIdentifier)
	}
	f.queue.done(msgs, failed)
	return failed
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	type want struct {
		failed     bool  // reported as a batch item failure (comes back)
		visibility int32 // visibility set, -1 for none
		state      domain.DeliveryState
		reason     domain.DeadReason
		dlq        bool // explicit DLQ send
		hits       int32
		disabled   bool
		hop        int32 // the delay of the message sent again, -1 for none
	}
	cases := []struct {
		name    string
		status  int
		header  map[string]string
		attempt string
		want    want
	}{
		{"2xx delivered", 200, nil, "1", want{false, -1, domain.StateDelivered, "", false, 1, false, -1}},
		// A wait longer than HopAfter (2 s) does not wait in flight: the
		// message is sent again, delayed, this one deleted.
		{"500 on the first attempt retries after the second step", 500, nil, "1", want{false, -1, domain.StatePending, "", false, 1, false, 10}},
		{"500 on the second attempt retries after the third step", 503, nil, "2", want{false, -1, domain.StatePending, "", false, 1, false, 60}},
		{"500 on the last attempt is dead-lettered", 500, nil, "3", want{false, -1, domain.StateDead, domain.ReasonAttemptsExhausted, true, 1, false, -1}},
		{"429 with Retry-After waits as asked", 429, map[string]string{"Retry-After": "120"}, "1", want{false, -1, domain.StatePending, "", false, 1, false, 120}},
		{"429 with a 10 min Retry-After waits out of flight", 429, map[string]string{"Retry-After": "600"}, "1", want{false, -1, domain.StatePending, "", false, 1, false, 600}},
		// Past 15 minutes it hops (TestLongBackoffWaitsOutOfFlight).
		{"429 with a 13 h Retry-After waits out of flight", 429, map[string]string{"Retry-After": "46800"}, "1", want{false, -1, domain.StatePending, "", false, 1, false, 900}},
		{"503 with a 12 h Retry-After waits out of flight", 503, map[string]string{"Retry-After": "43200"}, "2", want{false, -1, domain.StatePending, "", false, 1, false, 900}},
		{"408 retries", 408, nil, "1", want{false, -1, domain.StatePending, "", false, 1, false, 10}},
		{"400 is dead at once", 400, nil, "1", want{false, -1, domain.StateDead, "rejected_400", true, 1, false, -1}},
		{"302 is dead at once", 302, map[string]string{"Location": "https://example.com"}, "1", want{false, -1, domain.StateDead, "redirect_302_not_followed", true, 1, false, -1}},
		{"410 disables the endpoint", 410, nil, "1", want{false, -1, domain.StateDead, "endpoint_gone", true, 1, true, -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
			})
			m := sqsMessage(t, "d1", tc.attempt, f.now.Add(-time.Minute))
			failed := f.run(t, m)
			require.Equal(t, tc.want.failed, len(failed) == 1, "failed: %v", failed)
			v, set := f.queue.visibility[m.ReceiptHandle]
			if tc.want.visibility < 0 {
				require.False(t, set, "visibility must not change")
			} else {
				require.True(t, set)
				require.Equal(t, tc.want.visibility, v)
			}
			next, d, hopped := f.queue.requeuedFor(t, "d1")
			require.Equal(t, tc.want.hop >= 0, hopped)
			if hopped {
				require.Equal(t, tc.want.hop, d)
				require.Equal(t, tc.attempt, strconv.Itoa(next.Attempts), "the attempts made travel")
				require.NotNil(t, next.NotBefore, "with its due time")
				require.Equal(t, "t1#wait", f.queue.requeueGroup[len(f.queue.requeueGroup)-1], "in its tenant's wait group")
			}
			outs := f.store.outcomes["d1"]
			require.Len(t, outs, 1)
			require.Equal(t, tc.want.state, outs[0].State)
			require.Equal(t, tc.want.reason, outs[0].DeadReason)
			a := f.store.attempts["d1"][0]
			require.Equal(t, tc.status, a.Status)
			require.Equal(t, tc.attempt, strconv.Itoa(a.Number))
			require.Equal(t, tc.want.dlq, len(f.queue.dlq) == 1)
			if tc.want.dlq {
				require.Equal(t, m.Body, f.queue.dlq[0], "the DLQ keeps the message unchanged")
				require.Equal(t, tc.want.reason, f.queue.dlqReason[0])
			}
			require.Equal(t, tc.want.hits, f.hits.Load())
			disabled := f.store.endpoint("t1/ep_1").Disabled
			require.Equal(t, tc.want.disabled, disabled)
		})
	}
}

// enqueue writes no delivery record, so a delivery's first message finds
// none: it is attempted, and the attempt is recorded with every id the
// message carries, from which the store writes the whole record.
func TestMessageBeforeItsRecordIsDeliveredAndRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	require.Empty(t, f.store.Deliveries())
	failed := f.run(t, sqsMessage(t, "d_new", "1", f.now.Add(-time.Second)))
	require.Empty(t, failed)
	require.Equal(t, int32(1), f.hits.Load())
	require.Equal(t, []domain.Outcome{{State: domain.StateDelivered}}, f.store.outcomes["d_new"])
	require.Equal(t, domain.Delivery{DeliveryID: "d_new", TenantID: "t1", EndpointID: "ep_1", EventID: "evt_d_new", EventType: "order.created"},
		f.store.recorded["d_new"])
}

// hitched, as TestNotAttempted's reason, is a message sent again to wait
// out a hitch of hookline's own.
const hitched domain.DeadReason = "(hitched)"

func TestNotAttempted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(t *testing.T, f *fixture, m *events.SQSMessage)
		failed bool
		reason domain.DeadReason // dead reason, "" when not dead
	}{
		{"already delivered is dropped", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.store.PutDelivery(domain.Delivery{DeliveryID: "d1", State: domain.StateDelivered})
		}, false, ""},
		{"disabled endpoint goes dead", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			e := f.store.endpoint("t1/ep_1")
			e.Disabled = true
			f.store.setEndpoint(e)
		}, false, domain.ReasonEndpointDisabled},
		{"missing endpoint goes dead", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.store.deleteEndpoint("t1/ep_1")
		}, false, domain.ReasonEndpointNotFound},
		{"unusable secret goes dead", func(t *testing.T, f *fixture, _ *events.SQSMessage) {
			e := f.store.endpoint("t1/ep_1")
			e.SealedSecrets = []string{f.seal(t, "t1", "ep_1", "not-a-secret")}
			f.store.setEndpoint(e)
		}, false, domain.ReasonInvalidSecret},
		{"unusable plaintext secret goes dead", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			e := f.store.endpoint("t1/ep_1")
			e.SealedSecrets, e.Secrets = nil, []string{"not-a-secret"}
			f.store.setEndpoint(e)
		}, false, domain.ReasonInvalidSecret},
		{"a ciphertext sealed for another endpoint goes dead", func(t *testing.T, f *fixture, _ *events.SQSMessage) {
			e := f.store.endpoint("t1/ep_1")
			e.SealedSecrets = []string{f.seal(t, "t1", "ep_2", f.secret)}
			f.store.setEndpoint(e)
		}, false, domain.ReasonInvalidSecret},
		{"a ciphertext that is not base64 goes dead", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			e := f.store.endpoint("t1/ep_1")
			e.SealedSecrets = []string{f.secret}
			f.store.setEndpoint(e)
		}, false, domain.ReasonInvalidSecret},
		{"KMS unavailable: sent again to wait, no attempt spent", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.kms.Fail = errors.New("KMSInternalException: try again")
		}, false, hitched},
		{"a sealed secret and nothing to open it: sent again to wait", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.h.Secrets = nil
		}, false, hitched},
		{"event past the age cap goes dead", func(t *testing.T, f *fixture, m *events.SQSMessage) {
			*m = sqsMessage(t, "d1", "1", f.now.Add(-25*time.Hour))
		}, false, domain.ReasonMaxAgeExceeded},
		{"malformed message goes to the DLQ", func(_ *testing.T, _ *fixture, m *events.SQSMessage) {
			m.Body = `{"delivery_id":`
		}, false, domain.ReasonMalformedMessage},
		{"unreadable state: sent again to wait, no attempt spent", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.store.failRead = true
		}, false, hitched},
		{"unreadable state and SQS failing: left to come back", func(_ *testing.T, f *fixture, _ *events.SQSMessage) {
			f.store.failRead, f.queue.failRequeue = true, true
		}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
			m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
			tc.setup(t, f, &m)
			failed := f.run(t, m)
			require.Equal(t, tc.failed, len(failed) == 1)
			require.Zero(t, f.hits.Load(), "no request is sent")
			if tc.reason == hitched {
				require.Empty(t, f.queue.dlq)
				require.Len(t, f.queue.requeued, 1, "sent again")
				again, err := message.Decode(f.queue.requeued[0])
				require.NoError(t, err)
				require.Equal(t, 1, again.Hitches)
				require.Zero(t, again.Attempts, "the receive was no attempt")
				require.Equal(t, int32(5), f.queue.requeueDelay[0], "the first hitch waits 5 s")
				return
			}
			if tc.reason == "" {
				require.Empty(t, f.queue.dlq)
				return
			}
			require.Len(t, f.queue.dlq, 1)
			require.Equal(t, tc.reason, f.queue.dlqReason[0])
			if tc.reason != domain.ReasonMalformedMessage {
				require.Equal(t, tc.reason, f.store.outcomes["d1"][0].DeadReason)
			}
		})
	}
}

func TestDLQUnavailableKeepsTheMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) })
	f.queue.failDLQ = true
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	require.Equal(t, []string{m.MessageId}, f.run(t, m), "a dead message the DLQ cannot take stays on the queue")
}

func TestBatchThroughLambdaDecoding(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")] = r.Header.Get("X-Attempt")
		mu.Unlock()
		w.WriteHeader(204)
	})
	f.now = time.Date(2026, 11, 30, 1, 5, 0, 0, time.UTC)
	f.store.setEndpoint(domain.Endpoint{TenantID: "tenant_sample", EndpointID: "ep_1", URL: f.store.endpoint("t1/ep_1").URL,
		SealedSecrets: []string{f.seal(t, "tenant_sample", "ep_1", f.secret)}})
	raw, err := os.ReadFile("../../events/sqs-delivery.json")
	require.NoError(t, err)
	out, err := lambda.NewHandler(f.h.Handle).Invoke(context.Background(), raw)
	require.NoError(t, err)
	require.JSONEq(t, `{"batchItemFailures":[]}`, string(out), "an all-success batch answers an empty, non-null list")
	require.Equal(t, map[string]string{"msg_sample1": "1", "msg_sample2": "3"}, seen)
}

func TestBatchIsSentConcurrently(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var inFlight, peak atomic.Int32
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		w.WriteHeader(200)
	})
	f.h.Config.Concurrency = 4
	var msgs []events.SQSMessage
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		msgs = append(msgs, sqsMessage(t, id, "1", f.now))
	}
	done := make(chan []string)
	go func() { done <- f.run(t, msgs...) }()
	require.Eventually(t, func() bool { return inFlight.Load() == 4 }, 5*time.Second, 5*time.Millisecond)
	close(release)
	require.Empty(t, <-done)
	require.EqualValues(t, 4, peak.Load(), "at most Concurrency attempts in flight, and that many")
}

func TestEndpointHealth(t *testing.T) {
	t.Parallel()
	t.Run("failures are counted and the endpoint disabled at the threshold", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
		f.h.Config.DisableAfter, f.h.Config.DisableAfterFor = 3, time.Hour
		for i := 0; i < 3; i++ {
			f.run(t, sqsMessage(t, "d"+strconv.Itoa(i), "1", f.now))
			f.now = f.now.Add(31 * time.Minute)
		}
		require.Equal(t, 3, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
		require.Equal(t, domain.DisabledConsecutiveFailures, f.store.endpoint("t1/ep_1").DisabledReason)
	})
	t.Run("a run of failures shorter than DisableAfterFor does not disable", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
		f.h.Config.DisableAfter = 3 // DisableAfterFor: the default, 5 days
		for i := 0; i < 20; i++ {
			f.run(t, sqsMessage(t, "d"+strconv.Itoa(i), "1", f.now))
			f.now = f.now.Add(time.Hour)
		}
		ep := f.store.endpoint("t1/ep_1")
		require.Equal(t, 20, ep.ConsecutiveFailures)
		require.False(t, ep.Disabled, "20 failures in 20 hours is an outage, not a broken receiver")
	})
	t.Run("a success resets a non-zero count, and only then", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		f.run(t, sqsMessage(t, "d1", "1", f.now))
		require.Zero(t, f.store.resets, "no write when the count is already zero")
		e := f.store.endpoint("t1/ep_1")
		e.ConsecutiveFailures = 7
		f.store.setEndpoint(e)
		f.now = f.now.Add(domain.DefaultEndpointCacheTTL) // the instance's copy of the endpoint has run out
		f.run(t, sqsMessage(t, "d2", "1", f.now))
		require.Equal(t, 1, f.store.resets)
	})
	t.Run("a batch's successes to a failing endpoint reset it once", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		f.failedBefore(7)
		require.Empty(t, f.run(t, batchOf(t, f, "d", 10)...))
		require.Equal(t, 1, f.store.resets, "one write for the batch, not one per success")
		require.Zero(t, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	})
	t.Run("a batch's failures to an endpoint are counted in one write", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
		f.run(t, batchOf(t, f, "d", 10)...)
		require.Equal(t, []healthWrite{{n: 10}}, f.store.healthCalls(), "one write of ten, where each failure wrote its own")
		require.Equal(t, 10, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	})
	t.Run("a batch's successes and failures to a failing endpoint are one write", func(t *testing.T) {
		// Five requests succeed, five fail, in whatever order the batch's
		// concurrent attempts end: the count is reset and the failures
		// after the last success counted, in one write, and the instance's
		// copy is the write's result (no read again).
		var n atomic.Int32
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
			if n.Add(1) <= 5 {
				w.WriteHeader(200)
				return
			}
			w.WriteHeader(503)
		})
		f.failedBefore(7)
		f.run(t, batchOf(t, f, "d", 10)...)
		calls := f.store.healthCalls()
		require.Len(t, calls, 1, "one write for the endpoint, where a reset and a count were two")
		require.True(t, calls[0].reset)
		require.LessOrEqual(t, calls[0].n, 5, "at most the batch's failures")
		require.Equal(t, calls[0].n, f.store.endpoint("t1/ep_1").ConsecutiveFailures, "the failures after the last success")
		loads := f.store.endpointReads
		f.run(t, sqsMessage(t, "d_next", "1", f.now))
		require.Equal(t, loads, f.store.endpointReads, "the copy was patched with the write's result: not read again")
	})
	t.Run("a permanent rejection counts as a failure", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(422) })
		f.run(t, sqsMessage(t, "d1", "1", f.now))
		require.Equal(t, 1, f.store.endpoint("t1/ep_1").ConsecutiveFailures)
	})
}

func TestDeadlineIsRespected(t *testing.T) {
	t.Parallel()
	t.Run("too little time left: returned untried", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		m := sqsMessage(t, "d1", "1", f.now)
		require.Len(t, f.runCtx(ctx, t, m), 1, "the message comes back")
		require.Zero(t, f.hits.Load(), "not attempted")
		require.Equal(t, int32(0), f.queue.visibility[m.ReceiptHandle], "visible again at once")
		require.False(t, f.store.isMarked("d1"), "an earlier receive comes back: nothing recorded")
	})
	t.Run("too little time left on the last receive: the death is recorded first", func(t *testing.T) {
		// Returned untried, the message's next receive is past the queue's
		// maxReceiveCount: SQS moves it to the DLQ unseen.
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		m := sqsMessage(t, "d1", "3", f.now)
		require.Len(t, f.runCtx(ctx, t, m), 1)
		require.Zero(t, f.hits.Load(), "not attempted")
		require.True(t, f.store.isMarked("d1"), "recorded dead, with its message, before it went back")
	})
	t.Run("a slow receiver is cut at the deadline and retried", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			w.WriteHeader(200)
		})
		f.h.Config.Reserve = 500 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 1600*time.Millisecond)
		defer cancel()
		m := sqsMessage(t, "d1", "1", f.now)
		require.Empty(t, f.runCtx(ctx, t, m))
		require.Equal(t, "timeout", f.store.attempts["d1"][0].Error)
		_, d, ok := f.queue.requeuedFor(t, "d1")
		require.True(t, ok, "sent again before the deadline")
		require.Equal(t, int32(10), d, "retried on the schedule")
		_, ok = ctx.Deadline()
		require.True(t, ok)
		require.NoError(t, ctx.Err(), "the outcome was recorded before the invocation's deadline")
	})
}

// Each outcome prints its EMF metrics, dead letters with tenant and reason.
func TestMetricsPerOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   []string
	}{
		{200, []string{"AttemptLatency", "Delivered"}},
		{500, []string{"AttemptLatency", "AttemptFailed", "RetryScheduled"}},
		{400, []string{"AttemptLatency", "AttemptFailed", "DeadLettered tenant=t1 reason=rejected_400"}},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) })
			var buf bytes.Buffer
			f.h.Metrics = metrics.New(&buf)
			f.run(t, sqsMessage(t, "d1", "1", f.now))
			require.ElementsMatch(t, tc.want, emfMetrics(t, buf.String()))
		})
	}
}

// emfMetrics lists the metrics of EMF lines, a name (with its tenant and
// reason, if any) per value.
func emfMetrics(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		for _, dir := range m["_aws"].(map[string]any)["CloudWatchMetrics"].([]any) {
			dir := dir.(map[string]any)
			require.Equal(t, metrics.Namespace, dir["Namespace"])
			for _, def := range dir["Metrics"].([]any) {
				name := def.(map[string]any)["Name"].(string)
				n := 1
				if vs, ok := m[name].([]any); ok {
					n = len(vs)
				}
				if tenant, ok := m[metrics.DimensionTenant]; ok {
					name += fmt.Sprintf(" tenant=%s reason=%s", tenant, m[metrics.DimensionReason])
				}
				for range n {
					got = append(got, name)
				}
			}
		}
	}
	return got
}

// A batch's metrics go out as one EMF document per combination of
// dimension values, each metric's values as an array: the same values as a
// line per message and metric, in far fewer bytes.
func TestMetricsAreOneDocumentPerBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("X-Event-Id"), "bad") {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(200)
	})
	var buf bytes.Buffer
	f.h.Metrics = metrics.New(&buf)
	var msgs []events.SQSMessage
	for i := range 9 {
		msgs = append(msgs, sqsMessage(t, fmt.Sprintf("d%d", i), "1", f.now))
	}
	msgs = append(msgs, sqsMessage(t, "bad", "1", f.now))
	f.run(t, msgs...)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, "the stack-wide metrics, and the tenant's dead letter")
	got := emfMetrics(t, buf.String())
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	require.Equal(t, map[string]int{
		"AttemptLatency": 10, "Delivered": 9, "AttemptFailed": 1,
		"DeadLettered tenant=t1 reason=rejected_400": 1,
	}, count)
}

// A death is recorded with its tenant's DLQ depth in one transaction: when
// that write fails, neither happened, and the message comes back to be
// tried again rather than parked in the DLQ unrecorded and uncounted.
func TestADeathThatCannotBeRecordedIsNotParked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) })
	f.store.failDead = true
	m := sqsMessage(t, "d1", "1", f.now)
	require.Equal(t, []string{m.MessageId}, f.run(t, m), "the message comes back")
	require.Empty(t, f.queue.dlq, "nothing parked that the record does not list")
}

// Every delivery log line carries the ids, and none carries a secret or the
// payload.
func TestLogLinesCarryIDsNeverSecrets(t *testing.T) {
	t.Parallel()
	for _, status := range []int{200, 500, 400} {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
		var buf bytes.Buffer
		f.h.Log = slog.New(slog.NewJSONHandler(&buf, nil))
		f.h.Tracer = &trace.Tracer{Service: "deliver", Out: &buf}
		m := sqsMessage(t, "d1", "1", f.now)
		f.run(t, m)
		secret, sealed := f.secret, f.store.endpoint("t1/ep_1").SealedSecrets[0]
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.NotEmpty(t, lines)
		for _, line := range lines {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &rec))
			ids := []string{"tenant_id", "event_id", "delivery_id", "endpoint_id", "attempt"}
			if rows := trace.ParseLine([]byte(line)); rec["msg"] == "spans" {
				// A delivered attempt's row: the event is its trace's.
				require.Len(t, rows, 1, line)
				rec, ids = rows[0].Attributes, []string{"tenant_id", "delivery_id", "endpoint_id", "attempt"}
			}
			for _, k := range ids {
				require.Contains(t, rec, k, "status %d: %s", status, line)
			}
			require.NotContains(t, line, secret)
			require.NotContains(t, line, strings.TrimPrefix(secret, "whsec_"))
			require.NotContains(t, line, sealed, "nor its ciphertext")
			require.NotContains(t, line, `"n":1`, "no payload in the logs")
		}
	}
}

func TestBatchRecordsAreReadAtOnce(t *testing.T) {
	t.Parallel()
	t.Run("one read for the batch, none per message", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		f.store.PutDelivery(domain.Delivery{DeliveryID: "b", TenantID: "t1", EndpointID: "ep_1", State: domain.StateDelivered})
		msgs := []events.SQSMessage{sqsMessage(t, "a", "1", f.now), sqsMessage(t, "b", "1", f.now), sqsMessage(t, "c", "2", f.now)}
		require.Empty(t, f.run(t, msgs...))
		require.Equal(t, 2, f.store.loads, "the deliveries and gate strongly, the endpoint (not cached yet) eventually")
		require.Equal(t, 0, f.store.singles)
		require.EqualValues(t, 2, f.hits.Load(), "b was already delivered (seen in the batch read): not sent again")
		require.Len(t, f.store.outcomes["a"], 1)
		require.Len(t, f.store.outcomes["c"], 1)
	})
	t.Run("an endpoint missing from the batch read is not found", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		f.store.deleteEndpoint("t1/ep_1")
		require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now)))
		require.Equal(t, []domain.DeadReason{domain.ReasonEndpointNotFound}, f.queue.dlqReason)
		require.Equal(t, 0, f.store.singles)
	})
	t.Run("a failed batch read falls back to reading each message's records", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		f.store.failLoad = true
		require.Empty(t, f.run(t, sqsMessage(t, "a", "1", f.now), sqsMessage(t, "b", "1", f.now)))
		require.Equal(t, 4, f.store.singles, "a delivery and an endpoint read per message")
		require.EqualValues(t, 2, f.hits.Load())
	})
	t.Run("a batch of malformed messages reads nothing", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		require.Empty(t, f.run(t, events.SQSMessage{MessageId: "m", ReceiptHandle: "rh", Body: "{not json"}))
		require.Equal(t, 0, f.store.loads+f.store.singles)
		require.Equal(t, []domain.DeadReason{domain.ReasonMalformedMessage}, f.queue.dlqReason)
	})
}

// On the last receive the death is recorded before the POST, so a process
// that stops during the attempt leaves a record that says dead (with the
// message, for replay) instead of pending while SQS moves the message to the
// DLQ; the outcome then replaces it.
func TestLastAttemptRecordsTheDeathFirst(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		status  int
		attempt string
		marked  bool
		final   domain.DeliveryState
	}{
		{"last attempt fails: dead, as recorded in advance", 500, "3", true, domain.StateDead},
		{"last attempt succeeds: delivered replaces the advance death", 200, "3", true, domain.StateDelivered},
		{"a receive past the last (no redrive policy) is treated alike", 500, "4", true, domain.StateDead},
		{"an earlier attempt records nothing in advance", 500, "2", false, domain.StatePending},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var markedAtPOST atomic.Bool
			var f *fixture
			f = newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
				markedAtPOST.Store(f.store.isMarked("d1"))
				w.WriteHeader(tc.status)
			})
			m := sqsMessage(t, "d1", tc.attempt, f.now.Add(-time.Minute))
			f.run(t, m)
			require.Equal(t, tc.marked, markedAtPOST.Load(), "recorded before the POST")
			if tc.marked {
				require.Equal(t, m.Body, f.store.marked["d1"], "with its message, for replay")
			}
			out := f.store.outcomes["d1"]
			require.Equal(t, tc.final, out[len(out)-1].State, "the attempt's own outcome comes last")
		})
	}
	t.Run("a process that stops after the last POST leaves the death recorded", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) })
		var markedAtFault bool
		f.h.Sender = &fault.CrashAfterSend{Next: f.h.Sender, Rate: 1, Exit: func(int) {
			markedAtFault = f.store.isMarked("d1")
		}}
		f.run(t, sqsMessage(t, "d1", "3", f.now.Add(-time.Minute)))
		require.True(t, markedAtFault, "the fault point (where the soak's process exits) comes after the advance record")
	})
}

// A replayed message's age counts from its replay: an event older than the
// retry policy's maximum age, replayed, is attempted (and retried on the
// schedule), where the same message not replayed goes dead untried.
// A resend of a delivered delivery is attempted with the same webhook-id,
// its attempts logged as the resend's; the delivery stays delivered, and a
// resend that fails for good is dropped, not dead-lettered.
func TestResendOfADeliveredDelivery(t *testing.T) {
	t.Parallel()
	codes := []int{503, 200}
	var ids []string
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		ids = append(ids, r.Header.Get("webhook-id"))
		w.WriteHeader(codes[0])
		codes = codes[1:]
	})
	m := sqsMessage(t, "d1", "1", f.now.Add(-72*time.Hour)) // past the age cap: a resend's age counts from the resend
	require.NoError(t, f.store.Store.RecordAttempt(context.Background(), domain.Delivery{DeliveryID: "d1", TenantID: "t1", EndpointID: "ep_1", EventID: "evt_d1", EventType: "order.created"},
		domain.Attempt{Number: 1, At: f.now.Add(-72 * time.Hour), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	dup := f.run(t, m)
	require.Empty(t, dup)
	require.Zero(t, f.hits.Load(), "without the mark: a duplicate, dropped")

	msg, err := message.Decode(m.Body)
	require.NoError(t, err)
	msg.Resend, msg.ReplayedAt = true, ptr(f.now)
	body, err := message.Encode(msg)
	require.NoError(t, err)
	m.Body = string(body)
	require.Empty(t, f.run(t, m), "503: the resend is retried, as a new message")
	next, d, ok := f.queue.requeuedFor(t, "d1")
	require.True(t, ok)
	require.Equal(t, int32(10), d)
	require.True(t, next.Resend, "the hop is still the resend")
	require.Empty(t, f.run(t, f.dueRetry(t, "d1_again")), "200: done")
	require.Equal(t, []string{"d1", "d1"}, ids, "the same webhook-id")
	require.Empty(t, f.store.outcomes["d1"], "no outcome recorded on the delivery")
	got, err := f.store.Store.Delivery(context.Background(), "d1")
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Equal(t, 1, got.Attempts)
	require.Len(t, got.AttemptLog, 3)
	require.True(t, got.AttemptLog[1].Resend && got.AttemptLog[1].Status == 503)
	require.True(t, got.AttemptLog[2].Resend && got.AttemptLog[2].Status == 200)

	// A resend that fails for good (a 400): logged, dropped, no DLQ.
	codes = []int{400}
	m.Attributes["ApproximateReceiveCount"] = "1"
	require.Empty(t, f.run(t, m))
	require.Empty(t, f.queue.dlq)
	got, err = f.store.Store.Delivery(context.Background(), "d1")
	require.NoError(t, err)
	require.Equal(t, domain.StateDelivered, got.State)
	require.Equal(t, 3, got.Resends)
}

func TestReplayedMessageAgeCountsFromTheReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	m := sqsMessage(t, "d1", "1", f.now.Add(-72*time.Hour))
	body, err := message.Replayed(m.Body, f.now.Add(-time.Minute))
	require.NoError(t, err)
	m.Body = body
	require.Empty(t, f.run(t, m), "retried (as a new message), not dead")
	require.EqualValues(t, 1, f.hits.Load(), "attempted")
	next, d, ok := f.queue.requeuedFor(t, "d1")
	require.True(t, ok)
	require.Equal(t, int32(10), d, "on the schedule")
	require.NotNil(t, next.ReplayedAt, "the hop is still the replay's")
	require.Empty(t, f.queue.dlq)

	// Replayed, then left long enough to pass the age cap from the replay:
	// dead untried, as any message.
	f2 := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	m2 := sqsMessage(t, "d2", "1", f2.now.Add(-72*time.Hour))
	m2.Body, err = message.Replayed(m2.Body, f2.now.Add(-25*time.Hour))
	require.NoError(t, err)
	f2.run(t, m2)
	require.Zero(t, f2.hits.Load())
	require.Equal(t, []domain.DeadReason{domain.ReasonMaxAgeExceeded}, f2.queue.dlqReason)
}

// Sealed secrets are opened and sign; so do the plaintext secrets of
// endpoints written before secrets were sealed, and a mix of the two while
// a rotation that sealed them is in its grace period.
func TestSignsWithStoredSecrets(t *testing.T) {
	t.Parallel()
	newSecret := func(t *testing.T) string {
		s, err := signing.NewSecret(rand.Reader)
		require.NoError(t, err)
		return s
	}
	for name, tc := range map[string]func(t *testing.T, f *fixture, cur, old string) domain.Endpoint{
		"sealed": func(t *testing.T, f *fixture, cur, _ string) domain.Endpoint {
			return domain.Endpoint{SealedSecrets: []string{f.seal(t, "t1", "ep_1", cur)}}
		},
		"sealed, rotating": func(t *testing.T, f *fixture, cur, old string) domain.Endpoint {
			return domain.Endpoint{SealedSecrets: []string{f.seal(t, "t1", "ep_1", cur)}, SealedRetiringSecret: f.seal(t, "t1", "ep_1", old)}
		},
		"plaintext, written before secrets were sealed": func(_ *testing.T, _ *fixture, cur, _ string) domain.Endpoint {
			return domain.Endpoint{Secrets: []string{cur}}
		},
		"plaintext, rotating": func(_ *testing.T, _ *fixture, cur, old string) domain.Endpoint {
			return domain.Endpoint{Secrets: []string{cur}, RetiringSecret: old}
		},
	} {
		t.Run(name, func(t *testing.T) {
			var got http.Header
			var body []byte
			f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
				got = r.Header.Clone()
				body, _ = io.ReadAll(r.Body)
				w.WriteHeader(200)
			})
			cur, old := newSecret(t), newSecret(t)
			e := tc(t, f, cur, old)
			until := f.now.Add(time.Hour)
			e.TenantID, e.EndpointID, e.URL, e.RetiringUntil = "t1", "ep_1", f.store.endpoint("t1/ep_1").URL, &until
			f.store.setEndpoint(e)
			require.Empty(t, f.run(t, sqsMessage(t, "d1", "1", f.now)))
			require.Equal(t, []domain.Outcome{{State: domain.StateDelivered}}, f.store.outcomes["d1"])
			secrets := []string{cur}
			if e.SealedRetiringSecret != "" || e.RetiringSecret != "" {
				secrets = append(secrets, old)
			}
			require.Len(t, strings.Fields(got.Get("webhook-signature")), len(secrets))
			for _, s := range secrets {
				v, err := signing.NewVerifier(s)
				require.NoError(t, err)
				require.NoError(t, v.VerifyRequest(got, body))
			}
		})
	}
}

// A warm function asks KMS once per secret: not per message of a batch,
// and not again in the next invocation.
func TestSecretsAreOpenedOncePerWarmFunction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	batch := func(prefix string) []events.SQSMessage {
		var msgs []events.SQSMessage
		for i := range 10 {
			msgs = append(msgs, sqsMessage(t, fmt.Sprintf("%s%d", prefix, i), "1", f.now))
		}
		return msgs
	}
	decrypts := func() int { _, d := f.kms.Calls(); return d }
	require.Empty(t, f.run(t, batch("a")...))
	require.Equal(t, 1, decrypts(), "ten deliveries to one endpoint, one Decrypt")
	require.Empty(t, f.run(t, batch("b")...))
	require.Equal(t, 1, decrypts(), "the next invocation of the warm function asks nothing")
	require.EqualValues(t, 20, f.hits.Load())

	// A rotation makes a new ciphertext: it is opened once, and the old
	// secret, now retiring, is still known.
	e := f.store.endpoint("t1/ep_1")
	cur, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	until := f.now.Add(time.Hour)
	e.SealedSecrets, e.SealedRetiringSecret, e.RetiringUntil = []string{f.seal(t, "t1", "ep_1", cur)}, e.SealedSecrets[0], &until
	f.store.setEndpoint(e)
	f.now = f.now.Add(domain.DefaultEndpointCacheTTL) // the instance's copy of the endpoint has run out
	require.Empty(t, f.run(t, batch("c")...))
	require.Equal(t, 2, decrypts())
}

// A message of a tenant being erased (tombstoned) is dropped: no request,
// no record, nothing to the DLQ, the message deleted; also once the
// erasure has deleted its endpoint, and on its last receive.
func TestErasedTenantDropped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		receive string
		setup   func(f *fixture)
	}{
		{"endpoint still there", "1", func(*fixture) {}},
		{"endpoint erased", "1", func(f *fixture) { f.store.deleteEndpoint("t1/ep_1") }},
		{"last receive", "8", func(*fixture) {}},
		{"the batch's read failed: read on its own", "1", func(f *fixture) { f.store.failLoad = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
			ctx := context.Background()
			_, err := f.store.CreateTenant(ctx, domain.Tenant{TenantID: "t1"})
			require.NoError(t, err)
			require.NoError(t, f.store.Tombstone(ctx, "t1"))
			tc.setup(f)
			failed := f.run(t, sqsMessage(t, "d1", tc.receive, f.now.Add(-time.Minute)))
			require.Empty(t, failed, "the message is deleted")
			require.Zero(t, f.hits.Load(), "no request is sent")
			require.Empty(t, f.queue.dlq, "nothing goes to the DLQ")
			require.Empty(t, f.store.outcomes, "nothing is recorded")
			require.Empty(t, f.store.marked, "no death is recorded first")
			require.Empty(t, f.store.Deliveries())
		})
	}
}

// An endpoint deleted while its attempt was out has no health left to
// keep: its failure (or success after failures) is logged at INFO, not as
// an error an operator would chase, and the message is handled as any
// other.
func TestHealthOfAnEndpointDeletedMeanwhileIsNoError(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 200} {
		var f *fixture
		f = newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
			f.store.deleteEndpoint("t1/ep_1")
			w.WriteHeader(status)
		})
		ep := f.store.endpoint("t1/ep_1")
		ep.ConsecutiveFailures = 3 // a success resets them
		f.store.setEndpoint(ep)
		var buf bytes.Buffer
		f.h.Log = slog.New(slog.NewJSONHandler(&buf, nil))
		f.run(t, sqsMessage(t, "d1", "1", f.now))
		require.EqualValues(t, 1, f.hits.Load())
		require.NotContains(t, buf.String(), `"level":"ERROR"`, "status %d", status)
		require.Contains(t, buf.String(), endpointGone, "status %d", status)
		_, err := f.store.Endpoint(context.Background(), "t1", "ep_1")
		require.ErrorIs(t, err, store.ErrNotFound, "no partial endpoint written back")
	}
}

// A batch's attempts to one endpoint are one health write, once its last
// attempt is counted: a success resets the count when the copy shows
// failures, the failures after the last success are counted; another
// endpoint's are its own; a probe or a retryable failure among those
// counted says so for all. A clean endpoint's failures followed by a
// success write nothing.
func TestBatchHealthIsOneWritePerEndpoint(t *testing.T) {
	t.Parallel()
	a, other, clean := store.EndpointRef{TenantID: "t1", EndpointID: "ep_a"}, store.EndpointRef{TenantID: "t1", EndpointID: "ep_b"}, store.EndpointRef{TenantID: "t1", EndpointID: "ep_c"}
	var mu sync.Mutex
	written := map[store.EndpointRef]endpointHealth{}
	b := newBatchHealth([]store.EndpointRef{a, a, a, a, a, other, clean, clean}, func(e *endpointHealth) {
		mu.Lock()
		defer mu.Unlock()
		written[e.ref] = *e
	})
	at := func(ref store.EndpointRef) *attempt {
		return &attempt{in: Input{Message: message.Message{TenantID: ref.TenantID, EndpointID: ref.EndpointID}}}
	}
	b.failed(at(a), true, false) // before the reset: not counted
	reset := at(a)
	b.succeeded(reset, true) // the copy showed failures: resets
	b.failed(at(a), false, false)
	last := at(a)
	b.failed(last, false, true)
	b.failed(at(clean), false, false)
	b.succeeded(at(clean), false) // a clean copy: the failure before it is not consecutive, nothing to reset
	b.failed(at(other), false, false)
	for range 4 {
		b.done(a)
	}
	b.done(other)
	b.done(clean)
	b.done(clean)
	b.wait()
	mu.Lock()
	require.Len(t, written, 1, "ep_a has an attempt left; ep_c's failure was followed by a success")
	require.Equal(t, endpointHealth{ref: other, n: 1, at: written[other].at}, written[other])
	mu.Unlock()
	b.done(a)
	b.wait()
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, endpointHealth{ref: a, reset: true, resetBy: reset, n: 2, retryable: true, at: last}, written[a], "the probe failed before the reset")
	require.NotContains(t, written, clean)
}
