package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

const testBus = "hookline-ops-bus"

// fakeBus is EventBridge's PutEvents as AWS answers it: a request over ten
// entries or 256 KiB is refused whole (CheckPut); an entry without a bus,
// source or detail-type, or whose detail is not a JSON object, fails alone;
// failEntry may fail an entry (a throttled one).
type fakeBus struct {
	mu       sync.Mutex
	put      []ebtypes.PutEventsRequestEntry
	requests [][]string // the event ids of each request EventBridge accepted
	fail     bool       // every request fails
	// failEntry, if set, names the error code an entry fails with ("" to
	// accept it).
	failEntry func(OperatorDetail) string
}

func (b *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return nil, errBoom
	}
	if err := CheckPut(in.Entries); err != nil {
		return nil, err
	}
	out := &eventbridge.PutEventsOutput{}
	var ids []string
	for i, e := range in.Entries {
		var d OperatorDetail
		code := ""
		switch err := json.Unmarshal([]byte(aws.ToString(e.Detail)), &d); {
		case err != nil || !strings.HasPrefix(aws.ToString(e.Detail), "{"):
			code = "MalformedDetail"
		case aws.ToString(e.EventBusName) == "" || aws.ToString(e.Source) == "" || aws.ToString(e.DetailType) == "":
			code = "InvalidArgument"
		case b.failEntry != nil:
			code = b.failEntry(d)
		}
		if code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String(code), ErrorMessage: aws.String("entry failed")})
			continue
		}
		b.put = append(b.put, e)
		ids = append(ids, d.ID)
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String(fmt.Sprintf("eb-%d", i))})
	}
	b.requests = append(b.requests, ids)
	return out, nil
}

// details are the details of the entries put, in order.
func (b *fakeBus) details(t *testing.T) []OperatorDetail {
	t.Helper()
	var out []OperatorDetail
	for _, e := range b.put {
		var d OperatorDetail
		require.NoError(t, json.Unmarshal([]byte(*e.Detail), &d))
		out = append(out, d)
	}
	return out
}

// count is how many times each event id was put.
func (b *fakeBus) count(t *testing.T) map[string]int {
	n := map[string]int{}
	for _, d := range b.details(t) {
		n[d.ID]++
	}
	return n
}

func newBusHandler(s *testStore, q *fakeQueue, b *fakeBus) *Handler {
	h := newHandler(s, q)
	h.Bus, h.Config.BusName = b, testBus
	h.Config.Sleep = func(context.Context, time.Duration) error { return nil }
	return h
}

const testParkURL = "https://sqs.example/enqueue-failures"

// newParkingHandler is newBusHandler with the enqueue failure queue set,
// recording the pauses between tries.
func newParkingHandler(s *testStore, q *fakeQueue, b *fakeBus, out *bytes.Buffer) (*Handler, *[]time.Duration) {
	h := newBusHandler(s, q, b)
	q.parkURL, h.Config.ParkQueueURL = testParkURL, testParkURL
	h.Metrics = metrics.New(out)
	var pauses []time.Duration
	h.Config.Sleep = func(_ context.Context, d time.Duration) error {
		pauses = append(pauses, d)
		return nil
	}
	return h, &pauses
}

// opImage is an outbox item of an operational event with the payload p, as
// hookline's emitter writes it.
func busImage(t *testing.T, id, tenant, typ string, p any) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	return image(id, tenant, map[string]events.DynamoDBAttributeValue{
		outbox.AttrType:    events.NewStringAttribute(typ),
		outbox.AttrPayload: events.NewStringAttribute(string(raw)),
		// The emitter's marker: enqueue accepts a reserved type only with it.
		opevent.AttrOrigin: events.NewStringAttribute(opevent.Origin),
	})
}

