package enqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	dynamotypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// testStore is the real store on the fake table (storefake) with what
// these tests add: the calls they count and the failures they inject. enqueue writes no delivery: the deliveries here are
// the records deliver's attempts wrote (attempted).
type testStore struct {
	*storefake.Store
	mu       sync.Mutex
	failOn   string              // "endpoints", "load", "reject"
	queries  map[string]int      // Endpoints calls per tenant
	loads    [][]string          // the ids of each LoadWith call
	loadOpts []store.LoadOptions // the options of each LoadWith call
}

// newFakeStore is a store holding eps and their tenants.
func newFakeStore(eps ...domain.Endpoint) *testStore {
	s := &testStore{Store: storefake.New(), queries: map[string]int{}}
	for _, e := range eps {
		s.addTenant(e.TenantID)
		s.addEndpoint(e)
	}
	return s
}

func (s *testStore) addTenant(id string) {
	if _, err := s.Tenant(context.Background(), id); err == nil {
		return
	}
	if _, err := s.CreateTenant(context.Background(), domain.Tenant{TenantID: id}); err != nil {
		panic(err)
	}
}

func (s *testStore) addEndpoint(e domain.Endpoint) {
	if err := s.PutEndpoint(context.Background(), e); err != nil {
		panic(err)
	}
}

var _ Store = (*testStore)(nil)

var errBoom = errors.New("boom: service unavailable")

func (s *testStore) TenantEndpoints(ctx context.Context, tenant string) ([]domain.Endpoint, bool, error) {
	s.mu.Lock()
	s.queries[tenant]++
	fail := s.failOn == "endpoints"
	s.mu.Unlock()
	if fail {
		return nil, false, errBoom
	}
	return s.Store.TenantEndpoints(ctx, tenant)
}

func (s *testStore) LoadWith(ctx context.Context, opts store.LoadOptions, ids []string, refs []store.EndpointRef) (store.Snapshot, error) {
	s.mu.Lock()
	s.loads = append(s.loads, append([]string(nil), ids...))
	s.loadOpts = append(s.loadOpts, opts)
	fail := s.failOn == "load"
	s.mu.Unlock()
	if fail {
		return store.Snapshot{}, errBoom
	}
	return s.Store.LoadWith(ctx, opts, ids, refs)
}

// attempted records an attempt of m as deliver does: the first one creates
// the record, with the outcome's state.
func (s *testStore) attempted(m message.Message, state domain.DeliveryState) {
	ctx := context.Background()
	d := domain.Delivery{DeliveryID: m.DeliveryID, TenantID: m.TenantID, EndpointID: m.EndpointID, EventID: m.EventID, EventType: m.EventType}
	if cur, err := s.Delivery(ctx, m.DeliveryID); err == nil {
		d = cur
	}
	o := domain.Outcome{State: state}
	if state == domain.StateDead {
		o.DeadReason = domain.Rejected(400)
	}
	if err := s.RecordAttempt(ctx, d, domain.Attempt{Number: d.Attempts + 1, At: time.Now()}, o); err != nil {
		panic(err)
	}
}

// delivered is attempted with a 2xx.
func (s *testStore) delivered(m message.Message) { s.attempted(m, domain.StateDelivered) }

// PutRejection fails while failOn says "reject"; the item size limit is
// the fake table's own (dynamofake), as DynamoDB's.
func (s *testStore) PutRejection(ctx context.Context, r domain.Rejection) error {
	s.mu.Lock()
	fail := s.failOn == "reject"
	s.mu.Unlock()
	if fail {
		return errBoom
	}
	return s.Store.PutRejection(ctx, r)
}

// testQueueURL is the delivery queue of newHandler's handler.
const (
	testQueueURL  = "https://sqs.example/q"
	testLaneURL   = "https://sqs.example/123456789012/lane"
	testFanOutURL = "https://sqs.example/123456789012/fanout"
)

// fakeQueue is the one fake SQS (sqsfake), which refuses what SQS would,
// holding every delivery message (any sent to a queue other than parkURL)
// to its tenant's group (message.CheckGroupID) and its entry id to its
// delivery id. Its zero value is ready to use.
type fakeQueue struct {
	once sync.Once
	q    *sqsfake.Queue
	mu   sync.Mutex
	// fail fails every request to the delivery queue; failAt, if set, is
	// the number of the one request (1 for the first) that fails.
	fail     bool
	failAt   int
	requests int
	// parkURL is the enqueue failure queue's URL; parkFail fails the
	// requests to it.
	parkURL  string
	parkFail bool
}

func (q *fakeQueue) fake() *sqsfake.Queue {
	q.once.Do(func() { q.q = sqsfake.New(sqsfake.Config{Fail: q.failing, CheckSend: q.checkDelivery}) })
	return q.q
}

// failing is sqsfake's Config.Fail: fail, failAt and parkFail.
func (q *fakeQueue) failing(_, url string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.parkURL != "" && url == q.parkURL {
		if q.parkFail {
			return errBoom
		}
		return nil
	}
	q.requests++
	if q.fail || q.requests == q.failAt {
		return errBoom
	}
	return nil
}

// checkDelivery is sqsfake's Config.CheckSend: a delivery message is a
// message.Message, under its delivery id, in its tenant's group.
func (q *fakeQueue) checkDelivery(url, entryID string, in *sqs.SendMessageInput) error {
	if q.parkURL != "" && url == q.parkURL {
		return nil
	}
	if url == testFanOutURL {
		_, err := decodeDeferred(aws.ToString(in.MessageBody))
		return err
	}
	m, err := message.Decode(aws.ToString(in.MessageBody))
	if err != nil {
		return err
	}
	if entryID != m.DeliveryID {
		return fmt.Errorf("entry id %s is not the delivery id %s", entryID, m.DeliveryID)
	}
	return message.CheckGroupID(*in.MessageBody, in.MessageGroupId) // every delivery message in its tenant's group
}

func (q *fakeQueue) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	return q.fake().SendMessageBatch(ctx, in, opts...)
}

