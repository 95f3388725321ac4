// Package streamsfake is one in-memory DynamoDB Streams for tests of any
// package, held to the rules of the service that hookline's readers meet
// (package streamreprocess):
//
//   - an unknown stream or shard is a ResourceNotFoundException;
//   - GetShardIterator takes AT_SEQUENCE_NUMBER and AFTER_SEQUENCE_NUMBER
//     (with a sequence number), TRIM_HORIZON and LATEST; an iterator at or
//     after a trimmed record's sequence number (one at or before the last
//     trimmed one) is refused with TrimmedDataAccessException;
//   - GetRecords takes a Limit of 1 to 1,000 (MaxLimit; none is 1,000)
//     and answers at most that many records and at most 1 MB (MaxBytes, by
//     each record's SizeBytes; a first record always comes), in sequence
//     order; a trimmed position is a TrimmedDataAccessException; a closed
//     shard read to its end answers no next iterator.
//
// A test builds the shards (AddShard), trims and closes them, and makes the
// service answer short or empty pages (PageSize, EmptyReads), as it may.
package streamsfake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// DynamoDB Streams' limits on GetRecords, as AWS documents them.
const (
	MaxLimit = 1000
	MaxBytes = 1 << 20
)

// Shard is one shard's records, in sequence order; a test changes it
// before the code under test reads it.
type Shard struct {
	Records []types.Record
	// Trimmed records, Records[:Trimmed], are past the retention: gone.
	Trimmed int
	// Closed is a shard that takes no more records (split or disabled).
	Closed bool
}

// Streams is a fake DynamoDB Streams. Safe for concurrent use; set
// PageSize and EmptyReads before use.
type Streams struct {
	mu     sync.Mutex
	shards map[[2]string]*Shard // by stream ARN and shard id
	reads  int
	// PageSize, when set, caps a page lower than Limit (the service may
	// answer fewer records than asked for).
	PageSize int
	// EmptyReads makes that many GetRecords calls answer no record first
	// (as a read across an empty part of a shard does).
	EmptyReads int
}

// New returns a DynamoDB Streams with no stream.
func New() *Streams { return &Streams{shards: map[[2]string]*Shard{}} }

// AddShard adds (or replaces) the shard shardID of stream streamARN, holding
// records, and returns it.
func (s *Streams) AddShard(streamARN, shardID string, records ...types.Record) *Shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := &Shard{Records: records}
	s.shards[[2]string{streamARN, shardID}] = sh
	return sh
}

// Shard returns the shard shardID of stream streamARN, nil if none.
func (s *Streams) Shard(streamARN, shardID string) *Shard {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shards[[2]string{streamARN, shardID}]
}

// Reads is how many GetRecords calls were made.
func (s *Streams) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

func (s *Streams) shard(streamARN, shardID string) (*Shard, error) {
	if !s.hasStream(streamARN) {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found: Stream: " + streamARN + " not found")}
	}
	sh, ok := s.shards[[2]string{streamARN, shardID}]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found: Shard does not exist")}
	}
	return sh, nil
}

func (s *Streams) hasStream(arn string) bool {
	for k := range s.shards {
		if k[0] == arn {
			return true
		}
	}
	return false
}

// GetShardIterator answers an iterator of the shard (see the package's
// rules).
func (s *Streams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, err := s.shard(aws.ToString(in.StreamArn), aws.ToString(in.ShardId))
	if err != nil {
		return nil, err
	}
	pos, err := sh.position(in.ShardIteratorType, in.SequenceNumber)
	if err != nil {
		return nil, err
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(iterator(aws.ToString(in.StreamArn), aws.ToString(in.ShardId), pos))}, nil
}

// position is where an iterator of type typ (at or after seq) starts.
func (sh *Shard) position(typ types.ShardIteratorType, seq *string) (int, error) {
	switch typ {
	case types.ShardIteratorTypeTrimHorizon:
		return sh.Trimmed, nil
	case types.ShardIteratorTypeLatest:
		return len(sh.Records), nil
	case types.ShardIteratorTypeAtSequenceNumber, types.ShardIteratorTypeAfterSequenceNumber:
	default:
		return 0, fmt.Errorf("ValidationException: ShardIteratorType %q", typ)
	}
	if seq == nil {
		return 0, fmt.Errorf("ValidationException: %s needs a SequenceNumber", typ)
	}
	if sh.Trimmed > 0 && compareSequence(*seq, aws.ToString(sh.Records[sh.Trimmed-1].Dynamodb.SequenceNumber)) <= 0 {
		return 0, &types.TrimmedDataAccessException{Message: aws.String("the operation attempted to read past the oldest stream record in a shard")}
	}
	for i := sh.Trimmed; i < len(sh.Records); i++ {
		c := compareSequence(aws.ToString(sh.Records[i].Dynamodb.SequenceNumber), *seq)
		if c > 0 || (c == 0 && typ == types.ShardIteratorTypeAtSequenceNumber) {
			return i, nil
		}
	}
	return len(sh.Records), nil
}

func iterator(streamARN, shardID string, pos int) string {
	return streamARN + "|" + shardID + "|" + strconv.Itoa(pos)
}

func parseIterator(it string) (arn, shardID string, pos int, err error) {
	parts := strings.Split(it, "|")
	if len(parts) != 3 {
		return "", "", 0, errors.New("ValidationException: invalid shard iterator")
	}
	pos, err = strconv.Atoi(parts[2])
	if err != nil {
		return "", "", 0, errors.New("ValidationException: invalid shard iterator")
	}
	return parts[0], parts[1], pos, nil
}

// GetRecords answers the records from the iterator's position (see the
// package's rules).
func (s *Streams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	limit := MaxLimit
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	if limit < 1 || limit > MaxLimit {
		return nil, fmt.Errorf("ValidationException: Limit %d is not within 1 and %d", limit, MaxLimit)
	}
	arn, id, pos, err := parseIterator(aws.ToString(in.ShardIterator))
	if err != nil {
		return nil, err
	}
	sh, err := s.shard(arn, id)
	if err != nil {
		return nil, err
	}
	if pos < sh.Trimmed {
		return nil, &types.TrimmedDataAccessException{Message: aws.String("the operation attempted to read past the oldest stream record in a shard")}
	}
	if s.EmptyReads > 0 {
		s.EmptyReads--
		return &dynamodbstreams.GetRecordsOutput{NextShardIterator: aws.String(iterator(arn, id, pos)), Records: []types.Record{}}, nil
	}
	if s.PageSize > 0 {
		limit = min(limit, s.PageSize)
	}
	out := &dynamodbstreams.GetRecordsOutput{Records: []types.Record{}}
	size := 0
	for pos < len(sh.Records) && len(out.Records) < limit {
		n := int(aws.ToInt64(sh.Records[pos].Dynamodb.SizeBytes))
		if len(out.Records) > 0 && size+n > MaxBytes {
			break
		}
		size += n
		out.Records = append(out.Records, sh.Records[pos])
		pos++
	}
	if !(sh.Closed && pos == len(sh.Records)) {
		out.NextShardIterator = aws.String(iterator(arn, id, pos))
	}
	return out, nil
}

// compareSequence compares two DynamoDB Streams sequence numbers (decimal,
// no leading zero): -1, 0 or 1.
func compareSequence(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