func disabledPayload(tenant, ep string) domain.OpEndpointEvent {
	return domain.OpEndpointEvent{TenantID: tenant, EndpointID: ep, URL: "https://example.com/" + ep, ConsecutiveFailures: 50,
		Reason: domain.DisableReason("consecutive_failures"), LastStatus: 503, At: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
}

// The batch's operational events reach the operator's bus, each once, in
// stream order, as the documented envelope; business events do not; the
// fan-out to the tenant's endpoints happens as before.
func TestOperationalEventsReachTheOperatorsBus(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("t1", "ep_biz", "order.created"), endpoint("t1", "ep_ops", "endpoint.*", domain.OpDeliveryDead))
	s.addTenant("t2") // no endpoint: the operator still hears of its events
	q, b := &fakeQueue{}, &fakeBus{}
	dead := domain.OpDeliveryDeadEvent{TenantID: "t1", EndpointID: "ep_biz", Count: 1,
		Deaths:  []domain.OpDeath{{DeliveryID: "d1", EventID: "e0", EventType: "order.created", Reason: "rejected_400", Attempts: 1}},
		Reasons: map[domain.DeadReason]int{"rejected_400": 1}}
	ev := streamEvent(
		image("e0", "t1", nil),
		busImage(t, "op1", "t1", domain.OpEndpointDisabled, disabledPayload("t1", "ep_biz")),
		busImage(t, "op2", "t1", domain.OpDeliveryDead, dead),
		busImage(t, "op3", "t2", domain.OpEndpointFailing, disabledPayload("t2", "ep_x")),
	)
	_, err := newBusHandler(s, q, b).Handle(context.Background(), ev)
	require.NoError(t, err)

	require.Len(t, b.requests, 1, "one request for the batch's three operational events")
	require.Len(t, b.put, 3)
	for i, want := range []struct{ id, tenant, typ string }{{"op1", "t1", domain.OpEndpointDisabled}, {"op2", "t1", domain.OpDeliveryDead}, {"op3", "t2", domain.OpEndpointFailing}} {
		e := b.put[i]
		require.Equal(t, testBus, aws.ToString(e.EventBusName))
		require.Equal(t, EventSource, aws.ToString(e.Source))
		require.Equal(t, want.typ, aws.ToString(e.DetailType), "the detail-type is the event type")
		require.Equal(t, time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC), aws.ToTime(e.Time), "the event's time is when it occurred")
		var d OperatorDetail
		require.NoError(t, json.Unmarshal([]byte(*e.Detail), &d))
		require.Equal(t, want.id, d.ID)
		require.Equal(t, want.tenant, d.TenantID)
		require.Equal(t, want.typ, d.Type)
		require.Equal(t, "2026-11-30T01:00:00Z", d.OccurredAt.Format(time.RFC3339Nano))
	}
	var got domain.OpEndpointEvent
	require.NoError(t, json.Unmarshal(b.details(t)[0].Data, &got))
	require.Equal(t, disabledPayload("t1", "ep_biz"), got, "data is the payload, unchanged")
	require.JSONEq(t, `{"id":"op2","tenant_id":"t1","type":"delivery.dead","occurred_at":"2026-11-30T01:00:00Z",
		"data":{"tenant_id":"t1","endpoint_id":"ep_biz","window_start":"0001-01-01T00:00:00Z","window_end":"0001-01-01T00:00:00Z","count":1,
		"deaths":[{"delivery_id":"d1","event_id":"e0","event_type":"order.created","reason":"rejected_400","attempts":1}],"reasons":{"rejected_400":1}}}`,
		*b.put[1].Detail, "the documented detail document")

	sent := map[string]string{}
	for _, m := range q.sent() {
		sent[m.EventID] = m.EndpointID
	}
	require.Equal(t, "ep_biz", sent["e0"], "the business event is fanned out as before")
	require.Equal(t, "ep_ops", sent["op1"], "an operational event still reaches the tenant's endpoint that names it")
}