// sent returns the delivery messages sent, in order.
func (q *fakeQueue) sent() []message.Message {
	var out []message.Message
	for _, b := range q.fake().Bodies(testQueueURL) {
		m, err := message.Decode(b)
		if err != nil {
			panic(err) // checkDelivery let it in
		}
		out = append(out, m)
	}
	return out
}

// groups returns the MessageGroupId of each of sent.
func (q *fakeQueue) groups() []string {
	var out []string
	for _, m := range q.fake().Messages(testQueueURL) {
		out = append(out, aws.ToString(m.GroupID))
	}
	return out
}

// batches is how many requests to the delivery queue were accepted.
func (q *fakeQueue) batches() int { return q.fake().Answered("SendMessageBatch", testQueueURL) }

// parked returns the bodies sent to the park queue.
func (q *fakeQueue) parked() []string { return q.fake().Bodies(q.parkURL) }

// count returns how many times each delivery id was sent.
func (q *fakeQueue) count() map[string]int {
	n := map[string]int{}
	for _, m := range q.sent() {
		n[m.DeliveryID]++
	}
	return n
}

func newHandler(s *testStore, q *fakeQueue) *Handler {
	return &Handler{Store: s, Queue: q, Config: Config{QueueURL: testQueueURL}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
}

func endpoint(tenant, id string, types ...string) domain.Endpoint {
	return domain.Endpoint{TenantID: tenant, EndpointID: id, URL: "https://example.com/" + id, Secrets: []string{"whsec_x"}, EventTypes: types}
}

// invoke pushes raw event JSON through the same decoding Lambda uses.
func invoke(t *testing.T, h *Handler, raw []byte) events.DynamoDBEventResponse {
	t.Helper()
	out, err := lambda.NewHandler(h.Handle).Invoke(context.Background(), raw)
	require.NoError(t, err)
	require.NotContains(t, string(out), "null", "batchItemFailures must never be null")
	var resp events.DynamoDBEventResponse
	require.NoError(t, json.Unmarshal(out, &resp))
	return resp
}

func sample(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../events/dynamodb-outbox-insert.json")
	require.NoError(t, err)
	return raw
}

func decodeSample(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	var ev events.DynamoDBEvent
	require.NoError(t, json.Unmarshal(sample(t), &ev))
	return ev
}

func TestSampleEventFansOutAndRejects(t *testing.T) {
	t.Parallel()
	s := newFakeStore(
		endpoint("tenant_sample", "ep_all"),
		endpoint("tenant_sample", "ep_payments", "payment.*"),
		endpoint("tenant_sample", "ep_orders", "order.created"),
		func() domain.Endpoint { e := endpoint("tenant_sample", "ep_off"); e.Disabled = true; return e }(),
		endpoint("other_tenant", "ep_other"),
	)
	q := &fakeQueue{}
	resp := invoke(t, newHandler(s, q), sample(t))
	require.Empty(t, resp.BatchItemFailures)

	var got []string
	for _, m := range q.sent() {
		require.Equal(t, "evt_sample_1", m.EventID)
		require.Equal(t, "tenant_sample", m.TenantID)
		require.Equal(t, domain.DeliveryID(m.TenantID, m.EventID, m.EndpointID, m.OccurredAt), m.DeliveryID)
		require.JSONEq(t, `{"amount":1250,"currency":"eur"}`, string(m.Payload))
		require.NotNil(t, m.Sequence)
		require.EqualValues(t, 7, *m.Sequence)
		got = append(got, m.EndpointID)
	}
	require.ElementsMatch(t, []string{"ep_all", "ep_payments", "ep_off"}, got,
		"endpoints whose filter matches; a disabled one too (deliver parks it dead, replayable once enabled)")
	require.Empty(t, s.Deliveries(), "enqueue writes no delivery record: the first attempt does")

	r, ok := s.Rejections()["evt_sample_bad"]
	require.True(t, ok, "the malformed item is recorded")
	require.Equal(t, outbox.ReasonInvalidJSON, string(r.Reason))
	require.Equal(t, outbox.AttrPayload, r.Field)
	require.Equal(t, "tenant_sample", r.TenantID)
	require.Len(t, s.Rejections(), 1, "the REMOVE record is not an event")
}

// A batch processed again after deliver attempted its deliveries sends
// nothing: an attempt's record says the message went out, whatever the
// attempt's outcome. The existence read is eventually consistent (half the
// read units of a consistent one).
func TestBatchProcessedAgainAfterItsDeliveriesWereAttemptedSendsNothing(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_ok"), endpoint("t1", "ep_retrying"), endpoint("t1", "ep_dead"))
	q := &fakeQueue{}
	h := newHandler(s, q)
	ev := streamEvent(image("e1", "t1", nil), image("e2", "t1", nil))
	_, err := h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.sent(), 6)
	require.Empty(t, s.Deliveries(), "enqueue writes no record")
	for _, m := range q.sent() {
		switch m.EndpointID {
		case "ep_ok":
			s.delivered(m)
		case "ep_retrying":
			s.attempted(m, domain.StatePending) // failed once, to be retried
		case "ep_dead":
			s.attempted(m, domain.StateDead)
		}
	}

	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.sent(), 6, "every delivery was attempted: nothing is sent again")
	require.Len(t, s.loads, 2, "one read of the batch's deliveries per run")
	for _, o := range s.loadOpts {
		require.True(t, o.Eventual, "enqueue's existence read is eventually consistent")
	}

	t.Run("twice in one batch", func(t *testing.T) {
		s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e1", "t1", nil), image("e1", "t1", nil)))
		require.NoError(t, err)
		require.Len(t, q.sent(), 1)
	})
}

