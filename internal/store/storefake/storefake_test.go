package storefake_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// A delivery put dead is in the dead index, the dead listing and its
// tenant's DLQ depth; put again delivered, it leaves all three, as the
// attempts that moved it would have.
func TestPutDeliveryIndexesAndCountsAsAnAttemptWould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storefake.New()
	s.Now = func() time.Time { return t0 }
	dead := t0.Add(-time.Minute)
	d := domain.Delivery{DeliveryID: "dlv_1", TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "a.b", State: domain.StateDead, CreatedAt: t0.Add(-time.Hour), DeadAt: &dead}
	s.PutDelivery(d)

	require.True(t, s.InDeadIndex("dlv_1"))
	listed, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, "dlv_1", listed[0].DeliveryID)
	depths, err := s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, depths["t1"])
	logged, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 10, "")
	require.NoError(t, err)
	require.Len(t, logged, 1, "a delivery with a CreatedAt is in the delivery log")
	require.Equal(t, domain.StateDead, s.Deliveries()["dlv_1"].State)

	d.State, d.DeadAt = domain.StateDelivered, nil
	s.PutDelivery(d)
	require.False(t, s.InDeadIndex("dlv_1"))
	depths, err = s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Zero(t, depths["t1"])
}

// The message log lists what Put wrote (in its pages) and what PutIndexed
// wrote (in the index), newest first, with either index, and reads one
// event with its payload.
func TestMessageLogReadsWhatPutWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := storefake.NewMessageLog()
	l.Put(domain.Event{ID: "evt_1", TenantID: "t1", Type: "a.b", OccurredAt: t0, Payload: []byte(`{"n":1}`)})
	l.Put(domain.Event{ID: "evt_2", TenantID: "t1", Type: "a.b", OccurredAt: t0.Add(time.Second)})
	l.PutIndexed(domain.Event{ID: "evt_3", TenantID: "t1", Type: "a.b", OccurredAt: t0.Add(2 * time.Second)})

	es, _, err := l.ListEvents(ctx, "t1", domain.EventFilter{}, 10, "")
	require.NoError(t, err)
	require.Equal(t, []string{"evt_3", "evt_2", "evt_1"}, ids(es))
	e, err := l.Event(ctx, "t1", "evt_1")
	require.NoError(t, err)
	require.JSONEq(t, `{"n":1}`, string(e.Payload))

	l.Legacy = true
	es, _, err = l.ListEvents(ctx, "t1", domain.EventFilter{}, 10, "")
	require.NoError(t, err)
	require.Equal(t, []string{"evt_3", "evt_2", "evt_1"}, ids(es))
}

func ids(es []domain.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}
