// Package events_test checks that the sample Lambda events in this folder are
// the payloads Lambda really sends: each decodes strictly (no unknown field)
// into aws-lambda-go's type for its source, and carries what the functions
// read.
package events_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/streamreprocess"
	"github.com/stretchr/testify/require"
)

func strict(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "%s must decode strictly", path)
}

func TestDynamoDBStreamSample(t *testing.T) {
	t.Parallel()
	var ev events.DynamoDBEvent
	strict(t, "dynamodb-outbox-insert.json", &ev)
	require.NotEmpty(t, ev.Records)
	for _, r := range ev.Records {
		require.Equal(t, "aws:dynamodb", r.EventSource)
		require.NotEmpty(t, r.Change.SequenceNumber)
		require.Equal(t, "NEW_IMAGE", r.Change.StreamViewType, "the outbox stream is NEW_IMAGE")
		if r.EventName == "INSERT" {
			require.NotEmpty(t, r.Change.NewImage)
		}
	}
}

func TestSQSDeliverySample(t *testing.T) {
	t.Parallel()
	var ev events.SQSEvent
	strict(t, "sqs-delivery.json", &ev)
	require.NotEmpty(t, ev.Records)
	for _, r := range ev.Records {
		require.Equal(t, "aws:sqs", r.EventSource)
		require.NotEmpty(t, r.Attributes["ApproximateReceiveCount"], "deliver reads the attempt from it")
		_, err := message.Decode(r.Body)
		require.NoError(t, err, "the body is a delivery message")
	}
}

// The failure record a DynamoDB stream mapping parks on its on-failure
// queue; the sample locates the batch of dynamodb-outbox-insert.json.
func TestDynamoDBStreamFailureSample(t *testing.T) {
	t.Parallel()
	var rec streamreprocess.FailureRecord
	strict(t, "dynamodb-stream-failure.json", &rec)
	raw, err := os.ReadFile("dynamodb-stream-failure.json")
	require.NoError(t, err)
	parsed, err := streamreprocess.ParseFailureRecord(string(raw))
	require.NoError(t, err)
	require.Equal(t, rec, parsed)

	var batch events.DynamoDBEvent
	strict(t, "dynamodb-outbox-insert.json", &batch)
	first, last := batch.Records[0], batch.Records[len(batch.Records)-1]
	b := parsed.Batch
	require.Equal(t, first.EventSourceArn, b.StreamARN)
	require.Equal(t, first.Change.SequenceNumber, b.StartSequenceNumber)
	require.Equal(t, last.Change.SequenceNumber, b.EndSequenceNumber)
	require.Equal(t, len(batch.Records), b.BatchSize)
	require.True(t, b.FirstArrival.Equal(first.Change.ApproximateCreationDateTime.Time))
	require.True(t, b.LastArrival.Equal(last.Change.ApproximateCreationDateTime.Time))
}