// PutEvents takes ten entries and 256 KiB a request: the events are put in
// as few requests as that allows, in stream order, the fake refusing any
// request past either limit.
func TestOperationalEventsAreBatchedWithinPutEventsLimits(t *testing.T) {
	t.Parallel()
	t.Run("ten a request", func(t *testing.T) {
		s, q, b := newFakeStore(), &fakeQueue{}, &fakeBus{}
		s.addTenant("t1")
		var imgs []map[string]events.DynamoDBAttributeValue
		for i := range 25 {
			imgs = append(imgs, busImage(t, fmt.Sprintf("op%02d", i), "t1", domain.OpEndpointFailing, disabledPayload("t1", "ep")))
		}
		_, err := newBusHandler(s, q, b).Handle(context.Background(), streamEvent(imgs...))
		require.NoError(t, err)
		require.Len(t, b.requests, 3, "25 events: 10 + 10 + 5")
		require.Len(t, b.requests[0], 10)
		for i, d := range b.details(t) {
			require.Equal(t, fmt.Sprintf("op%02d", i), d.ID, "stream order")
		}
	})
	t.Run("split before 256 KiB", func(t *testing.T) {
		s, q, b := newFakeStore(), &fakeQueue{}, &fakeBus{}
		s.addTenant("t1")
		big := struct{ Pad string }{strings.Repeat("a", 100<<10)}
		var imgs []map[string]events.DynamoDBAttributeValue
		for i := range 5 {
			imgs = append(imgs, busImage(t, fmt.Sprintf("op%d", i), "t1", domain.OpDeliveryDead, big))
		}
		imgs = append(imgs, busImage(t, "small", "t1", domain.OpDeliveryDead, struct{}{}))
		_, err := newBusHandler(s, q, b).Handle(context.Background(), streamEvent(imgs...))
		require.NoError(t, err, "the fake refuses a request over 256 KiB, as EventBridge does")
		require.Equal(t, [][]string{{"op0", "op1"}, {"op2", "op3"}, {"op4", "small"}}, b.requests)
	})
	t.Run("the largest payload fits a request of its own", func(t *testing.T) {
		// The worst case for the detail's size: a payload of the largest
		// size the outbox accepts, of characters JSON might escape.
		for _, fill := range []string{"<", "&", "\u2028", "é"} {
			pad := strings.Repeat(fill, (outbox.MaxPayloadBytes-2)/len(fill))
			ev := outbox.Event{ID: strings.Repeat("i", outbox.MaxIDBytes), TenantID: strings.Repeat("t", outbox.MaxIDBytes),
				Type: domain.OpDeliveryDead, Payload: json.RawMessage(`"` + pad + `"`), OccurredAt: time.Now()}
			require.LessOrEqual(t, len(ev.Payload), outbox.MaxPayloadBytes)
			e, err := operatorEntry(testBus, ev)
			require.NoError(t, err)
			require.NoError(t, CheckPut([]ebtypes.PutEventsRequestEntry{e}), "fill %q: %d bytes", fill, PutEntrySize(e))
		}
	})
}

// Without a failure queue to park on, a request that keeps failing, or an
// entry EventBridge keeps refusing, fails the invocation naming the
// records, before anything is sent to the delivery queue; the stream's
// retry puts every operational event of the batch again (the ones already
// put twice, with the same id), and loses none.
func TestFailedPutsAreRetriedWithoutLoss(t *testing.T) {
	t.Parallel()
	imgs := func(t *testing.T) events.DynamoDBEvent {
		return streamEvent(
			image("e0", "t1", nil),
			busImage(t, "op1", "t1", domain.OpEndpointDisabled, disabledPayload("t1", "ep_a")),
			busImage(t, "op2", "t1", domain.OpEndpointRecovered, disabledPayload("t1", "ep_a")),
			busImage(t, "op3", "t1", domain.OpEndpointFailing, disabledPayload("t1", "ep_a")),
		)
	}
	t.Run("the request fails", func(t *testing.T) {
		s, q, b := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{}, &fakeBus{fail: true}
		h := newBusHandler(s, q, b)
		ev := imgs(t)
		_, err := h.Handle(context.Background(), ev)
		require.ErrorIs(t, err, errBoom)
		require.ErrorContains(t, err, "records 9"+fmt.Sprintf("%020d", 1)+" to 9"+fmt.Sprintf("%020d", 3))
		require.Empty(t, q.sent(), "nothing fanned out before the operator's events are put")
		b.fail = false
		_, err = h.Handle(context.Background(), ev)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"op1": 1, "op2": 1, "op3": 1}, b.count(t))
		require.NotEmpty(t, q.sent())
	})
	t.Run("an entry fails", func(t *testing.T) {
		s, q, b := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{}, &fakeBus{}
		b.failEntry = func(d OperatorDetail) string {
			if d.ID == "op2" {
				return "ThrottlingException"
			}
			return ""
		}
		h := newBusHandler(s, q, b)
		ev := imgs(t)
		_, err := h.Handle(context.Background(), ev)
		require.ErrorContains(t, err, "record 9"+fmt.Sprintf("%020d", 2)+": put operational event op2")
		require.ErrorContains(t, err, "ThrottlingException")
		require.Empty(t, q.sent())
		b.failEntry = nil
		_, err = h.Handle(context.Background(), ev)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"op1": 2, "op2": 1, "op3": 2}, b.count(t), "at least once: the retry puts the accepted ones again")
	})
	t.Run("the fan-out fails after the put", func(t *testing.T) {
		s, q, b := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{fail: true}, &fakeBus{}
		h := newBusHandler(s, q, b)
		ev := imgs(t)
		_, err := h.Handle(context.Background(), ev)
		require.ErrorIs(t, err, errBoom)
		q.fail = false
		_, err = h.Handle(context.Background(), ev)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"op1": 2, "op2": 2, "op3": 2}, b.count(t), "put again by the retry, same ids")
		require.Equal(t, 1, q.count()[domain.DeliveryID("t1", "e0", "ep_a", imageAt)])
	})
}

