package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/delivery"
	"github.com/stretchr/testify/require"
)

func newTestStore(db *fakeDB) *Store {
	s := New(db, "state")
	s.Now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC) }
	return s
}

func createDelivery(t *testing.T, s *Store, tenant, event, endpoint string) Delivery {
	t.Helper()
	d := Delivery{DeliveryID: delivery.ID(event, endpoint), TenantID: tenant, EndpointID: endpoint, EventID: event, EventType: "order.created"}
	_, err := s.CreateDelivery(context.Background(), d)
	require.NoError(t, err)
	return d
}

// The event index holds keys only; DeliveriesOfEvent reads the keys there
// and the whole deliveries from the table, in endpoint id order.
func TestDeliveriesOfEventReadsKeysThenItems(t *testing.T) {
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	for _, ep := range []string{"ep_c", "ep_a", "ep_d", "ep_b"} {
		createDelivery(t, s, "t1", "evt_1", ep)
	}
	createDelivery(t, s, "t1", "evt_2", "ep_a") // another event
	createDelivery(t, s, "t2", "evt_1", "ep_a") // another tenant's event with the same id
	// The index still lists a delivery the table no longer holds.
	db.stale = append(db.stale, map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "DELIVERY#" + delivery.ID("evt_1", "ep_bb")}, "sk": &types.AttributeValueMemberS{Value: "DELIVERY"},
		"gsi2pk": &types.AttributeValueMemberS{Value: eventIndexKey("t1", "evt_1")}, "gsi2sk": &types.AttributeValueMemberS{Value: "ep_bb"},
	})

	ds, err := s.DeliveriesOfEvent(ctx, "t1", "evt_1")
	require.NoError(t, err)
	var eps []string
	for _, d := range ds {
		require.Equal(t, "t1", d.TenantID)
		require.Equal(t, "evt_1", d.EventID)
		require.Equal(t, delivery.ID("evt_1", d.EndpointID), d.DeliveryID)
		require.Equal(t, "order.created", d.EventType, "attributes the index does not project come from the table")
		require.Equal(t, delivery.StatePending, d.State)
		eps = append(eps, d.EndpointID)
	}
	require.Equal(t, []string{"ep_a", "ep_b", "ep_c", "ep_d"}, eps, "endpoint id order; an entry without its item is left out")
	require.Equal(t, 3, db.calls["Query"], "every page of the index is read (5 entries, 2 a page)")
	require.Equal(t, 1, db.calls["BatchGetItem"], "the items in one batch read")

	ds, err = s.DeliveriesOfEvent(ctx, "t1", "evt_none")
	require.NoError(t, err)
	require.Empty(t, ds)
	require.Equal(t, 1, db.calls["BatchGetItem"], "no read when the index lists nothing")
}

func TestDeliveriesOfEventReadsAHundredAtATime(t *testing.T) {
	db := newFakeDB()
	db.pageSize = 1000
	s := newTestStore(db)
	for i := range 150 {
		createDelivery(t, s, "t1", "evt_many", fmt.Sprintf("ep_%03d", i))
	}
	ds, err := s.DeliveriesOfEvent(context.Background(), "t1", "evt_many")
	require.NoError(t, err)
	require.Len(t, ds, 150)
	for i, d := range ds {
		require.Equal(t, fmt.Sprintf("ep_%03d", i), d.EndpointID)
	}
	require.Equal(t, 2, db.calls["BatchGetItem"])
	require.Equal(t, 100, db.batchMax)
}