// A batch processed again before deliver attempted any of its deliveries
// sends every message again, with the same delivery ids (webhook-id): what
// was sent and not yet attempted has no record. Receivers deduplicate on
// the id, and deliver drops a message whose delivery is delivered.
func TestBatchProcessedAgainBeforeAnyAttemptResendsWithTheSameIDs(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_1"), endpoint("t1", "ep_2"))
	q := &fakeQueue{}
	h := newHandler(s, q)
	ev := streamEvent(image("e1", "t1", nil), image("e2", "t1", nil))
	_, err := h.Handle(context.Background(), ev)
	require.NoError(t, err)
	first := append([]message.Message(nil), q.sent()...)
	require.Len(t, first, 4)

	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.sent(), 8)
	again := q.sent()[4:]
	for i := range again {
		// The same trace; the span that sent it is this run's fan-out.
		require.Equal(t, first[i].TraceParent[:36], again[i].TraceParent[:36])
		again[i].TraceParent = first[i].TraceParent
	}
	require.Equal(t, first, again, "the same messages, same ids, same order")
	for id, n := range q.count() {
		require.Equal(t, 2, n, "delivery %s", id)
	}

	// Once deliver has attempted them, a third run sends nothing.
	for _, m := range first {
		s.delivered(m)
	}
	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.sent(), 8)
}

// A request that fails fails the invocation; the retry sends what was not
// attempted, the messages of the requests before the failure included:
// nothing is lost. (One request at a time, so that "the third was not
// tried" holds; TestSendsRunConcurrentlyWithinTheBound fails a request
// among concurrent ones.)
func TestFailedSendIsRetriedWithoutLoss(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := range 25 {
		eps = append(eps, endpoint("t1", fmt.Sprintf("ep_%02d", i)))
	}
	s := newFakeStore(eps...)
	q := &fakeQueue{failAt: 2}
	h := newHandler(s, q)
	h.Config.SendConcurrency = 1
	ev := streamEvent(image("e1", "t1", nil))
	_, err := h.Handle(context.Background(), ev)
	require.ErrorIs(t, err, errBoom, "the invocation fails, so the stream retries the batch")
	require.ErrorContains(t, err, "900000000000000000000")
	require.Len(t, q.sent(), 10, "the first request went out, the second failed, the third was not tried")

	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	counts := q.count()
	require.Len(t, counts, 25, "every delivery sent")
	for _, m := range q.sent()[:10] {
		require.Equal(t, 2, counts[m.DeliveryID], "sent before the failure, not attempted: sent again, same id")
	}
	require.Len(t, q.sent(), 10+25)
}

// A delivery that exists without having been attempted was created by an
// earlier version (which wrote records in enqueue) before its message was
// sent, and never marked sent: its message may never have gone out, so it
// is sent. One marked sent (enqueued_at) is not.
func TestUnmarkedDeliveryOfTheEarlierProtocolIsSent(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_1"), endpoint("t1", "ep_2"))
	now := time.Now()
	unmarked := domain.DeliveryID("t1", "e1", "ep_1", imageAt)
	s.PutDelivery(domain.Delivery{DeliveryID: unmarked, TenantID: "t1", EndpointID: "ep_1", EventID: "e1", State: domain.StatePending, CreatedAt: now})
	marked := domain.DeliveryID("t1", "e1", "ep_2", imageAt)
	s.PutDelivery(domain.Delivery{DeliveryID: marked, TenantID: "t1", EndpointID: "ep_2", EventID: "e1", State: domain.StatePending, CreatedAt: now, EnqueuedAt: &now})
	q := &fakeQueue{}
	_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e1", "t1", nil)))
	require.NoError(t, err)
	require.Equal(t, map[string]int{unmarked: 1}, q.count())
}

func TestInfrastructureFailuresFailTheInvocation(t *testing.T) {
	t.Parallel()
	for _, failOn := range []string{"endpoints", "load", "send", "reject"} {
		t.Run(failOn, func(t *testing.T) {
			s := newFakeStore(endpoint("tenant_sample", "ep_1"))
			q := &fakeQueue{}
			if failOn == "send" {
				q.fail = true
			} else {
				s.failOn = failOn
			}
			_, err := newHandler(s, q).Handle(context.Background(), decodeSample(t))
			want := "111100000000000000001"
			if failOn == "reject" {
				want = "111100000000000000002" // the first record is fine; the bad one cannot be recorded
			}
			require.ErrorContains(t, err, want)
			require.ErrorIs(t, err, errBoom)
		})
	}
}

func TestEndpointTargeting(t *testing.T) {
	t.Parallel()
	eps := []domain.Endpoint{endpoint("t1", "ep_a"), endpoint("t1", "ep_b")}
	t.Run("named endpoint only", func(t *testing.T) {
		s, q := newFakeStore(eps...), &fakeQueue{}
		resp, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e1", "t1", map[string]events.DynamoDBAttributeValue{
			outbox.AttrEndpointID: events.NewStringAttribute("ep_b"),
		})))
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		require.Len(t, q.sent(), 1)
		require.Equal(t, "ep_b", q.sent()[0].EndpointID)
	})
	t.Run("unknown named endpoint is rejected", func(t *testing.T) {
		s, q := newFakeStore(eps...), &fakeQueue{}
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e2", "t1", map[string]events.DynamoDBAttributeValue{
			outbox.AttrEndpointID: events.NewStringAttribute("ep_zzz"),
		})))
		require.NoError(t, err)
		require.Empty(t, q.sent())
		require.Equal(t, domain.RejectUnknownEndpoint, s.Rejections()["e2"].Reason)
	})
	t.Run("unknown tenant is rejected", func(t *testing.T) {
		s, q := newFakeStore(eps...), &fakeQueue{}
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e3", "nobody", nil)))
		require.NoError(t, err)
		require.Empty(t, q.sent())
		require.Equal(t, domain.RejectUnknownTenant, s.Rejections()["e3"].Reason)
		require.Equal(t, "nobody", s.Rejections()["e3"].TenantID)
	})
	t.Run("tenant without endpoints is recorded as such", func(t *testing.T) {
		s, q := newFakeStore(eps...), &fakeQueue{}
		s.addTenant("lonely")
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e5", "lonely", nil)))
		require.NoError(t, err)
		require.Empty(t, q.sent())
		require.Equal(t, domain.RejectNoEndpoint, s.Rejections()["e5"].Reason)
	})
	t.Run("no endpoint subscribes to the type", func(t *testing.T) {
		s, q := newFakeStore(endpoint("t3", "ep_pay", "payment.*")), &fakeQueue{}
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e6", "t3", nil)))
		require.NoError(t, err)
		require.Empty(t, q.sent())
		require.Equal(t, domain.RejectNoEndpoint, s.Rejections()["e6"].Reason)
	})
	t.Run("fan-out past ten endpoints uses several batches", func(t *testing.T) {
		var many []domain.Endpoint
		for i := 0; i < 23; i++ {
			many = append(many, endpoint("t2", fmt.Sprintf("ep_%02d", i)))
		}
		s, q := newFakeStore(many...), &fakeQueue{}
		_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e4", "t2", nil)))
		require.NoError(t, err)
		require.Len(t, q.sent(), 23)
		require.Equal(t, 3, q.batches())
		require.Len(t, q.count(), 23)
	})
}

