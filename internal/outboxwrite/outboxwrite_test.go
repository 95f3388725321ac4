package outboxwrite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// putter answers every PutItem with err, keeping what it was asked.
type putter struct {
	in  []*dynamodb.PutItemInput
	err error
}

func (p *putter) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	p.in = append(p.in, in)
	if p.err != nil {
		return nil, p.err
	}
	return &dynamodb.PutItemOutput{}, nil
}

// PutNew puts with the outbox's condition, and takes an event already
// there as not written, not as an error; any other failure is one.
func TestPutNewWritesAnIDOnce(t *testing.T) {
	t.Parallel()
	item := map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: "evt_1"}}
	p := &putter{}
	written, err := PutNew(context.Background(), p, "outbox", item)
	require.NoError(t, err)
	require.True(t, written)
	require.Len(t, p.in, 1)
	want := outbox.PutIfNew("outbox", item)
	require.Equal(t, *want.TableName, *p.in[0].TableName)
	require.Equal(t, item, p.in[0].Item)
	require.Equal(t, *want.ConditionExpression, *p.in[0].ConditionExpression)
	require.Equal(t, want.ExpressionAttributeNames, p.in[0].ExpressionAttributeNames)

	p.err = &types.ConditionalCheckFailedException{}
	written, err = PutNew(context.Background(), p, "outbox", item)
	require.NoError(t, err, "an event with the id is there: not an error")
	require.False(t, written)

	p.err = errors.New("throttled")
	written, err = PutNew(context.Background(), p, "outbox", item)
	require.ErrorIs(t, err, p.err)
	require.False(t, written)
}

// One tenant's events at 10,000 a second, every one within one simulated
// second, into an outbox with DynamoDB's per-key limits: on the sharded
// message log index no key value goes over its 1,000 WCU (16 shards, about
// 625 each), so none of the producer's writes throttles; on the unsharded
// by_tenant, kept for the upgrade, the tenant's one key value refuses
// them from the 1,001st (docs/performance.md, "Hot keys").
func TestOneTenantsEventsAt10000PerSecondOnTheShardedLogIndex(t *testing.T) {
	t.Parallel()
	second := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, legacy := range []bool{false, true} {
		f := dynamofake.New("outbox", outbox.AttrID)
		f.Limits, f.Now = dynamofake.DynamoDBLimits(), func() time.Time { return second }
		include := []string{outbox.AttrType, outbox.AttrOccurredAt, outbox.AttrEndpointID}
		f.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey, include...)
		if legacy {
			f.AddIndex(outbox.IndexByTenant, outbox.AttrTenantID, outbox.AttrLogKey, include...)
		}
		refused := 0
		for i := range 10_000 {
			item, err := outbox.Event{ID: fmt.Sprintf("evt_%05d", i), TenantID: "acme", Type: "order.created", Payload: []byte(`{"order":1}`),
				OccurredAt: second.Add(time.Duration(i) * 100 * time.Microsecond)}.Item()
			require.NoError(t, err)
			if _, err := PutNew(context.Background(), f, "outbox", item); err != nil {
				var pte *types.ProvisionedThroughputExceededException
				require.ErrorAs(t, err, &pte)
				refused++
			}
		}
		hot := f.Hottest()
		if legacy {
			require.Equal(t, 9_000, refused, "by_tenant: one key value a tenant, 1,000 WCU")
			require.Equal(t, outbox.IndexByTenant, hot[0].Index, "%v", hot[0])
			continue
		}
		require.Zero(t, refused, "%v", hot[:3])
		for _, c := range hot {
			require.Less(t, c.WCU, 1000.0, "%v", c)
		}
		require.Equal(t, outbox.IndexByTenantShard, hot[0].Index, "%v", hot[0])
		require.Greater(t, hot[0].WCU, 500.0, "the hottest shard, near 10,000/16: %v", hot[0])
		t.Logf("sharded: hottest %v", hot[0])
	}
}
