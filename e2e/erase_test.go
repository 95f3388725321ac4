//go:build e2e

package e2e

import (
	"context"
	"github.com/hookline/hookline/internal/messagelog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// erasable is one tenant of the erasure test, as the API made it: a key,
// an endpoint that answers 200 and one that answers 400 (dead at once),
// a delivered and a dead delivery.
type erasable struct {
	id, key         string
	okEp, deadEp    string
	delivered, dead string
}

func seedErasable(t *testing.T, name string) erasable {
	t.Helper()
	e := erasable{}
	e.id, e.key = apiTenant(t, name)
	ok, bad := newReceiver(t, status(http.StatusOK)), newReceiver(t, status(http.StatusBadRequest))
	e.okEp, _ = apiEndpoint(t, e.key, ok.URL+"/ok")
	e.deadEp, _ = apiEndpoint(t, e.key, bad.URL+"/bad", "order.*")
	okEv := event(tenant{ID: e.id}, "evt_ok_"+e.id, "order.created", `{"n":1}`)
	okEv.EndpointID = e.okEp
	deadEv := event(tenant{ID: e.id}, "evt_dead_"+e.id, "order.created", `{"n":2}`)
	deadEv.EndpointID = e.deadEp
	write(t, okEv)
	write(t, deadEv)
	e.delivered, e.dead = domain.DeliveryID(okEv.TenantID, okEv.ID, e.okEp, okEv.OccurredAt), domain.DeliveryID(deadEv.TenantID, deadEv.ID, e.deadEp, deadEv.OccurredAt)
	return e
}

// indexed counts the items of a gsi1 partition of the state table, or of
// the dead index's shards for a tenant's dead deliveries (TENANT#<t>#DEAD,
// its shards TENANT#<t>#DEAD#<n>).
func indexed(t *testing.T, pk string) int {
	t.Helper()
	index, key, pks := store.IndexTenant, "gsi1pk", []string{pk}
	if strings.HasSuffix(pk, "#DEAD") {
		index, key, pks = store.IndexDead, store.AttrDeadPK, nil
		for n := range store.DeadShards {
			pks = append(pks, pk+"#"+strconv.Itoa(n))
		}
	}
	total := 0
	for _, pk := range pks {
		out, err := env.ddb.Query(context.Background(), &dynamodb.QueryInput{
			TableName: &env.out.StateTableName, IndexName: aws.String(index),
			KeyConditionExpression:    aws.String(key + " = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		})
		require.NoError(t, err)
		total += len(out.Items)
	}
	return total
}

// partition counts the items of a state table partition.
func partition(t *testing.T, pk string) int {
	t.Helper()
	out, err := env.ddb.Query(context.Background(), &dynamodb.QueryInput{
		TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	require.NoError(t, err)
	return len(out.Items)
}

// statsItems counts an endpoint's hour items: of its store.StatsShards
// shards and of the unsharded partition of earlier versions.
func statsItems(t *testing.T, tenantID, endpointID string) int {
	t.Helper()
	n := partition(t, keys.Stats(tenantID, endpointID))
	for j := range store.StatsShards {
		n += partition(t, keys.StatsShard(tenantID, endpointID, j))
	}
	return n
}

// outboxTypes are the types of a tenant's outbox items as the message log
// and the erasure find them: the events of its message log pages (every
// shard, in the state table), each read from the outbox table, and the
// items of its sharded index (those of earlier producer libraries; the
// local stack has no by_tenant: scripts/deploy-local.sh).
func outboxTypes(t *testing.T, tenantID string) []string {
	t.Helper()
	ctx := context.Background()
	var typs []string
	pages := &messagelog.Pages{DB: env.ddb, Table: env.out.StateTableName}
	listed, err := pages.Tenant(ctx, tenantID, 1000)
	require.NoError(t, err)
	for _, pg := range listed {
		for _, e := range pg.Entries {
			out, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{
				TableName: &env.out.OutboxTableName, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: e.ID}},
			})
			require.NoError(t, err)
			if out.Item != nil {
				typs = append(typs, out.Item[outbox.AttrType].(*types.AttributeValueMemberS).Value)
			}
		}
	}
	for n := range outbox.LogShards {
		out, err := env.ddb.Query(ctx, &dynamodb.QueryInput{
			TableName: &env.out.OutboxTableName, IndexName: aws.String(outbox.IndexByTenantShard),
			KeyConditionExpression:    aws.String(outbox.AttrLogShard + " = :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: outbox.LogShardKey(tenantID, n)}},
		})
		require.NoError(t, err)
		for _, item := range out.Items {
			typs = append(typs, item["type"].(*types.AttributeValueMemberS).Value)
		}
	}
	return typs
}

// Two tenants with endpoints, deliveries delivered and dead, DLQ messages,
// counters, dead windows and delivery.dead events; erasing one through the
// API stops its key at once, and the job leaves nothing of it in the state
// table (every key kind), the outbox table, the DLQ or the API, and all of
// the other's.
func TestEraseTenant(t *testing.T) {
	ctx := context.Background()
	op, err := operatorKey()
	require.NoError(t, err)
	gone, kept := seedErasable(t, "erase_gone"), seedErasable(t, "erase_kept")
	for _, e := range []erasable{gone, kept} {
		waitDelivery(t, e.delivered, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		waitDelivery(t, e.dead, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
		waitInDLQ(t, e.dead, 60*time.Second)
	}
	// The deaths' delivery.dead summaries (the local deploy's window is 5 s)
	// are in each tenant's outbox before the erasure.
	for _, e := range []erasable{gone, kept} {
		require.Eventually(t, func() bool {
			for _, typ := range outboxTypes(t, e.id) {
				if typ == domain.OpDeliveryDead {
					return true
				}
			}
			return false
		}, 60*time.Second, time.Second, "the delivery.dead summary of %s", e.id)
		require.Equal(t, 1, indexed(t, "TENANT#"+e.id+"#DEADWINDOWS"))
		require.NotZero(t, statsItems(t, e.id, e.okEp))
	}
	_, stats := call(t, "GET", "/v1/admin/stats", op, nil)
	require.Contains(t, stats["dlq_depth_by_tenant"], gone.id)

	st, job := call(t, "DELETE", "/v1/admin/tenants/"+gone.id, op, nil)
	require.Equal(t, http.StatusAccepted, st, "%v", job)
	require.Equal(t, string(domain.KindErase), job["kind"])
	st, body := call(t, "GET", "/v1/endpoints", gone.key, nil)
	require.Equal(t, http.StatusUnauthorized, st, "its key stops at once: %v", body)
	done := waitJob(t, op, "/v1/admin/tenants/"+gone.id+"/erasure")
	t.Logf("erased: %v", done["erasure"])
	erased := done["erasure"].(map[string]any)["erased"].(map[string]any)
	// Its DLQ message is deleted by the erasure, or by the DLQ sweep, which
	// deletes a tombstoned tenant's and records nothing of it: the other
	// tests' replays run sweeps, and one may come between the tombstone
	// and the erasure's DLQ phase. Either way the DLQ holds nothing of it
	// (below).
	require.Contains(t, []any{0.0, 1.0}, erased[domain.EraseDLQ], "%v", erased)
	require.EqualValues(t, 2, erased[domain.EraseEndpoints], "%v", erased)

	// Nothing of the erased tenant is left: every key kind.
	_, err = env.store.Tenant(ctx, gone.id)
	require.ErrorIs(t, err, store.ErrNotFound)
	for _, id := range []string{gone.delivered, gone.dead} {
		_, err := env.store.Delivery(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound, id)
	}
	for _, kind := range []string{"KEYS", "DEAD", "REJECTED", "JOBS", "DEADWINDOWS"} {
		require.Zero(t, indexed(t, "TENANT#"+gone.id+"#"+kind), kind)
	}
	require.Equal(t, 1, partition(t, "TENANT#"+gone.id), "the tombstone alone (it expires by TTL)")
	for _, ep := range []string{gone.okEp, gone.deadEp} {
		require.Zero(t, statsItems(t, gone.id, ep))
	}
	require.Empty(t, outboxTypes(t, gone.id))
	for n := range messagelog.PageShards {
		require.Zero(t, partition(t, keys.EventPages(gone.id, n)), "no message log page of it left")
	}
	for _, id := range []string{"evt_ok_" + gone.id, "evt_dead_" + gone.id} {
		out, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: &env.out.OutboxTableName, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: id}}})
		require.NoError(t, err)
		require.Nil(t, out.Item, "its outbox item %s deleted", id)
	}
	// The DLQ is shared: its depth by tenant is read from the operator's
	// stats, never by receiving (which would hide other tests' messages).
	require.Eventually(t, func() bool { return dlqDepth(t, kept.id) == 1 }, 3*time.Minute, time.Second,
		"the other tenant's dead delivery is still in the DLQ's depth")
	require.Zero(t, dlqDepth(t, gone.id), "the DLQ's depth holds nothing of it")
	_, stats = call(t, "GET", "/v1/admin/stats", op, nil)
	require.NotContains(t, stats["dlq_depth_by_tenant"], gone.id, "the operator's listing no longer shows it")
	require.Contains(t, stats["dlq_depth_by_tenant"], kept.id)
	st, _ = call(t, "POST", "/v1/admin/tenants/"+gone.id+"/keys", op, nil)
	require.Equal(t, http.StatusNotFound, st)

	// The other tenant is untouched.
	for _, id := range []string{kept.delivered, kept.dead} {
		st, body := call(t, "GET", "/v1/deliveries/"+id, kept.key, nil)
		require.Equal(t, http.StatusOK, st, "%v", body)
	}
	require.Equal(t, 1, indexed(t, "TENANT#"+kept.id+"#KEYS"))
	require.Equal(t, 1, indexed(t, "TENANT#"+kept.id+"#DEAD"))
	require.Equal(t, 1, indexed(t, "TENANT#"+kept.id+"#DEADWINDOWS"))
	require.NotZero(t, statsItems(t, kept.id, kept.okEp))
	require.Len(t, outboxTypes(t, kept.id), 3, "its two events and its delivery.dead")
	st, body = call(t, "GET", "/v1/endpoints/"+kept.okEp, kept.key, nil)
	require.Equal(t, http.StatusOK, st, "%v", body)
}