// imageAt is the occurred_at of image's events, which names their
// deliveries.
var imageAt = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

func image(id, tenant string, extra map[string]events.DynamoDBAttributeValue) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{
		outbox.AttrID:         events.NewStringAttribute(id),
		outbox.AttrTenantID:   events.NewStringAttribute(tenant),
		outbox.AttrType:       events.NewStringAttribute("order.created"),
		outbox.AttrPayload:    events.NewStringAttribute(`{"ok":true}`),
		outbox.AttrOccurredAt: events.NewStringAttribute(imageAt.Format(time.RFC3339)),
	}
	for k, v := range extra {
		img[k] = v
	}
	return img
}

func streamEvent(imgs ...map[string]events.DynamoDBAttributeValue) events.DynamoDBEvent {
	var ev events.DynamoDBEvent
	for i, img := range imgs {
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{
			EventName: "INSERT",
			Change:    events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: fmt.Sprintf("9%020d", i)},
		})
	}
	return ev
}

func TestMalformedItemsAreRejectedAndNeverBlock(t *testing.T) {
	t.Parallel()
	str := events.NewStringAttribute
	del := events.NewNullAttribute()
	cases := []struct {
		name   string
		extra  map[string]events.DynamoDBAttributeValue
		key    string
		reason string
		field  string
	}{
		{"missing id", map[string]events.DynamoDBAttributeValue{outbox.AttrID: del}, "seq:900000000000000000000", outbox.ReasonMissingField, outbox.AttrID},
		{"id of wrong type", map[string]events.DynamoDBAttributeValue{outbox.AttrID: events.NewNumberAttribute("5")}, "seq:900000000000000000000", outbox.ReasonWrongType, outbox.AttrID},
		{"id too long", map[string]events.DynamoDBAttributeValue{outbox.AttrID: str(strings.Repeat("x", 300))}, "seq:900000000000000000000", outbox.ReasonTooLarge, outbox.AttrID},
		{"id not UTF-8", map[string]events.DynamoDBAttributeValue{outbox.AttrID: str("ev\xff")}, "seq:900000000000000000000", outbox.ReasonInvalidUTF8, outbox.AttrID},
		{"missing tenant", map[string]events.DynamoDBAttributeValue{outbox.AttrTenantID: del}, "x", outbox.ReasonMissingField, outbox.AttrTenantID},
		{"type is a list", map[string]events.DynamoDBAttributeValue{outbox.AttrType: events.NewListAttribute(nil)}, "x", outbox.ReasonWrongType, outbox.AttrType},
		{"missing payload", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: del}, "x", outbox.ReasonMissingField, outbox.AttrPayload},
		{"payload not JSON", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: str("{nope")}, "x", outbox.ReasonInvalidJSON, outbox.AttrPayload},
		{"payload not UTF-8", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: str("\"\xff\"")}, "x", outbox.ReasonInvalidUTF8, outbox.AttrPayload},
		{"payload too large", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: str(`"` + strings.Repeat("a", outbox.MaxPayloadBytes) + `"`)}, "x", outbox.ReasonTooLarge, outbox.AttrPayload},
		{"payload binary", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: events.NewBinaryAttribute([]byte("{}"))}, "x", outbox.ReasonWrongType, outbox.AttrPayload},
		{"missing time", map[string]events.DynamoDBAttributeValue{outbox.AttrOccurredAt: del}, "x", outbox.ReasonMissingField, outbox.AttrOccurredAt},
		{"bad time", map[string]events.DynamoDBAttributeValue{outbox.AttrOccurredAt: str("yesterday")}, "x", outbox.ReasonInvalidTime, outbox.AttrOccurredAt},
		{"sequence not integer", map[string]events.DynamoDBAttributeValue{outbox.AttrSequence: events.NewNumberAttribute("1.5")}, "x", outbox.ReasonWrongType, outbox.AttrSequence},
		{"sequence a string", map[string]events.DynamoDBAttributeValue{outbox.AttrSequence: str("1")}, "x", outbox.ReasonWrongType, outbox.AttrSequence},
		{"endpoint id a number", map[string]events.DynamoDBAttributeValue{outbox.AttrEndpointID: events.NewNumberAttribute("1")}, "x", outbox.ReasonWrongType, outbox.AttrEndpointID},
		// Values that once stalled the stream: a rejection record that copied
		// them grew past DynamoDB's item limit, SQS refused the message, or
		// every attempt failed in the HTTP client.
		{"time of 100 KiB of control characters", map[string]events.DynamoDBAttributeValue{outbox.AttrOccurredAt: str(strings.Repeat("\x01", 100<<10))}, "x", outbox.ReasonInvalidTime, outbox.AttrOccurredAt},
		{"time of 100 KiB of multi-byte characters", map[string]events.DynamoDBAttributeValue{outbox.AttrOccurredAt: str(strings.Repeat("\u2603", 100<<10/3))}, "x", outbox.ReasonInvalidTime, outbox.AttrOccurredAt},
		{"sequence of 100 KiB of digits", map[string]events.DynamoDBAttributeValue{outbox.AttrSequence: events.NewNumberAttribute(strings.Repeat("9", 100<<10))}, "x", outbox.ReasonWrongType, outbox.AttrSequence},
		{"payload with U+FFFE", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: str("{\"a\":\"\ufffe\"}")}, "x", outbox.ReasonInvalidChars, outbox.AttrPayload},
		{"payload with U+FFFF", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: str("{\"a\":\"x\uffff\"}")}, "x", outbox.ReasonInvalidChars, outbox.AttrPayload},
		{"type with U+FFFE", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("order.\ufffe")}, "x", outbox.ReasonInvalidChars, outbox.AttrType},
		{"id with U+FFFF", map[string]events.DynamoDBAttributeValue{outbox.AttrID: str("ev\uffff")}, "seq:900000000000000000000", outbox.ReasonInvalidChars, outbox.AttrID},
		{"type with NUL", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("order\x00created")}, "x", outbox.ReasonInvalidChars, outbox.AttrType},
		{"type with CR LF", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("order\r\nX-Injected: 1")}, "x", outbox.ReasonInvalidChars, outbox.AttrType},
		{"type with DEL", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("order\x7f")}, "x", outbox.ReasonInvalidChars, outbox.AttrType},
		{"id with NUL", map[string]events.DynamoDBAttributeValue{outbox.AttrID: str("ev\x00")}, "seq:900000000000000000000", outbox.ReasonInvalidChars, outbox.AttrID},
		{"id with LF", map[string]events.DynamoDBAttributeValue{outbox.AttrID: str("ev\n1")}, "seq:900000000000000000000", outbox.ReasonInvalidChars, outbox.AttrID},
		{"tenant with a tab", map[string]events.DynamoDBAttributeValue{outbox.AttrTenantID: str("t\t1")}, "x", outbox.ReasonInvalidChars, outbox.AttrTenantID},
		{"endpoint id with CR", map[string]events.DynamoDBAttributeValue{outbox.AttrEndpointID: str("ep_1\r")}, "x", outbox.ReasonInvalidChars, outbox.AttrEndpointID},
		{"reserved type written by a producer", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("endpoint.disabled")}, "x", outbox.ReasonReservedType, outbox.AttrType},
		{"reserved type with a forged marker of the wrong type", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("delivery.dead"), opevent.AttrOrigin: events.NewBooleanAttribute(true)}, "x", outbox.ReasonReservedType, outbox.AttrType},
		{"reserved type with another origin", map[string]events.DynamoDBAttributeValue{outbox.AttrType: str("delivery.dead"), opevent.AttrOrigin: str("producer")}, "x", outbox.ReasonReservedType, outbox.AttrType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
			bad := image("x", "t1", nil)
			for k, v := range tc.extra {
				if v.IsNull() {
					delete(bad, k)
				} else {
					bad[k] = v
				}
			}
			resp, err := newHandler(s, q).Handle(context.Background(), streamEvent(bad, image("after", "t1", nil)))
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures, "a bad item never fails the batch")
			r, ok := s.Rejections()[tc.key]
			require.True(t, ok, "rejection recorded under %q; have %v", tc.key, s.Rejections())
			require.Equal(t, tc.reason, string(r.Reason))
			require.Equal(t, tc.field, r.Field)
			require.NotEmpty(t, r.Detail)
			require.LessOrEqual(t, len(r.Detail), outbox.MaxDetailBytes, "the record is bounded whatever the item held")
			for _, v := range []string{r.Key, r.EventID, r.TenantID} {
				require.True(t, v == "" || outbox.ValidText(v), "%q is recorded as it is only when it is safe to show", v)
			}
			require.Len(t, q.sent(), 1, "the item after the bad one is delivered")
			require.Equal(t, "after", q.sent()[0].EventID)
		})
	}
}

