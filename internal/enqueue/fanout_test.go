package enqueue

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/stretchr/testify/require"
)

// deferringHandler is newHandler with the lane and the fan-out queue, a
// tenant's share being lanes messages an invocation.
func deferringHandler(s *testStore, q *fakeQueue, share int) *Handler {
	h := newHandler(s, q)
	h.Config.LaneQueueURL, h.Config.FanOutQueueURL, h.Config.LaneAfter = testLaneURL, testFanOutURL, share
	return h
}

// fanOutEvent is the fan-out queue's messages as its mapping hands them
// over, and their bodies decoded.
func fanOutEvent(t *testing.T, q *fakeQueue) (events.SQSEvent, []deferred) {
	t.Helper()
	var ev events.SQSEvent
	var ds []deferred
	for i, b := range q.fake().Bodies(testFanOutURL) {
		d, err := decodeDeferred(b)
		require.NoError(t, err)
		ds = append(ds, d)
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), Body: b, EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:fanout"})
	}
	return ev, ds
}

// decoded is the delivery messages sent to url.
func decoded(t *testing.T, q *fakeQueue, url string) []message.Message {
	t.Helper()
	var out []message.Message
	for _, b := range q.fake().Bodies(url) {
		m, err := message.Decode(b)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

func byTenant(ms []message.Message) map[string]int {
	n := map[string]int{}
	for _, m := range ms {
		n[m.TenantID]++
	}
	return n
}

// A tenant's fan-out past its share of a stream invocation leaves the
// batch as one deferred fan-out message a record, which HandleFanOut
// fans out to the tenant lane: the stream's batch sends only the tenant's
// share and the other tenants' deliveries, and every delivery is sent
// exactly once in all.
func TestFanOutPastTheShareIsDeferred(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := range 5 {
		eps = append(eps, endpoint("wide", fmt.Sprintf("ep_w%d", i)))
	}
	eps = append(eps, endpoint("quiet", "ep_q"))
	s, q := newFakeStore(eps...), &fakeQueue{}
	h := deferringHandler(s, q, 3)
	resp, err := h.Handle(context.Background(), streamEvent(image("w1", "wide", nil), image("q1", "quiet", nil), image("w2", "wide", nil)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, map[string]int{"wide": 3, "quiet": 1}, byTenant(q.sent()), "the wide tenant's share inline, and the quiet tenant's event")
	require.Empty(t, q.fake().Bodies(testLaneURL), "the stream sends nothing to the lane itself")
	ev, ds := fanOutEvent(t, q)
	require.Len(t, ds, 2, "one deferred fan-out a record past the share")
	require.Equal(t, "w1", ds[0].Event.ID)
	require.Equal(t, "ep_w2", ds[0].After, "w1's endpoints after its three inline ones")
	require.Equal(t, "w2", ds[1].Event.ID)
	require.Empty(t, ds[1].After, "all of w2's: the share was spent")
	require.JSONEq(t, `{"ok":true}`, string(ds[1].Event.Payload), "the event travels whole")

	out, err := h.HandleFanOut(context.Background(), ev)
	require.NoError(t, err)
	require.Empty(t, out.BatchItemFailures)
	laned := decoded(t, q, testLaneURL)
	require.Equal(t, map[string]int{"wide": 7}, byTenant(laned), "w1's last two and w2's five, to the lane")
	seen := map[string]bool{}
	for _, m := range append(q.sent(), laned...) {
		require.False(t, seen[m.DeliveryID], "sent once: %s", m.DeliveryID)
		seen[m.DeliveryID] = true
	}
	require.Len(t, seen, 11)

	// Handled again (SQS gives a message back): what was attempted is
	// not sent again.
	s.delivered(laned[0])
	_, err = h.HandleFanOut(context.Background(), ev)
	require.NoError(t, err)
	require.Len(t, decoded(t, q, testLaneURL), 7+6)
}

// A record past the tenant's share with one endpoint left is not
// deferred: its one message goes to the tenant lane from the stream's
// batch, what its deferral would have sent, without the second hop (the
// fan-out queue and another enqueue invocation). A record with more left
// is deferred as before.
func TestOneMessagePastTheShareGoesToTheLaneDirectly(t *testing.T) {
	t.Parallel()
	s, q := newFakeStore(endpoint("narrow", "ep_n"), endpoint("wide", "ep_w0"), endpoint("wide", "ep_w1")), &fakeQueue{}
	h := deferringHandler(s, q, 3)
	var recs []map[string]events.DynamoDBAttributeValue
	for i := range 5 {
		recs = append(recs, image(fmt.Sprintf("n%d", i), "narrow", nil))
	}
	for i := range 3 {
		recs = append(recs, image(fmt.Sprintf("w%d", i), "wide", nil))
	}
	resp, err := h.Handle(context.Background(), streamEvent(recs...))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, map[string]int{"narrow": 3, "wide": 3}, byTenant(q.sent()), "each tenant's share to the delivery queue")
	laned := decoded(t, q, testLaneURL)
	require.Equal(t, map[string]int{"narrow": 2, "wide": 1}, byTenant(laned), "the narrow tenant's last two, and w1's last endpoint, to the lane at once")
	_, ds := fanOutEvent(t, q)
	require.Len(t, ds, 1, "only w2, two endpoints past the share, is deferred")
	require.Equal(t, "w2", ds[0].Event.ID)
	require.Empty(t, ds[0].After)
	seen := map[string]bool{}
	for _, m := range append(q.sent(), laned...) {
		require.False(t, seen[m.DeliveryID], "sent once: %s", m.DeliveryID)
		seen[m.DeliveryID] = true
	}
	require.Len(t, seen, 9, "5 narrow, and the wide tenant's 4 not deferred")
}

// Filter matching counts against the share too: once a tenant's filters
// have spent InlineWork of the invocation, the rest of its records' fan-out
// is deferred, and matched there within the record's full budget, so the
// filters decide it all the same.
func TestCostlyFiltersAreDeferredAndStillDecide(t *testing.T) {
	t.Parallel()
	eps := []domain.Endpoint{
		filteredEndpoint("costly", "ep_a", orPrefixes("a", 40)),
		filteredEndpoint("costly", "ep_b", `{"a":["match"]}`),
		endpoint("quiet", "ep_q"),
	}
	s, q := newFakeStore(eps...), &fakeQueue{}
	h := deferringHandler(s, q, 100)
	h.Config.InlineWork = 1000
	payload := `{"a":["match",` + strings.TrimSuffix(strings.Repeat(`"xxxxxxxxxxxxxxxxxxxx",`, 500), ",") + `]}`
	resp, err := h.Handle(context.Background(), streamEvent(payloadImage("c1", "costly", payload), image("q1", "quiet", nil)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Equal(t, map[string]int{"quiet": 1}, byTenant(q.sent()))
	ev, ds := fanOutEvent(t, q)
	require.Len(t, ds, 1)
	require.Empty(t, ds[0].After, "the first filter ran out of the share")
	_, err = h.HandleFanOut(context.Background(), ev)
	require.NoError(t, err)
	laned := decoded(t, q, testLaneURL)
	require.Len(t, laned, 1, "ep_a's prefixes match no leaf; ep_b's exact value does")
	require.Equal(t, "ep_b", laned[0].EndpointID)
}

// A deferred fan-out that cannot be read, or whose sends fail, comes back
// (a batch item failure): SQS parks it after ten receives, never drops it.
// One of a tenant being erased is dropped, as its stream records are.
func TestDeferredFanOutFailuresComeBack(t *testing.T) {
	t.Parallel()
	var eps []domain.Endpoint
	for i := range 3 {
		eps = append(eps, endpoint("wide", fmt.Sprintf("ep_w%d", i)))
	}
	s, q := newFakeStore(eps...), &fakeQueue{}
	h := deferringHandler(s, q, 1)
	_, err := h.Handle(context.Background(), streamEvent(image("w1", "wide", nil)))
	require.NoError(t, err)
	ev, _ := fanOutEvent(t, q)
	ev.Records[0].ReceiptHandle, ev.Records[0].Attributes = "rh0", map[string]string{"ApproximateReceiveCount": "3"}
	ev.Records = append(ev.Records, events.SQSMessage{MessageId: "bad", ReceiptHandle: "rhbad", Body: `{"kind":"something else"}`,
		Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	vis := &recordedVisibility{}
	h.Visibility = vis

	s.failOn = "load"
	out, err := h.HandleFanOut(context.Background(), ev)
	require.NoError(t, err)
	var failed []string
	for _, f := range out.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	require.ElementsMatch(t, []string{"m0", "bad"}, failed)
	require.Empty(t, q.fake().Bodies(testLaneURL))
	require.Equal(t, map[string]int32{"rh0": 4, "rhbad": 1}, vis.set, "back in 2^(receives-1) s, not the queue's visibility timeout")

	s.failOn = ""
	require.NoError(t, s.Tombstone(context.Background(), "wide"))
	out, err = h.HandleFanOut(context.Background(), events.SQSEvent{Records: ev.Records[:1]})
	require.NoError(t, err)
	require.Empty(t, out.BatchItemFailures)
	require.Empty(t, q.fake().Bodies(testLaneURL), "the erased tenant's fan-out dropped")
}

// recordedVisibility records the visibility each receipt handle was given.
type recordedVisibility struct{ set map[string]int32 }

func (v *recordedVisibility) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	if v.set == nil {
		v.set = map[string]int32{}
	}
	if aws.ToString(in.QueueUrl) != testFanOutURL {
		return nil, fmt.Errorf("visibility changed on %s, not the fan-out queue", aws.ToString(in.QueueUrl))
	}
	for _, e := range in.Entries {
		v.set[aws.ToString(e.ReceiptHandle)] = e.VisibilityTimeout
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}
