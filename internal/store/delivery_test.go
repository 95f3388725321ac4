package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/stretchr/testify/require"
)

// No call creates a delivery on its own: its first attempt does. The
// update an attempt writes sets, where absent, every
// attribute of a complete record (the ids, the creation time and the
// expiry), so the first attempt's record is complete and a later attempt
// keeps them.
func TestFirstAttemptCreatesACompleteRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var a domain.Attempt
	for _, legacy := range []bool{false, true} {
		db := newFakeDB()
		s := newTestStore(db)
		d := domain.Delivery{DeliveryID: domain.DeliveryID("t1", "evt_1", "ep_1", s.Now().Add(-time.Second)), TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created"}
		if legacy {
			d.DeliveryID = domain.LegacyDeliveryID("evt_1", "ep_1")
		}
		a = domain.Attempt{Number: 1, At: s.Now(), Status: 200, LatencyMS: 12}
		require.NoError(t, s.RecordAttempt(ctx, d, a, domain.Outcome{State: domain.StateDelivered}))
		require.Len(t, db.Updates(), 1)
		up := db.Updates()[0]
		require.Equal(t, deliveryKey(d.DeliveryID), up.Key)

		createdAt, err := attributevalue.Marshal(s.Now())
		require.NoError(t, err)
		want := map[string]types.AttributeValue{
			"delivery_id": &types.AttributeValueMemberS{Value: d.DeliveryID},
			"tenant_id":   &types.AttributeValueMemberS{Value: "t1"},
			"endpoint_id": &types.AttributeValueMemberS{Value: "ep_1"},
			"event_id":    &types.AttributeValueMemberS{Value: "evt_1"},
			"event_type":  &types.AttributeValueMemberS{Value: "order.created"},
			"created_at":  createdAt,
			"expires_at":  &types.AttributeValueMemberN{Value: fmt.Sprint(s.Now().Add(s.Retention).Unix())},
		}
		if legacy {
			// In the delivery log's index under its creation, keys never
			// moved after.
			want[AttrLogPK] = &types.AttributeValueMemberS{Value: LogPK("t1", d.DeliveryID)}
			want[AttrLogSK] = &types.AttributeValueMemberS{Value: keys.TimeID(s.Now(), d.DeliveryID)}
		} else {
			// In its tenant's shard of records, under its id: listed by
			// its own key, no index entry.
			pk, ok := RecordsPK(d.DeliveryID)
			require.True(t, ok)
			require.Equal(t, key(pk, d.DeliveryID), up.Key)
			require.True(t, strings.HasPrefix(pk, keys.Records(domain.TenantHash("t1"), 0)[:len(keys.RecordsPrefix)+domain.TenantHashChars+1]), pk)
		}
		expr := aws.ToString(up.UpdateExpression)
		for name, v := range want {
			placeholder := ":c_" + name
			require.Contains(t, expr, name+" = if_not_exists("+name+", "+placeholder+")", "only where absent: a later attempt keeps the first one's")
			require.Equal(t, v, up.ExpressionAttributeValues[placeholder], name)
		}
		n := 0
		for k := range up.ExpressionAttributeValues {
			if strings.HasPrefix(k, ":c_") {
				n++
			}
		}
		require.Equal(t, len(want), n, "the creation attributes are those above")
		require.NotContains(t, expr, "enqueued_at", "enqueue writes no record, and no attempt claims it did")
		require.NotContains(t, expr, "gsi2", "there is no event index to write")
		require.Contains(t, expr, "ADD attempts :one")
		require.Equal(t, "attribute_not_exists(pk)", aws.ToString(up.ConditionExpression),
			"read as missing, written only if still missing: a record made meanwhile is read again")

		// What the record reads as: the attempt's values and the creation
		// attributes.
		got := read(t, s, d)
		require.Equal(t, domain.Delivery{DeliveryID: d.DeliveryID, TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created",
			State: domain.StateDelivered, CreatedAt: s.Now(), DeliveredAt: &a.At, Attempts: 1, LastStatus: 200, AttemptLog: []domain.Attempt{a}}, got)
		require.Equal(t, want["expires_at"], stored(db, deliveryKey(d.DeliveryID))["expires_at"])
	}

	t.Run("no empty id", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		require.NoError(t, s.RecordAttempt(ctx, domain.Delivery{DeliveryID: "d_only"}, a, domain.Outcome{State: domain.StatePending}))
		expr := aws.ToString(db.Updates()[0].UpdateExpression)
		require.False(t, strings.Contains(expr, "tenant_id"), "an empty id is not written: %s", expr)
		require.Contains(t, expr, "delivery_id = if_not_exists(delivery_id, :c_delivery_id)")
	})
}

