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
// second, into an outbox with DynamoDB's per-key limits and the message
// log's indexes: today's items carry no index key (the message log lists
// them in its pages, messagelog.Pages), so no index is written and none of
// the producer's writes throttles, even with the unsharded by_tenant kept
// for an upgrade (whose one key value a tenant took 1,000 writes a second
// when items carried log_sk: docs/performance.md, "Hot keys").
func TestOneTenantsEventsAt10000PerSecondWriteNoIndex(t *testing.T) {
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
		for i := range 10_000 {
			item, err := outbox.Event{ID: fmt.Sprintf("evt_%05d", i), TenantID: "acme", Type: "order.created", Payload: []byte(`{"order":1}`),
				OccurredAt: second.Add(time.Duration(i) * 100 * time.Microsecond)}.Item()
			require.NoError(t, err)
			_, err = PutNew(context.Background(), f, "outbox", item)
			require.NoError(t, err)
		}
		for _, c := range f.Hottest() {
			require.Empty(t, c.Index, "legacy=%v: no index written: %v", legacy, c)
		}
	}
}