func FuzzDecodeImage(f *testing.F) {
	f.Add("evt", "t", "order.created", `{"a":1}`, "2026-11-30T01:00:00Z", "5")
	f.Add("", "", "", "", "", "")
	f.Add("e\xff", "t", "x", `"\xff"`, "2026-13-40T99:00:00Z", "1e400")
	f.Fuzz(func(t *testing.T, id, tenant, typ, payload, occurred, seq string) {
		img := map[string]events.DynamoDBAttributeValue{
			outbox.AttrID: events.NewStringAttribute(id), outbox.AttrTenantID: events.NewStringAttribute(tenant),
			outbox.AttrType: events.NewStringAttribute(typ), outbox.AttrPayload: events.NewStringAttribute(payload),
			outbox.AttrOccurredAt: events.NewStringAttribute(occurred), outbox.AttrSequence: events.NewNumberAttribute(seq),
		}
		ev, err := decodeImage(img)
		if err != nil {
			var verr *outbox.ValidationError
			require.ErrorAs(t, err, &verr, "every rejection carries a reason")
			require.NotEmpty(t, verr.Reason)
			return
		}
		require.NoError(t, ev.Validate())
		_, err = ev.Item()
		require.NoError(t, err, "what enqueue accepts, a producer can write")
	})
}