// A malformed operational item is rejected as any other and never reaches
// the bus; one repeated in a batch is put once.
func TestOnlyAcceptedOperationalEventsArePutOnce(t *testing.T) {
	t.Parallel()
	s, q, b := newFakeStore(), &fakeQueue{}, &fakeBus{}
	s.addTenant("t1")
	bad := busImage(t, "op_bad", "t1", domain.OpEndpointDisabled, disabledPayload("t1", "ep"))
	bad[outbox.AttrPayload] = events.NewStringAttribute(`{"broken"`)
	good := busImage(t, "op_ok", "t1", domain.OpEndpointDisabled, disabledPayload("t1", "ep"))
	_, err := newBusHandler(s, q, b).Handle(context.Background(), streamEvent(bad, good, good))
	require.NoError(t, err)
	require.Equal(t, map[string]int{"op_ok": 1}, b.count(t))
	require.Contains(t, s.Rejections(), "op_bad")
}

// parkBatch is a business event and three operational events of t1, whose
// endpoint ep_a takes every type (and so none of the operational ones).
func parkBatch(t *testing.T) events.DynamoDBEvent {
	return streamEvent(
		image("e0", "t1", nil),
		busImage(t, "op1", "t1", domain.OpEndpointDisabled, disabledPayload("t1", "ep_a")),
		busImage(t, "op2", "t1", domain.OpEndpointRecovered, disabledPayload("t1", "ep_a")),
		busImage(t, "op3", "t1", domain.OpEndpointFailing, disabledPayload("t1", "ep_a")),
	)
}

// parkedCount is the OperatorEventsParked value the invocation printed (0
// for none).
func parkedCount(t *testing.T, out *bytes.Buffer) float64 {
	t.Helper()
	n := 0.0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &doc))
		if v, ok := doc[metrics.OperatorEventsParked].(float64); ok {
			n += v
		}
	}
	return n
}

