package outboxwrite

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
