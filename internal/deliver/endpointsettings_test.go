package deliver

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/stretchr/testify/require"
)

// endpointMessage is sqsMessage for another endpoint of t1's.
func endpointMessage(t *testing.T, id, endpointID, receiveCount string, occurred time.Time) events.SQSMessage {
	t.Helper()
	body, err := json.Marshal(message.Message{
		DeliveryID: id, TenantID: "t1", EndpointID: endpointID, EventID: "evt_" + id, EventType: "order.created",
		OccurredAt: occurred, Payload: json.RawMessage(`{"n":1}`),
	})
	require.NoError(t, err)
	return events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": receiveCount}}
}

// An endpoint's own schedule spaces its retries and dead-letters it after
// its last attempt, explicitly (the queue's maxReceiveCount is the stack's
// 3 attempts), while an endpoint without one keeps the stack's.
func TestEndpointScheduleSpacesRetriesAndDeadLetters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	own := f.store.endpoint("t1/ep_1")
	own.EndpointID, own.RetrySchedule = "ep_2", []int{2} // two attempts: at once, and 2 s later
	own.SealedSecrets = []string{f.seal(t, "t1", "ep_2", f.secret)}
	f.store.setEndpoint(own)
	occurred := f.now.Add(-time.Minute)

	// The first attempts: the stack's endpoint waits 10 s, ep_2 2 s.
	stackMsg, ownMsg := sqsMessage(t, "d1", "1", occurred), endpointMessage(t, "d2", "ep_2", "1", occurred)
	require.Equal(t, []string{"m_d2"}, f.run(t, stackMsg, ownMsg), "ep_2's 2 s (HopAfter) waits in flight; d1's 10 s as a new message")
	d, hopped := f.retryDelay(t, "d1")
	require.True(t, hopped)
	require.Equal(t, int32(10), d)
	d, hopped = f.retryDelay(t, "d2")
	require.False(t, hopped)
	require.Equal(t, int32(2), d)

	// The second: the stack's waits 60 s; ep_2's last is dead-lettered
	// here, not handed to the redrive (which would take a third receive),
	// and was not marked dead before its request.
	stackMsg, ownMsg = sqsMessage(t, "d1", "2", occurred), endpointMessage(t, "d2", "ep_2", "2", occurred)
	require.Empty(t, f.run(t, stackMsg, ownMsg))
	d, hopped = f.retryDelay(t, "d1")
	require.True(t, hopped)
	require.Equal(t, int32(60), d)
	require.Equal(t, domain.StatePending, f.store.outcomes["d1"][1].State)
	require.Equal(t, domain.StateDead, f.store.outcomes["d2"][1].State)
	require.Equal(t, domain.ReasonAttemptsExhausted, f.store.outcomes["d2"][1].DeadReason)
	require.Equal(t, []string{ownMsg.Body}, f.queue.dlq)
	require.Equal(t, []domain.DeadReason{domain.ReasonAttemptsExhausted}, f.queue.dlqReason)
	require.False(t, f.store.isMarked("d2"), "no death recorded first: the consumer dead-letters it")
	require.Equal(t, int32(4), f.hits.Load())

	// Should its outcome have been lost, ep_2's message comes back a third
	// time: dead untried, no request. The stack's third is its last: the
	// death recorded first (should the function stop, SQS's redrive takes
	// the message), then dead-lettered.
	stackMsg, ownMsg = sqsMessage(t, "d1", "3", occurred), endpointMessage(t, "d2x", "ep_2", "3", occurred)
	require.Empty(t, f.run(t, stackMsg, ownMsg))
	require.Equal(t, int32(5), f.hits.Load(), "only the stack endpoint's last attempt is sent")
	require.True(t, f.store.isMarked("d1"))
	_, set := f.queue.visibility["rh_d1"]
	require.False(t, set, "the stack's last attempt is not left to the redrive")
	require.Len(t, f.queue.dlq, 3)
	require.Equal(t, []domain.DeadReason{domain.ReasonAttemptsExhausted, domain.ReasonAttemptsExhausted, domain.ReasonAttemptsExhausted}, f.queue.dlqReason)
}

// An endpoint's own timeout bounds its requests; another endpoint keeps the
// sender's.
func TestEndpointTimeoutBoundsItsRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(1500 * time.Millisecond) // within the sender's 2 s
		w.WriteHeader(200)
	})
	quick := f.store.endpoint("t1/ep_1")
	quick.EndpointID, quick.TimeoutSeconds = "ep_2", 1
	quick.SealedSecrets = []string{f.seal(t, "t1", "ep_2", f.secret)}
	f.store.setEndpoint(quick)
	occurred := f.now.Add(-time.Minute)

	failed := f.run(t, sqsMessage(t, "d1", "1", occurred), endpointMessage(t, "d2", "ep_2", "1", occurred))
	require.Empty(t, failed)
	require.Equal(t, domain.StateDelivered, f.store.outcomes["d1"][0].State)
	a := f.store.attempts["d2"][0]
	require.Equal(t, "timeout", a.Error)
	require.Less(t, a.LatencyMS, int64(1400))
	d, hopped := f.retryDelay(t, "d2")
	require.True(t, hopped)
	require.Equal(t, int32(10), d, "a timeout is retried on the schedule")
}