// An invocation that fails after sending part of its messages (the soak's
// injected fault, after the first request) is retried: nothing is lost;
// what was sent and not yet attempted is sent again, with the same
// delivery id (the receiver's idempotency key); what deliver attempted in
// the meantime is not.
func TestFailureAfterPartialSendIsRetriedWithoutLoss(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := 0; i < 15; i++ {
		eps = append(eps, endpoint("t1", fmt.Sprintf("ep_%02d", i)))
	}
	s, q := newFakeStore(eps...), &fakeQueue{}
	h := newHandler(s, q)
	h.Config.SendConcurrency = 1 // one request at a time: none starts after the fault
	f := &fault.FailAfterSend{Next: q, Rate: 1}
	h.Queue = f
	ev := streamEvent(image("e1", "t1", nil))
	_, err := fault.EachInvocation(f, h.Handle)(context.Background(), ev)
	require.ErrorIs(t, err, fault.ErrInjected, "the invocation fails after a send")
	require.Len(t, q.sent(), 10, "the first request went out before the fault, the second did not")

	// deliver attempts three of the ten before the retry.
	for _, m := range q.sent()[:3] {
		s.delivered(m)
	}
	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	seen, ids := map[string]int{}, map[string]string{}
	for _, m := range q.sent() {
		seen[m.EndpointID]++
		if prev, ok := ids[m.EndpointID]; ok {
			require.Equal(t, prev, m.DeliveryID, "a resend keeps the delivery id")
		}
		ids[m.EndpointID] = m.DeliveryID
	}
	require.Len(t, seen, 15, "every endpoint got its delivery")
	for i := 0; i < 3; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("ep_%02d", i)], "attempted by deliver: not sent again")
	}
	for i := 3; i < 10; i++ {
		require.Equal(t, 2, seen[fmt.Sprintf("ep_%02d", i)], "sent, not attempted yet: sent again")
	}
	for i := 10; i < 15; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("ep_%02d", i)], "sent only by the retry")
	}
	require.Len(t, q.sent(), 15+7)

	for _, m := range q.sent()[10:] {
		s.delivered(m)
	}
	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, q.sent(), 15+7, "all attempted: a third run sends nothing")
}

func TestEndpointsAreReadOncePerTenantPerBatch(t *testing.T) {
	t.Parallel()
	s, q := newFakeStore(endpoint("t1", "ep_a"), endpoint("t1", "ep_b"), endpoint("t2", "ep_c")), &fakeQueue{}
	h := newHandler(s, q)
	ev := streamEvent(image("e1", "t1", nil), image("e2", "t2", nil), image("e3", "t1", nil), image("e4", "t2", nil), image("e5", "t1", nil))
	resp, err := h.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, q.sent(), 3*2+2*1)
	require.Equal(t, 1, q.batches(), "one request for the batch's eight messages")
	require.Equal(t, map[string]int{"t1": 1, "t2": 1}, s.queries)
	require.Len(t, s.loads, 1, "the batch's deliveries are read at once")
	require.Len(t, s.loads[0], 8)

	// The next batch reads again: a change to a tenant's endpoints applies
	// from the next batch on.
	s.addEndpoint(endpoint("t1", "ep_new"))
	_, err = h.Handle(context.Background(), streamEvent(image("e6", "t1", nil)))
	require.NoError(t, err)
	require.Equal(t, 2, s.queries["t1"])
	require.Len(t, q.sent(), 8+3)
}

// Messages are sent across the records of an invocation, ten a request, the
// requests formed in stream order (one request at a time, they also arrive
// in it).
func TestMessagesAreSentAcrossRecordsInStreamOrder(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_1"))
	q := &fakeQueue{}
	var imgs []map[string]events.DynamoDBAttributeValue
	for i := range 25 {
		imgs = append(imgs, image(fmt.Sprintf("e%02d", i), "t1", nil))
	}
	h := newHandler(s, q)
	h.Config.SendConcurrency = 1
	resp, err := h.Handle(context.Background(), streamEvent(imgs...))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, 3, q.batches(), "25 one-endpoint events: 10 + 10 + 5 messages")
	require.Len(t, q.sent(), 25)
	for i, m := range q.sent() {
		require.Equal(t, fmt.Sprintf("e%02d", i), m.EventID, "stream order")
	}
}

// A request never passes SQS's 256 KiB for its messages together: it is
// split before the message that would.
func TestRequestsAreSplitBeforeTheyPass256KiB(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_1"), endpoint("t1", "ep_2"))
	q := &fakeQueue{}
	big := events.NewStringAttribute(`"` + strings.Repeat("a", 100<<10) + `"`)
	var imgs []map[string]events.DynamoDBAttributeValue
	for i := range 3 {
		imgs = append(imgs, image(fmt.Sprintf("e%d", i), "t1", map[string]events.DynamoDBAttributeValue{outbox.AttrPayload: big}))
	}
	imgs = append(imgs, image("small", "t1", nil))
	_, err := newHandler(s, q).Handle(context.Background(), streamEvent(imgs...))
	require.NoError(t, err, "the fake queue refuses a request over 256 KiB, as SQS does")
	require.Len(t, q.sent(), 8)
	require.Equal(t, 3, q.batches(), "six 100 KiB messages two a request; the small ones join the last")
	require.Len(t, q.count(), 8)
}

// The soak's fault fires after the first request, which spans records: the
// retry loses nothing, and sends again that request's messages, none of
// them attempted yet.
func TestFaultAfterARequestSpanningRecords(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := range 4 {
		eps = append(eps, endpoint("t1", fmt.Sprintf("ep_%d", i)))
	}
	s, q := newFakeStore(eps...), &fakeQueue{}
	h := newHandler(s, q)
	h.Config.SendConcurrency = 1 // one request at a time: none starts after the fault
	f := &fault.FailAfterSend{Next: q, Rate: 1}
	h.Queue = f
	ev := streamEvent(image("e1", "t1", nil), image("e2", "t1", nil), image("e3", "t1", nil))
	_, err := fault.EachInvocation(f, h.Handle)(context.Background(), ev)
	require.ErrorIs(t, err, fault.ErrInjected)
	require.ErrorContains(t, err, "records 900000000000000000000 to 900000000000000000002", "the request held messages of the first three records")
	require.Len(t, q.sent(), 10)

	_, err = h.Handle(context.Background(), ev)
	require.NoError(t, err)
	counts := q.count()
	require.Len(t, counts, 12, "nothing lost")
	for _, m := range q.sent()[:10] {
		require.Equal(t, 2, counts[m.DeliveryID], "sent before the fault, not attempted: sent again")
	}
	require.Len(t, q.sent(), 10+12)
}