// A PutEvents that fails is tried again within the invocation, only for
// the events not accepted, after 100 ms and then 200 ms; one that fails
// three times parks its events on the enqueue failure queue, counted
// (OperatorEventsParked), and the invocation goes on: the deliveries are
// sent, the batch is not failed. A parked message is the entry, whole,
// which ParseParked reads back into the same PutEvents entry.
func TestFailingPutsAreRetriedThenParked(t *testing.T) {
	t.Parallel()
	t.Run("a throttle that passes within the tries", func(t *testing.T) {
		var out bytes.Buffer
		s, q, b := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{}, &fakeBus{}
		calls := 0
		b.failEntry = func(d OperatorDetail) string {
			if d.ID == "op2" {
				if calls++; calls < 3 {
					return "ThrottlingException"
				}
			}
			return ""
		}
		h, pauses := newParkingHandler(s, q, b, &out)
		_, err := h.Handle(context.Background(), parkBatch(t))
		require.NoError(t, err)
		require.Equal(t, map[string]int{"op1": 1, "op2": 1, "op3": 1}, b.count(t), "only the refused entry is put again")
		require.Equal(t, [][]string{{"op1", "op3"}, nil, {"op2"}}, b.requests)
		require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, *pauses)
		require.Empty(t, q.parked())
		require.Zero(t, parkedCount(t, &out))
	})
	for _, tc := range []struct {
		name   string
		bus    *fakeBus
		parked []string
		put    map[string]int
	}{
		{"the bus is gone (every request fails)", &fakeBus{fail: true}, []string{"op1", "op2", "op3"}, map[string]int{}},
		{"an entry keeps failing", &fakeBus{failEntry: func(d OperatorDetail) string {
			if d.ID == "op2" {
				return "InternalFailure"
			}
			return ""
		}}, []string{"op2"}, map[string]int{"op1": 1, "op3": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			s, q := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{}
			h, pauses := newParkingHandler(s, q, tc.bus, &out)
			ev := parkBatch(t)
			_, err := h.Handle(context.Background(), ev)
			require.NoError(t, err, "the batch is not failed")
			require.Equal(t, 1, q.count()[domain.DeliveryID("t1", "e0", "ep_a", imageAt)], "deliveries proceed")
			require.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, *pauses, "three tries")
			require.Equal(t, tc.put, b2m(tc.bus.count(t)))
			require.Len(t, q.parked(), len(tc.parked))
			require.Equal(t, float64(len(tc.parked)), parkedCount(t, &out))
			for i, body := range q.parked() {
				p, ok, err := ParseParked(body)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, ParkedKind, p.Parked)
				require.NotEmpty(t, p.Error)
				var d OperatorDetail
				require.NoError(t, json.Unmarshal(p.Detail, &d))
				require.Equal(t, tc.parked[i], d.ID)
				want, err := operatorEntry(testBus, outbox.Event{ID: d.ID, TenantID: d.TenantID, Type: d.Type, OccurredAt: d.OccurredAt, Payload: d.Data})
				require.NoError(t, err)
				require.Equal(t, want, p.Entry(), "the entry enqueue tried, whole")
			}
		})
	}
	t.Run("a detail with HTML characters is kept byte for byte", func(t *testing.T) {
		var out bytes.Buffer
		s, q := newFakeStore(), &fakeQueue{}
		s.addTenant("t1")
		h, _ := newParkingHandler(s, q, &fakeBus{fail: true}, &out)
		img := busImage(t, "op<&>", "t1", domain.OpDeliveryDead, struct{}{})
		img[outbox.AttrPayload] = events.NewStringAttribute(`{"note":"<b>&</b>"}`)
		_, err := h.Handle(context.Background(), streamEvent(img))
		require.NoError(t, err)
		require.Len(t, q.parked(), 1)
		p, _, err := ParseParked(q.parked()[0])
		require.NoError(t, err)
		require.Contains(t, string(p.Detail), `"<b>&</b>"`)
		require.NoError(t, CheckPut([]ebtypes.PutEventsRequestEntry{p.Entry()}))
	})
	t.Run("when parking fails too, the batch fails and nothing is lost", func(t *testing.T) {
		var out bytes.Buffer
		s, q, b := newFakeStore(endpoint("t1", "ep_a")), &fakeQueue{parkFail: true}, &fakeBus{fail: true}
		h, _ := newParkingHandler(s, q, b, &out)
		ev := parkBatch(t)
		_, err := h.Handle(context.Background(), ev)
		require.ErrorIs(t, err, errBoom)
		require.ErrorContains(t, err, "park 3 operational events")
		require.Empty(t, q.sent(), "nothing fanned out: the stream retries the batch")
		require.Zero(t, parkedCount(t, &out))
		q.parkFail, b.fail = false, false
		_, err = h.Handle(context.Background(), ev)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"op1": 1, "op2": 1, "op3": 1}, b.count(t))
	})
}

// b2m is m, or an empty map for nil.
func b2m(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// ParseParked tells a parked operational event from the other messages of
// the enqueue failure queue (Lambda's stream failure records), and refuses
// a parked message it cannot put again.
func TestParseParked(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"DDBStreamBatchInfo":{"shardId":"s"}}`, `not json`, `[]`, `{"hookline_parked":""}`} {
		_, ok, err := ParseParked(body)
		require.False(t, ok, body)
		require.NoError(t, err, body)
	}
	for _, body := range []string{`{"hookline_parked":"other"}`, `{"hookline_parked":"operator_event","bus":"b","detail_type":"x"}`,
		`{"hookline_parked":"operator_event","detail_type":"x","detail":{}}`, `{"hookline_parked":"operator_event","bus":"b","detail_type":"x","detail":[1]}`} {
		_, ok, err := ParseParked(body)
		require.True(t, ok, body)
		require.Error(t, err, body)
	}
}