// deliver reads strongly consistent (Load); LoadWith reads eventually
// consistent when asked, for half the read units.
func TestLoadIsConsistentUnlessAskedOtherwise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	id := putDelivery(t, db, "t1", "evt_1", "ep_1").DeliveryID

	snap, err := s.Load(ctx, []string{id, "msg_none"}, nil)
	require.NoError(t, err)
	require.Contains(t, snap.Deliveries, id)
	snap, err = s.LoadWith(ctx, LoadOptions{Eventual: true}, []string{id, "msg_none"}, nil)
	require.NoError(t, err)
	require.Contains(t, snap.Deliveries, id)
	require.Len(t, snap.Deliveries, 1)
	_, err = s.LoadWith(ctx, LoadOptions{}, []string{id}, nil)
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, true}, db.Consistent())
}

// NoRecords leaves the endpoints and their tombstones out of a read,
// NoGates their gates: deliver reads the two parts apart, each with its
// own consistency.
func TestLoadLeavesOutWhatItIsAskedTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dynamofake.NewDB(IndexTenant)
	s := newTestStore(db)
	s.Now = func() time.Time { return hotT0 }
	putEndpoint(t, s, "t1", "ep_1")
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "t1"})
	require.NoError(t, err)
	require.NoError(t, s.Tombstone(ctx, "t1"))
	fast := hotT0.Add(time.Minute)
	require.NoError(t, s.MarkGate(ctx, "t1", "ep_1", &fast))
	refs := []EndpointRef{{"t1", "ep_1"}}

	all, err := s.Load(ctx, nil, refs)
	require.NoError(t, err)
	require.Len(t, all.Endpoints, 1)
	require.True(t, all.Erased["t1"])
	require.Len(t, all.FastUntil, 1)
	gates, err := s.LoadWith(ctx, LoadOptions{NoRecords: true}, nil, refs)
	require.NoError(t, err)
	require.Empty(t, gates.Endpoints)
	require.Empty(t, gates.Erased)
	require.Equal(t, all.FastUntil, gates.FastUntil)
	records, err := s.LoadWith(ctx, LoadOptions{NoGates: true, Eventual: true}, nil, refs)
	require.NoError(t, err)
	require.Equal(t, all.Endpoints, records.Endpoints)
	require.Equal(t, all.Erased, records.Erased)
	require.Empty(t, records.FastUntil)
}

// A record an attempt wrote before attempts wrote delivery_id is still found
// by its id.
func TestLoadKeysADeliveryWithoutItsIDAttributeByItsKey(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := newTestStore(db)
	k := deliveryKey("msg_old")
	db.SetItem(withKey(map[string]types.AttributeValue{
		"state": &types.AttributeValueMemberS{Value: string(domain.StateDelivered)},
	}, k))
	snap, err := s.Load(context.Background(), []string{"msg_old", "msg_none"}, nil)
	require.NoError(t, err)
	require.Len(t, snap.Deliveries, 1)
	require.Equal(t, "msg_old", snap.Deliveries["msg_old"].DeliveryID)
}

// Records live 15 days, a day longer than the DLQ keeps a message (14
// days, infra/hookline/queues.go; infra's tests hold the two together). A delivery
// that dies is given Retention again from its death, when its message
// enters the DLQ: its record (its DLQ listing, the copy a replay sends)
// outlives the message, however long the delivery took to die.
func TestRetentionCountsFromCreationAndAgainFromDeath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.Equal(t, 15*24*time.Hour, New(nil, "state").Retention)
	expiry := func(t time.Time) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: fmt.Sprint(t.Add(15 * 24 * time.Hour).Unix())}
	}
	d := domain.Delivery{DeliveryID: domain.DeliveryID("t1", "evt_1", "ep_1", time.Time{}), TenantID: "t1", EndpointID: "ep_1", EventID: "evt_1", EventType: "order.created"}
	for _, o := range []domain.Outcome{{State: domain.StatePending}, {State: domain.StateDelivered}, {State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}} {
		t.Run(string(o.State), func(t *testing.T) {
			db := newFakeDB()
			s := newTestStore(db)
			died := s.Now().Add(20 * time.Hour)
			s.Now = func() time.Time { return died }
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 3, At: died, Status: 400}, o))
			up := db.Updates()[0]
			expr := aws.ToString(up.UpdateExpression)
			require.Equal(t, 1, strings.Count(expr, "expires_at ="), "one path per attribute: DynamoDB refuses overlapping paths")
			if o.State == domain.StateDead {
				require.Contains(t, expr, "expires_at = :expires", "a death sets the expiry, existing or not")
				require.Equal(t, expiry(died), up.ExpressionAttributeValues[":expires"])
				return
			}
			require.Contains(t, expr, "expires_at = if_not_exists(expires_at, :c_expires_at)", "otherwise the first write's expiry stays")
			require.Equal(t, expiry(died), up.ExpressionAttributeValues[":c_expires_at"])
		})
	}
	t.Run("rejection", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		require.NoError(t, s.PutRejection(ctx, domain.Rejection{Key: "evt_bad", Reason: "invalid_json", Detail: "x"}))
		item := db.Item(key("REJECTED#evt_bad", "REJECTED"))
		require.Equal(t, expiry(s.Now()), item["expires_at"])
	})
}