// streamImage is item as a stream record's image holds it (its strings
// and numbers: hookline's writers write nothing else).
func streamImage(item map[string]dynamotypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{}
	for k, v := range item {
		switch v := v.(type) {
		case *dynamotypes.AttributeValueMemberS:
			img[k] = events.NewStringAttribute(v.Value)
		case *dynamotypes.AttributeValueMemberN:
			img[k] = events.NewNumberAttribute(v.Value)
		}
	}
	return img
}

// opImage is the stream image of an operational event as hookline writes
// it (opevent.Item).
func opImage(t *testing.T, id, tenant, eventType string) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	item, err := opevent.Item(opevent.Event{ID: id, TenantID: tenant, Type: eventType, Payload: domain.OpEndpointEvent{TenantID: tenant}, At: time.Now()})
	require.NoError(t, err)
	return streamImage(item)
}

// hookline's own operational events go only to the enabled endpoints of
// their tenant that name their type; none is nothing to do, not a
// rejection.
func TestOperationalEventsGoOnlyToEndpointsThatAskForThem(t *testing.T) {
	t.Parallel()
	s := newFakeStore(
		endpoint("t1", "ep_all"),
		endpoint("t1", "ep_star", "*"),
		endpoint("t1", "ep_ops", "endpoint.*", "delivery.dead"),
		endpoint("t1", "ep_dead", "delivery.dead"),
		func() domain.Endpoint { e := endpoint("t1", "ep_off", "endpoint.*"); e.Disabled = true; return e }(),
		endpoint("t2", "ep_other", "endpoint.*"),
		endpoint("t3", "ep_business", "order.*"),
	)
	q := &fakeQueue{}
	resp, err := newHandler(s, q).Handle(context.Background(), streamEvent(
		opImage(t, "op1", "t1", domain.OpEndpointFailing),
		opImage(t, "op2", "t1", domain.OpDeliveryDead),
		opImage(t, "op3", "t3", domain.OpEndpointDisabled),
	))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	got := map[string][]string{}
	for _, m := range q.sent() {
		got[m.EventID] = append(got[m.EventID], m.EndpointID)
	}
	require.Equal(t, map[string][]string{"op1": {"ep_ops"}, "op2": {"ep_dead", "ep_ops"}}, got)
	require.Empty(t, s.Rejections(), "no subscriber is not a producer's fault")
}

// testImage is the stream image of a hookline.test event as the API writes
// it (opevent.TestItem).
func testImage(t *testing.T, id, tenant, endpointID string) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	item, err := opevent.TestItem(id, tenant, endpointID, time.Now())
	require.NoError(t, err)
	return streamImage(item)
}

// A test event goes to the endpoint it names only, even one whose
// event_types do not list it, and never to the operator's bus; without
// hookline's marker, or without an endpoint, it is rejected.
func TestTestEventGoesToItsEndpointOnly(t *testing.T) {
	t.Parallel()
	s := newFakeStore(
		endpoint("t1", "ep_orders", "order.*"),
		endpoint("t1", "ep_all"),
		endpoint("t1", "ep_tests", "hookline.*"),
	)
	q, b := &fakeQueue{}, &fakeBus{}
	forged := image("forged", "t1", map[string]events.DynamoDBAttributeValue{
		outbox.AttrType: events.NewStringAttribute(domain.TestEventType), outbox.AttrEndpointID: events.NewStringAttribute("ep_all"),
	})
	unaddressed := testImage(t, "unaddressed", "t1", "ep_all")
	delete(unaddressed, outbox.AttrEndpointID)
	resp, err := newBusHandler(s, q, b).Handle(context.Background(), streamEvent(testImage(t, "test1", "t1", "ep_orders"), forged, unaddressed))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, q.sent(), 1)
	m := q.sent()[0]
	require.Equal(t, "ep_orders", m.EndpointID)
	require.Equal(t, domain.DeliveryID("t1", "test1", "ep_orders", m.OccurredAt), m.DeliveryID)
	require.Equal(t, domain.TestEventType, m.EventType)
	var data domain.TestEvent
	require.NoError(t, json.Unmarshal(m.Payload, &data))
	require.Equal(t, "ep_orders", data.EndpointID)
	require.Equal(t, domain.TestEventMessage, data.Message)
	require.Empty(t, b.put, "the operator's bus is for operational events, not tests")
	rej := s.Rejections()
	require.Equal(t, outbox.ReasonReservedType, string(rej["forged"].Reason), "a producer's test event is refused")
	require.Equal(t, outbox.ReasonMissingField, string(rej["unaddressed"].Reason))
	require.Equal(t, outbox.AttrEndpointID, rej["unaddressed"].Field)
}

// A tenant being erased (tombstoned) has its new outbox items dropped:
// nothing sent, nothing rejected, with its endpoints still there or gone,
// while another tenant's items in the same batch go out.
func TestErasedTenantItemsDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"endpoints still there", "endpoints erased"} {
		t.Run(name, func(t *testing.T) {
			s, q := newFakeStore(endpoint("gone", "ep_g"), endpoint("kept", "ep_k")), &fakeQueue{}
			s.addTenant("gone")
			s.addTenant("kept")
			require.NoError(t, s.Tombstone(ctx, "gone"))
			if name == "endpoints erased" {
				require.NoError(t, s.DeleteEndpoint(ctx, "gone", "ep_g"))
			}
			named := image("e2", "gone", map[string]events.DynamoDBAttributeValue{outbox.AttrEndpointID: events.NewStringAttribute("ep_zzz")})
			resp, err := newHandler(s, q).Handle(ctx, streamEvent(image("e1", "gone", nil), named, image("e3", "kept", nil)))
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures)
			require.Len(t, q.sent(), 1, "only the other tenant's item is sent")
			require.Equal(t, "ep_k", q.sent()[0].EndpointID)
			require.Empty(t, s.Rejections(), "nothing of the erased tenant is recorded")
		})
	}
}

