package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

func newTestStore(db *dynamofake.DB) *Store {
	s := New(db, "state")
	s.Now = func() time.Time { return time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC) }
	return s
}

// eventAt is the time of the events these tests list the deliveries of.
var eventAt = time.Date(2026, 12, 7, 6, 10, 0, 123456789, time.UTC)

// putDelivery writes a delivery record of an event (of eventAt) to an
// endpoint straight into the fake table.
func putDelivery(t *testing.T, db *dynamofake.DB, tenant, event, endpoint string) domain.Delivery {
	t.Helper()
	return putDeliveryAs(t, db, domain.DeliveryID(tenant, event, endpoint, eventAt), tenant, event, endpoint)
}

// putDeliveryAs is putDelivery of a record whose id is id.
func putDeliveryAs(t *testing.T, db *dynamofake.DB, id, tenant, event, endpoint string) domain.Delivery {
	t.Helper()
	d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: event, EventType: "order.created", State: domain.StatePending}
	item, err := attributevalue.MarshalMap(d)
	require.NoError(t, err)
	db.SetItem(withKey(item, deliveryKey(d.DeliveryID)))
	return d
}

func putEndpoint(t *testing.T, s *Store, tenant, endpoint string) {
	t.Helper()
	require.NoError(t, s.PutEndpoint(context.Background(), domain.Endpoint{TenantID: tenant, EndpointID: endpoint, URL: "https://example.com/" + endpoint, Secrets: []string{"whsec_x"}}))
}

// No index lists an event's deliveries: DeliveriesOfEvent computes their
// ids from the event and the tenant's endpoints and reads those that exist,
// under their id or (made before ids carried the time) their legacy id, in
// endpoint id order. A delivery to an endpoint deleted since is not listed
// (the one thing the index did that this cannot), though it is still
// readable by id.
func TestDeliveriesOfEventComputesTheIDsFromTheTenantsEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	for _, ep := range []string{"ep_c", "ep_a", "ep_e", "ep_d", "ep_b"} {
		putEndpoint(t, s, "t1", ep)
	}
	for _, ep := range []string{"ep_c", "ep_a", "ep_b", "ep_gone"} {
		putDelivery(t, db, "t1", "evt_1", ep)
	}
	putDeliveryAs(t, db, domain.LegacyDeliveryID("evt_1", "ep_d"), "t1", "evt_1", "ep_d") // made by a version before
	putDelivery(t, db, "t1", "evt_2", "ep_a")                                             // another event
	putEndpoint(t, s, "t2", "ep_z")
	putDelivery(t, db, "t2", "evt_1", "ep_z") // another tenant's event with the same id
	// Another tenant's endpoint with the same id as t1's ep_e, which has no
	// delivery of its own: the delivery ids are the same, the record is t2's.
	putEndpoint(t, s, "t2", "ep_e")
	putDelivery(t, db, "t2", "evt_1", "ep_e")
	db.ResetCalls()

	ev1 := domain.Event{ID: "evt_1", OccurredAt: eventAt}
	ds, err := s.DeliveriesOfEvent(ctx, "t1", ev1)
	require.NoError(t, err)
	var eps []string
	for _, d := range ds {
		require.Equal(t, "t1", d.TenantID)
		require.Equal(t, "evt_1", d.EventID)
		if d.EndpointID == "ep_d" {
			require.Equal(t, domain.LegacyDeliveryID("evt_1", "ep_d"), d.DeliveryID, "found under its legacy id")
		} else {
			require.Equal(t, domain.DeliveryID("t1", "evt_1", d.EndpointID, eventAt), d.DeliveryID)
		}
		require.Equal(t, "order.created", d.EventType)
		require.Equal(t, domain.StatePending, d.State)
		eps = append(eps, d.EndpointID)
	}
	require.Equal(t, []string{"ep_a", "ep_b", "ep_c", "ep_d"}, eps,
		"endpoint id order; ep_e has no delivery of its own, ep_gone is no endpoint of the tenant any more")
	require.Equal(t, 4, db.Calls("Query"), "every page of the tenant's endpoints is read (5 endpoints, 2 a page), then the outcome pages of the ids without a record (one tenant, one second: one query)")
	require.Equal(t, 1, db.Calls("BatchGetItem"), "the deliveries in one batch read")

	gone, err := s.Delivery(ctx, domain.DeliveryID("t1", "evt_1", "ep_gone", eventAt))
	require.NoError(t, err, "a delivery to a deleted endpoint is still read by its id")
	require.Equal(t, "ep_gone", gone.EndpointID)

	ds, err = s.DeliveriesOfEvent(ctx, "t1", domain.Event{ID: "evt_none", OccurredAt: eventAt})
	require.NoError(t, err)
	require.Empty(t, ds)

	db.ResetCalls()
	ds, err = s.DeliveriesOfEvent(ctx, "t_no_endpoints", ev1)
	require.NoError(t, err)
	require.Empty(t, ds)
	require.Zero(t, db.Calls("BatchGetItem"), "no read when the tenant has no endpoint")
}

func TestDeliveriesOfEventReadsAHundredAtATime(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	db.PageSize = 1000
	s := newTestStore(db)
	for i := range 150 {
		putEndpoint(t, s, "t1", fmt.Sprintf("ep_%03d", i))
		putDelivery(t, db, "t1", "evt_many", fmt.Sprintf("ep_%03d", i))
	}
	ds, err := s.DeliveriesOfEvent(context.Background(), "t1", domain.Event{ID: "evt_many", OccurredAt: eventAt})
	require.NoError(t, err)
	require.Len(t, ds, 150)
	for i, d := range ds {
		require.Equal(t, fmt.Sprintf("ep_%03d", i), d.EndpointID)
	}
	require.Equal(t, 3, db.Calls("BatchGetItem"), "300 ids: each delivery under its id and its legacy id")
	require.Equal(t, 100, db.BatchMax())
	require.Equal(t, []bool{true, true, true}, db.Consistent(), "strongly consistent reads")
}
