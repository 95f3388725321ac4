package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/delivery"
	"github.com/stretchr/testify/require"
)

// CreateDelivery records a sent delivery once: the put carries enqueued_at,
// and a delivery that exists (an earlier run, or deliver's own record) is
// neither overwritten nor an error.
func TestCreateDeliveryIsConditionalAndCarriesEnqueuedAt(t *testing.T) {
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	d := Delivery{DeliveryID: delivery.ID("evt_1", "ep_1"), TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created"}
	created, err := s.CreateDelivery(ctx, d)
	require.NoError(t, err)
	require.True(t, created)
	got, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, delivery.StatePending, got.State)
	require.NotNil(t, got.EnqueuedAt, "a recorded delivery is a sent one")
	require.Equal(t, s.Now(), *got.EnqueuedAt)
	require.Equal(t, s.Now(), got.CreatedAt)
	item := db.items[itemKey(deliveryKey(d.DeliveryID))]
	for name := range item {
		require.NotContains(t, name, "gsi", "a pending delivery is in no index")
	}
	require.Equal(t, &types.AttributeValueMemberN{Value: fmt.Sprint(s.Now().Add(s.Retention).Unix())}, item["expires_at"])

	later := s.Now().Add(time.Minute)
	s.Now = func() time.Time { return later }
	created, err = s.CreateDelivery(ctx, d)
	require.NoError(t, err, "an existing delivery is not an error")
	require.False(t, created)
	again, err := s.Delivery(ctx, d.DeliveryID)
	require.NoError(t, err)
	require.Equal(t, got, again, "left as it was")
}

// The update an attempt writes sets, where absent, every attribute the
// creating put writes, with the put's values: a record that deliver writes
// before enqueue's put is a complete delivery.
func TestRecordAttemptCompletesARecordNotYetCreated(t *testing.T) {
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	d := Delivery{DeliveryID: delivery.ID("evt_1", "ep_1"), TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created"}
	a := Attempt{Number: 1, At: s.Now(), Status: 200, LatencyMS: 12}
	require.NoError(t, s.RecordAttempt(ctx, d, a, Outcome{State: delivery.StateDelivered}))
	require.Len(t, db.updates, 1)
	up := db.updates[0]

	_, err := s.CreateDelivery(ctx, d) // what the put would have written, at the same clock
	require.NoError(t, err)
	put := db.items[itemKey(deliveryKey(d.DeliveryID))]

	expr := aws.ToString(up.UpdateExpression)
	for _, name := range []string{"delivery_id", "tenant_id", "endpoint_id", "event_id", "event_type", "created_at", "enqueued_at", "expires_at"} {
		placeholder := ":c_" + name
		require.Contains(t, expr, name+" = if_not_exists("+name+", "+placeholder+")", "only where absent: an existing record keeps its own")
		require.Equal(t, put[name], up.ExpressionAttributeValues[placeholder], name)
	}
	require.Equal(t, "attribute_not_exists(#state) OR #state <> :delivered", aws.ToString(up.ConditionExpression), "an upsert: no condition on existence")

	require.NotContains(t, expr, "gsi2", "there is no event index to write")

	t.Run("no empty id", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		require.NoError(t, s.RecordAttempt(ctx, Delivery{DeliveryID: "d_only"}, a, Outcome{State: delivery.StatePending}))
		expr := aws.ToString(db.updates[0].UpdateExpression)
		require.False(t, strings.Contains(expr, "tenant_id"), "an empty id is not written: %s", expr)
		require.Contains(t, expr, "delivery_id = if_not_exists(delivery_id, :c_delivery_id)")
	})
}

// A record an attempt wrote before attempts wrote delivery_id is still found
// by its id.
func TestLoadKeysADeliveryWithoutItsIDAttributeByItsKey(t *testing.T) {
	db := newFakeDB()
	s := newTestStore(db)
	k := deliveryKey("msg_old")
	db.items[itemKey(k)] = withKey(map[string]types.AttributeValue{
		"state": &types.AttributeValueMemberS{Value: string(delivery.StateDelivered)},
	}, k)
	snap, err := s.Load(context.Background(), []string{"msg_old", "msg_none"}, nil)
	require.NoError(t, err)
	require.Len(t, snap.Deliveries, 1)
	require.Equal(t, "msg_old", snap.Deliveries["msg_old"].DeliveryID)
}
