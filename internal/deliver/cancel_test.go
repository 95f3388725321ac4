package deliver

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/stretchr/testify/require"
)

// cancelledMessage is d1's message, replayed at replayedAt when it is not
// nil.
func cancelledMessage(t *testing.T, f *fixture, replayedAt *time.Time) events.SQSMessage {
	t.Helper()
	m := sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))
	if replayedAt != nil {
		var msg message.Message
		require.NoError(t, json.Unmarshal([]byte(m.Body), &msg))
		msg.ReplayedAt = replayedAt
		b, err := json.Marshal(msg)
		require.NoError(t, err)
		m.Body = string(b)
	}
	return m
}

// A message whose delivery is cancelled is deleted unsent, its record left
// as it is; a replay of it made after the cancel is attempted.
func TestCancelledDeliveryDropped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		replayed time.Duration // after the cancel; 0: not a replay
		sent     bool
	}{
		{"not a replay: dropped", 0, false},
		{"a replay made before the cancel: dropped", -time.Second, false},
		{"a replay made after the cancel: attempted", time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
			ctx := context.Background()
			cancelAt := f.now.Add(-30 * time.Second)
			d := domain.Delivery{DeliveryID: "d1", TenantID: "t1", EndpointID: "ep_1", EventID: "evt_d1", EventType: "order.created"}
			_, ok, err := f.store.CancelDelivery(ctx, d, "cj_1", cancelAt)
			require.NoError(t, err)
			require.True(t, ok)
			var at *time.Time
			if tc.replayed != 0 {
				r := cancelAt.Add(tc.replayed)
				at = &r
			}
			failed := f.run(t, cancelledMessage(t, f, at))
			require.Empty(t, failed, "the message is deleted")
			got, err := f.store.Delivery(ctx, "d1")
			require.NoError(t, err)
			if !tc.sent {
				require.Zero(t, f.hits.Load(), "no request reaches the receiver")
				require.Empty(t, f.store.outcomes, "nothing is recorded")
				require.Empty(t, f.queue.dlq)
				require.Equal(t, domain.StateCancelled, got.State)
				return
			}
			require.Equal(t, int32(1), f.hits.Load())
			require.Equal(t, domain.StateDelivered, got.State, "the replay revived it")
		})
	}
}

// The race of a cancel with an attempt under way: the cancel lands while
// the receiver holds the request. The cancel wins: the attempt is logged
// and counted, the delivery stays cancelled, and the message, hidden for
// its retry, is dropped unsent when it comes back. An attempt that records
// first wins instead: the cancel leaves the delivery delivered.
func TestCancelRacesAnAttempt(t *testing.T) {
	t.Parallel()
	t.Run("the cancel lands during the attempt: it wins", func(t *testing.T) {
		var f *fixture
		f = newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
			d := domain.Delivery{DeliveryID: "d1", TenantID: "t1", EndpointID: "ep_1", EventID: "evt_d1", EventType: "order.created"}
			if cur, err := f.store.Delivery(context.Background(), "d1"); err == nil {
				d = cur
			}
			if _, ok, err := f.store.CancelDelivery(context.Background(), d, "cj_1", f.now); err != nil || !ok {
				t.Errorf("cancel during the attempt: %v %v", ok, err)
			}
			w.WriteHeader(503)
		})
		ctx := context.Background()
		failed := f.run(t, sqsMessage(t, "d1", "1", f.now.Add(-time.Minute)))
		require.Empty(t, failed, "sent again for its retry, as any retry")
		_, _, hopped := f.queue.requeuedFor(t, "d1")
		require.True(t, hopped)
		got, err := f.store.Delivery(ctx, "d1")
		require.NoError(t, err)
		require.Equal(t, domain.StateCancelled, got.State, "the cancel won")
		require.Equal(t, 1, got.Attempts, "the attempt is logged and counted")
		require.Len(t, got.AttemptLog, 1)
		require.Equal(t, 503, got.AttemptLog[0].Status)

		failed = f.run(t, f.dueRetry(t, "d1_again"))
		require.Empty(t, failed, "deleted when it comes back")
		require.Equal(t, int32(1), f.hits.Load(), "no second request")
		require.Empty(t, f.queue.dlq, "nothing dead-lettered")
	})
	t.Run("the attempt records first: it wins", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
		ctx := context.Background()
		require.Empty(t, f.run(t, sqsMessage(t, "d1", "1", f.now.Add(-time.Minute))))
		cur, ok, err := f.store.CancelDelivery(ctx, domain.Delivery{DeliveryID: "d1", TenantID: "t1", EndpointID: "ep_1", State: domain.StatePending}, "cj_1", f.now)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, domain.StateDelivered, cur.State)
	})
}