// Every message goes out in its tenant's message group (message.GroupID),
// not its endpoint's: the fake refuses one without it. A tenant id SQS
// would refuse as a group id (a space, from an outbox item) goes out
// hashed.
func TestMessagesCarryTheirTenantsGroup(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_a"), endpoint("t1", "ep_b"), endpoint("t2", "ep_c"), endpoint("acme corp", "ep_d"))
	q := &fakeQueue{}
	_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e1", "t1", nil), image("e2", "t2", nil), image("e3", "acme corp", nil)))
	require.NoError(t, err)
	require.Len(t, q.sent(), 4)
	groups := map[string]string{}
	for i, m := range q.sent() {
		groups[m.EndpointID] = q.groups()[i]
	}
	require.Equal(t, map[string]string{"ep_a": "t1", "ep_b": "t1", "ep_c": "t2", "ep_d": *message.GroupID("acme corp")}, groups)
	require.NotEqual(t, "acme corp", groups["ep_d"])

	// A sender that leaves the group out is refused, as the rule (not SQS)
	// requires.
	err = message.SendBatch(context.Background(), q, testQueueURL, []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("d"), MessageBody: aws.String(`{"delivery_id":"d","tenant_id":"t1","endpoint_id":"ep_a","event_id":"v","payload":{}}`)},
	})
	require.ErrorContains(t, err, "MessageGroupId")
}

// Only an INSERT is an event. The stream mapping passes INSERT records
// only (its FilterCriteria), but the operator's reprocessing reads parked
// batches back from the stream unfiltered: an update or a TTL removal of
// an outbox item, even one whose image holds a valid event, sends nothing,
// records nothing and fails nothing.
func TestRecordsOtherThanInsertAreNotEvents(t *testing.T) {
	t.Parallel()
	for _, name := range []events.DynamoDBOperationType{events.DynamoDBOperationTypeModify, events.DynamoDBOperationTypeRemove} {
		t.Run(string(name), func(t *testing.T) {
			ev := decodeSample(t)
			rec := ev.Records[0]
			require.Equal(t, "INSERT", rec.EventName, "the sample's first record is a valid event")
			rec.EventName = string(name)
			ev.Records = []events.DynamoDBEventRecord{rec}
			raw, err := json.Marshal(ev)
			require.NoError(t, err)

			s := newFakeStore(endpoint("tenant_sample", "ep_all"))
			q := &fakeQueue{}
			resp := invoke(t, newHandler(s, q), raw)
			require.Empty(t, resp.BatchItemFailures)
			require.Empty(t, q.sent(), "no delivery for a %s record", name)
			require.Empty(t, s.Rejections(), "a %s record is not rejected either", name)
		})
	}
}

// Each message carries its endpoint's revision as read (deliver sends it
// by no older copy of the endpoint): 0 for one never changed.
func TestMessagesCarryTheirEndpointsRevision(t *testing.T) {
	t.Parallel()
	rotated := endpoint("t1", "ep_b")
	rotated.Revision = 3
	s := newFakeStore(endpoint("t1", "ep_a"), rotated)
	q := &fakeQueue{}
	_, err := newHandler(s, q).Handle(context.Background(), streamEvent(image("e1", "t1", nil)))
	require.NoError(t, err)
	got := map[string]int64{}
	for _, m := range q.sent() {
		got[m.EndpointID] = m.EndpointRevision
	}
	require.Equal(t, map[string]int64{"ep_a": 0, "ep_b": 3}, got)
}

// A tenant's messages past LaneAfter in an invocation go to the tenant
// lane; every other tenant's, and the tenant's first LaneAfter, go to the
// delivery queue, so a wide fan-out does not queue ahead of everyone.
// Without a lane everything goes to the delivery queue.
func TestTenantPastItsShareGoesToTheLane(t *testing.T) {
	t.Parallel()
	const laneURL = "https://sqs.us-east-1.amazonaws.com/123456789012/hookline-lane"
	var eps []domain.Endpoint
	for i := range 5 {
		eps = append(eps, endpoint("wide", fmt.Sprintf("ep_w%d", i)))
	}
	eps = append(eps, endpoint("quiet", "ep_q"))
	batch := func() events.DynamoDBEvent {
		return streamEvent(image("w1", "wide", nil), image("q1", "quiet", nil), image("w2", "wide", nil), image("q2", "quiet", nil))
	}
	tenants := func(ms []message.Message) map[string]int {
		n := map[string]int{}
		for _, m := range ms {
			n[m.TenantID]++
		}
		return n
	}

	s, q := newFakeStore(eps...), &fakeQueue{}
	h := newHandler(s, q)
	h.Config.LaneQueueURL, h.Config.LaneAfter = laneURL, 3
	resp, err := h.Handle(context.Background(), batch())
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, map[string]int{"wide": 3, "quiet": 2}, tenants(q.sent()), "the wide tenant's first 3 and every quiet message in the delivery queue")
	var laned []message.Message
	for _, b := range q.fake().Bodies(laneURL) {
		m, err := message.Decode(b)
		require.NoError(t, err)
		laned = append(laned, m)
	}
	require.Equal(t, map[string]int{"wide": 7}, tenants(laned), "the wide tenant's other 7 in the lane")
	all := map[string]bool{}
	for _, m := range append(q.sent(), laned...) {
		require.False(t, all[m.DeliveryID], "each delivery sent once: %s", m.DeliveryID)
		all[m.DeliveryID] = true
	}
	require.Len(t, all, 12)

	// The count is per invocation: the next one starts again.
	_, err = h.Handle(context.Background(), streamEvent(image("w3", "wide", nil)))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"wide": 6, "quiet": 2}, tenants(q.sent()))
	require.Len(t, q.fake().Bodies(laneURL), 9)

	// No lane: all twelve in the delivery queue.
	s, q = newFakeStore(eps...), &fakeQueue{}
	h = newHandler(s, q)
	h.Config.LaneAfter = 3
	_, err = h.Handle(context.Background(), batch())
	require.NoError(t, err)
	require.Equal(t, map[string]int{"wide": 10, "quiet": 2}, tenants(q.sent()))
}
