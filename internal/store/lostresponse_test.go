package store

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

// lostResponses sends every UpdateItem twice and answers the second: what
// the SDK does when the first write took effect but its response was lost
// (a closed connection), and it retries.
type lostResponses struct{ *dynamofake.DB }

func (l lostResponses) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if _, err := l.DB.UpdateItem(ctx, in, opts...); err != nil {
		return nil, err
	}
	return l.DB.UpdateItem(ctx, in, opts...)
}

// An attempt whose write took effect but whose answer was lost, retried by
// the SDK, is recorded once: the retry's failed condition returns the
// record with the attempt already in it, which is taken as done, not as a
// change by another copy to record the attempt on again.
func TestAnAttemptRetriedAfterALostResponseIsRecordedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	d := domain.Delivery{DeliveryID: domain.DeliveryID("t1", "evt_1", "ep_1", time.Time{}), TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created"}
	require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
	first := read(t, s, d)

	lossy := New(lostResponses{db}, "state")
	lossy.Now = s.Now
	second := domain.Attempt{Number: 2, At: s.Now().Add(time.Minute), Status: 503, LatencyMS: 7}
	require.NoError(t, lossy.RecordAttempt(ctx, first, second, domain.Outcome{State: domain.StatePending}))
	got := read(t, s, d)
	require.Equal(t, 2, got.Attempts, "counted once")
	require.Len(t, got.AttemptLog, 2, "logged once")

	// Another copy's attempt, made from the same stale read, is still
	// recorded on top (it is not this one).
	other := domain.Attempt{Number: 2, At: s.Now().Add(2 * time.Minute), Status: 503}
	require.NoError(t, s.RecordAttempt(ctx, first, other, domain.Outcome{State: domain.StatePending}))
	got = read(t, s, d)
	require.Equal(t, 3, got.Attempts)
	require.Len(t, got.AttemptLog, 3)

	// A resend's attempt likewise, once the delivery is delivered.
	require.NoError(t, s.RecordAttempt(ctx, read(t, s, d), domain.Attempt{Number: 4, At: s.Now().Add(3 * time.Minute), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
	require.NoError(t, lossy.RecordResendAttempt(ctx, read(t, s, d), domain.Attempt{Number: 1, At: s.Now().Add(4 * time.Minute), Status: 200}))
	got = read(t, s, d)
	require.Equal(t, 1, got.Resends, "counted once")
	require.Len(t, got.AttemptLog, 5, "logged once")
}
