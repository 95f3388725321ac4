//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storetest"
	"github.com/stretchr/testify/require"
)

// The store's conformance suite (package storetest) on the local cloud's
// table: the same assertions the store on the fake table (storefake), which
// the consumers' unit tests use, passes in store's TestConformance; its
// cases run in parallel with each other on the shared table, under ids of
// their own. Not parallel with other tests: the suite claims the DLQ sweep,
// and no other test's worker should be sweeping then (the parallel tests
// start after the sequential ones, and this one ends after its cases).
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(_ context.Context, _ *testing.T) *storetest.Bundle {
		clock := storetest.NewClock(time.Now().UTC())
		s := store.New(env.ddb, env.out.StateTableName)
		s.Now = clock.Now
		return &storetest.Bundle{Store: s, Clock: clock}
	})
}

// recordKey is the table key of delivery id's record: in its tenant's
// shards of records, under the id, or, for a legacy id, DELIVERY#<id>.
func recordKey(id string) map[string]types.AttributeValue {
	pk, sk := "DELIVERY#"+id, "DELIVERY"
	if rpk, ok := store.RecordsPK(id); ok {
		pk, sk = rpk, id
	}
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

// What the suite cannot see, since neither store shows it through its
// methods: the items as the table holds them (expiry, index attributes) and
// a counter an earlier version left off.
func TestStoreLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := env.store
	tenantID := fmt.Sprintf("t_layout_%d", time.Now().UnixNano())
	raw := func(t *testing.T, id string) map[string]types.AttributeValue {
		t.Helper()
		item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
			Key: recordKey(id),
		})
		require.NoError(t, err)
		return item.Item
	}
	expiry := func(t *testing.T, item map[string]types.AttributeValue) int64 {
		t.Helper()
		exp, ok := item["expires_at"].(*types.AttributeValueMemberN)
		require.True(t, ok, "it expires")
		n, err := strconv.ParseInt(exp.Value, 10, 64)
		require.NoError(t, err)
		return n
	}

	t.Run("a portal link: its hash in the key, its tenant's index partition, a TTL a day after its expiry", func(t *testing.T) {
		_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: tenantID})
		require.NoError(t, err)
		until := time.Now().Add(10 * time.Minute).UTC().Truncate(time.Second)
		hash := "hash_" + tenantID
		_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_layout", TenantID: tenantID, Hash: hash, ExpiresAt: until})
		require.NoError(t, err)
		out, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "PORTAL#" + hash},
				"sk": &types.AttributeValueMemberS{Value: "PORTAL"},
			},
		})
		require.NoError(t, err)
		require.NotNil(t, out.Item)
		require.Equal(t, until.Add(store.PortalLinkKeep).Unix(), expiry(t, out.Item))
		require.Equal(t, &types.AttributeValueMemberS{Value: "TENANT#" + tenantID + "#PORTAL"}, out.Item["gsi1pk"])
		require.Equal(t, &types.AttributeValueMemberS{Value: "pl_layout"}, out.Item["gsi1sk"])
	})

	t.Run("the first attempt sets the expiry; a later one keeps it; delivered is in no index", func(t *testing.T) {
		ev := "evt_layout_1_" + tenantID
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenantID, ev, "ep", time.Time{}), TenantID: tenantID, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		first := raw(t, d.DeliveryID)
		require.GreaterOrEqual(t, expiry(t, first), time.Now().Add(store.DefaultRetention-time.Minute).Unix())
		later := store.New(env.ddb, env.out.StateTableName)
		later.Now = func() time.Time { return time.Now().Add(time.Hour) }
		cur, err := s.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		require.NoError(t, later.RecordAttempt(ctx, cur, domain.Attempt{Number: 2, At: later.Now().UTC(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		item := raw(t, d.DeliveryID)
		require.Equal(t, first["expires_at"], item["expires_at"], "the expiry is the first attempt's")
		for name := range item {
			require.NotContains(t, name, "gsi", "a delivered delivery is in no index")
		}
	})

	t.Run("a dead delivery is indexed under its tenant, without its message, and expires Retention after its death", func(t *testing.T) {
		ev := "evt_layout_2_" + tenantID
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenantID, ev, "ep", time.Time{}), TenantID: tenantID, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: domain.Rejected(400), Message: "{}"}))
		var listed []map[string]types.AttributeValue
		require.Eventually(t, func() bool { // the index is eventually consistent
			q, err := env.ddb.Query(ctx, &dynamodb.QueryInput{
				TableName: &env.out.StateTableName, IndexName: aws.String(store.IndexDead),
				KeyConditionExpression:    aws.String(store.AttrDeadPK + " = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: store.DeadPK(tenantID, d.DeliveryID)}},
			})
			if err != nil || len(q.Items) == 0 {
				return false
			}
			listed = q.Items
			return true
		}, 10*time.Second, 200*time.Millisecond)
		require.Len(t, listed, 1)
		require.NotContains(t, listed[0], "message", "the dead index does not copy the payload")
		require.NotContains(t, listed[0], "attempt_log")
		item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": listed[0]["pk"], "sk": listed[0]["sk"]},
		})
		require.NoError(t, err)
		require.Equal(t, &types.AttributeValueMemberS{Value: "{}"}, item.Item["message"], "the table keeps it")
		// Longer than the DLQ keeps its message (14 days from the send).
		require.GreaterOrEqual(t, expiry(t, item.Item), time.Now().Add(store.DefaultRetention-time.Minute).Unix())
	})

	t.Run("a replay's claim gives the record its retention again", func(t *testing.T) {
		tenant := tenantID + "_exp"
		ev := "evt_exp_" + tenant
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, "ep", time.Time{}), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		// Claimed ten days after its death.
		later := store.New(env.ddb, env.out.StateTableName)
		claimedAt := time.Now().Add(10 * 24 * time.Hour)
		later.Now = func() time.Time { return claimedAt }
		read, err := later.Delivery(ctx, d.DeliveryID)
		require.NoError(t, err)
		_, errs := later.ClaimForReplay(ctx, []domain.Delivery{read}, tenant, "job_exp", time.Hour)
		require.NoError(t, errs[0])
		item, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
			Key: recordKey(d.DeliveryID),
		})
		require.NoError(t, err)
		require.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(claimedAt.Add(store.DefaultRetention).Unix(), 10)}, item.Item["expires_at"])
	})

	t.Run("a counter left off by an earlier version is corrected by the reconciliation", func(t *testing.T) {
		tenant := tenantID + "_rec"
		for i := range 2 {
			ev := fmt.Sprintf("evt_rec_%d_%s", i, tenant)
			d := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, "ep", time.Time{}), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		}
		// As the old crash left it, in the version before the shards: a
		// death counted whose delivery's write was lost, moved in a write
		// of its own.
		oldDepthCounter(t, tenant, 3)
		// The index is eventually consistent: poll until it counts both.
		var check store.DepthCheck
		require.Eventually(t, func() bool {
			var err error
			check, err = s.ReconcileDLQDepth(ctx, tenant)
			return err == nil && check.Corrected
		}, 10*time.Second, 200*time.Millisecond)
		require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 3, Indexed: 2, Corrected: true, Migrated: true}, check, "corrected, and folded into the shards")
		all, err := s.DLQDepths(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, all[tenant])

		// A counter that just moved is left for the next run.
		ev := "evt_rec_moved_" + tenant
		d := domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, "ep", time.Time{}), TenantID: tenant, EndpointID: "ep", EventID: ev, EventType: "a.b"}
		require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: time.Now().UTC(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		check, err = s.ReconcileDLQDepth(ctx, tenant)
		require.NoError(t, err)
		require.Equal(t, store.DepthCheck{TenantID: tenant, Counter: 3, Deferred: true}, check)
	})

}

