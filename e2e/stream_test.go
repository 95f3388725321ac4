//go:build e2e

package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// streamInsert builds the DynamoDB stream event that an INSERT of ev produces.
func streamInsert(t *testing.T, ev outbox.Event) []byte {
	t.Helper()
	img := map[string]events.DynamoDBAttributeValue{
		outbox.AttrID:         events.NewStringAttribute(ev.ID),
		outbox.AttrTenantID:   events.NewStringAttribute(ev.TenantID),
		outbox.AttrType:       events.NewStringAttribute(ev.Type),
		outbox.AttrPayload:    events.NewStringAttribute(string(ev.Payload)),
		outbox.AttrOccurredAt: events.NewStringAttribute(ev.OccurredAt.UTC().Format(time.RFC3339Nano)),
	}
	if ev.Sequence != nil {
		img[outbox.AttrSequence] = events.NewNumberAttribute(strconv.FormatInt(*ev.Sequence, 10))
	}
	rec := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: "replayed-1", EventName: "INSERT", EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: "us-east-1",
		Change: events.DynamoDBStreamRecord{
			Keys:           map[string]events.DynamoDBAttributeValue{outbox.AttrID: events.NewStringAttribute(ev.ID)},
			NewImage:       img,
			SequenceNumber: "100000000000000000001",
			StreamViewType: "NEW_IMAGE",
		},
	}}}
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	return b
}

func lambdaInvoke(fn string, payload []byte) *lambda.InvokeInput {
	return &lambda.InvokeInput{FunctionName: &fn, Payload: payload}
}
