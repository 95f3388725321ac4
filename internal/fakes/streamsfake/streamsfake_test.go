package streamsfake_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/hookline/hookline/internal/fakes/streamsfake"
	"github.com/stretchr/testify/require"
)

const (
	arn   = "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2026-12-01T00:00:00.000"
	shard = "shardId-1"
)

// records returns n records, sequence numbers 100.., of size bytes each.
func records(n, size int) []types.Record {
	var out []types.Record
	for i := range n {
		out = append(out, types.Record{Dynamodb: &types.StreamRecord{SequenceNumber: aws.String(strconv.Itoa(100 + i)), SizeBytes: aws.Int64(int64(size))}})
	}
	return out
}

func iter(t *testing.T, s *streamsfake.Streams, typ types.ShardIteratorType, seq string) (*string, error) {
	t.Helper()
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shard), ShardIteratorType: typ}
	if seq != "" {
		in.SequenceNumber = aws.String(seq)
	}
	out, err := s.GetShardIterator(context.Background(), in)
	if err != nil {
		return nil, err
	}
	return out.ShardIterator, nil
}

func read(s *streamsfake.Streams, it *string, limit int32) (*dynamodbstreams.GetRecordsOutput, error) {
	return s.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(limit)})
}

func TestGetRecordsLimit(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(1500, 10)...)
	it, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	_, err = read(s, it, 1001)
	require.ErrorContains(t, err, "ValidationException", "Limit over 1,000")
	_, err = read(s, it, 0)
	require.ErrorContains(t, err, "ValidationException", "Limit 0")
	out, err := s.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: it})
	require.NoError(t, err)
	require.Len(t, out.Records, streamsfake.MaxLimit, "no Limit is 1,000")
	require.Equal(t, 3, s.Reads())
}

func TestGetRecordsStopsAtOneMB(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(5, 400<<10)...)
	it, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	out, err := read(s, it, 1000)
	require.NoError(t, err)
	require.Len(t, out.Records, 2, "a third 400 KiB record would pass 1 MB")
	out, err = read(s, out.NextShardIterator, 1000)
	require.NoError(t, err)
	require.Equal(t, "102", *out.Records[0].Dynamodb.SequenceNumber)
}

func TestIteratorPositions(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(3, 10)...)
	for typ, want := range map[types.ShardIteratorType]string{types.ShardIteratorTypeAtSequenceNumber: "101", types.ShardIteratorTypeAfterSequenceNumber: "102"} {
		it, err := iter(t, s, typ, "101")
		require.NoError(t, err)
		out, err := read(s, it, 1)
		require.NoError(t, err)
		require.Equal(t, want, *out.Records[0].Dynamodb.SequenceNumber, typ)
	}
	_, err := iter(t, s, types.ShardIteratorTypeAtSequenceNumber, "")
	require.ErrorContains(t, err, "ValidationException", "AT_SEQUENCE_NUMBER needs a sequence number")
	it, err := iter(t, s, types.ShardIteratorTypeLatest, "")
	require.NoError(t, err)
	out, err := read(s, it, 10)
	require.NoError(t, err)
	require.Empty(t, out.Records)
	require.NotNil(t, out.NextShardIterator, "an open shard goes on")
}

func TestTrimmedData(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(5, 10)...)
	old, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	s.Shard(arn, shard).Trimmed = 2
	var trimmed *types.TrimmedDataAccessException
	_, err = iter(t, s, types.ShardIteratorTypeAtSequenceNumber, "101")
	require.True(t, errors.As(err, &trimmed), "an iterator at a trimmed record: %v", err)
	_, err = read(s, old, 10)
	require.True(t, errors.As(err, &trimmed), "reading from a trimmed position: %v", err)
	it, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	out, err := read(s, it, 10)
	require.NoError(t, err)
	require.Equal(t, "102", *out.Records[0].Dynamodb.SequenceNumber, "TRIM_HORIZON is the oldest record left")
}

func TestUnknownStreamOrShardAndClosedShard(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(2, 10)...).Closed = true
	var notFound *types.ResourceNotFoundException
	_, err := s.GetShardIterator(context.Background(), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn + "x"), ShardId: aws.String(shard), ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	require.True(t, errors.As(err, &notFound), "unknown stream: %v", err)
	_, err = s.GetShardIterator(context.Background(), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String("shardId-2"), ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	require.True(t, errors.As(err, &notFound), "unknown shard: %v", err)
	_, err = read(s, aws.String("nonsense"), 10)
	require.ErrorContains(t, err, "ValidationException")

	it, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	out, err := read(s, it, 10)
	require.NoError(t, err)
	require.Len(t, out.Records, 2)
	require.Nil(t, out.NextShardIterator, "a closed shard read to its end has no next iterator")
}

func TestShortAndEmptyPages(t *testing.T) {
	t.Parallel()
	s := streamsfake.New()
	s.AddShard(arn, shard, records(5, 10)...)
	s.PageSize, s.EmptyReads = 2, 1
	it, err := iter(t, s, types.ShardIteratorTypeTrimHorizon, "")
	require.NoError(t, err)
	out, err := read(s, it, 10)
	require.NoError(t, err)
	require.Empty(t, out.Records, "the empty read")
	out, err = read(s, out.NextShardIterator, 10)
	require.NoError(t, err)
	require.Len(t, out.Records, 2, "PageSize caps the page")
}