// oldDepthCounter leaves a tenant's DLQ depth counter as the versions
// before the shards kept it: no shard (the store's 32,
// TENANT#<t>#DLQDEPTH#<n>), one item TENANT#<t> / DLQDEPTH listed under
// gsi1 DLQDEPTH, at depth, with no moves or moved_at (moved in a write of
// its own, by the versions before those).
func oldDepthCounter(t *testing.T, tenantID string, depth int) {
	t.Helper()
	ctx := context.Background()
	for n := range 32 {
		_, err := env.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: &env.out.StateTableName,
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("TENANT#%s#DLQDEPTH#%d", tenantID, n)},
				"sk": &types.AttributeValueMemberS{Value: "DLQDEPTH"},
			},
		})
		require.NoError(t, err)
	}
	_, err := env.ddb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &env.out.StateTableName,
		Item: map[string]types.AttributeValue{
			"pk":        &types.AttributeValueMemberS{Value: "TENANT#" + tenantID},
			"sk":        &types.AttributeValueMemberS{Value: "DLQDEPTH"},
			"depth":     &types.AttributeValueMemberN{Value: strconv.Itoa(depth)},
			"tenant_id": &types.AttributeValueMemberS{Value: tenantID},
			"gsi1pk":    &types.AttributeValueMemberS{Value: "DLQDEPTH"},
			"gsi1sk":    &types.AttributeValueMemberS{Value: tenantID},
		},
	})
	require.NoError(t, err)
}
