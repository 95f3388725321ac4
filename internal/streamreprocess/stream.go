package streamreprocess

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Streams is what reprocessing reads of DynamoDB Streams.
type Streams interface {
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ Streams = (*dynamodbstreams.Client)(nil)

// ErrGone is the answer for a batch whose records are no longer in the
// stream: DynamoDB Streams keeps a record 24 hours.
var ErrGone = errors.New("the batch's records are no longer in the stream")

// getRecordsLimit is the most records one GetRecords call may ask for.
const getRecordsLimit = 1000

// maxEmptyReads bounds the GetRecords calls in a row that answer no record
// (a read may cross an empty part of a shard) before the batch is given up
// for this run.
const maxEmptyReads = 25

// readBatch reads the batch's records from its shard, in order: from the
// start sequence number to the end one, both included.
func (r *Reprocessor) readBatch(ctx context.Context, b BatchInfo) ([]streamtypes.Record, error) {
	it, err := r.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn:         aws.String(b.StreamARN),
		ShardId:           aws.String(b.ShardID),
		ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber,
		SequenceNumber:    aws.String(b.StartSequenceNumber),
	})
	if err != nil {
		return nil, r.streamError(b, fmt.Errorf("shard iterator at %s in %s: %w", b.StartSequenceNumber, b.ShardID, err))
	}
	iterator := it.ShardIterator
	var recs []streamtypes.Record
	empty := 0
	for {
		if iterator == nil {
			last := b.StartSequenceNumber
			if len(recs) > 0 {
				last = aws.ToString(recs[len(recs)-1].Dynamodb.SequenceNumber)
			}
			return nil, fmt.Errorf("%w: shard %s ends at %s, before the batch's last record %s", ErrGone, b.ShardID, last, b.EndSequenceNumber)
		}
		out, err := r.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iterator, Limit: aws.Int32(getRecordsLimit)})
		if err != nil {
			return nil, r.streamError(b, fmt.Errorf("read shard %s: %w", b.ShardID, err))
		}
		for _, rec := range out.Records {
			if rec.Dynamodb == nil || rec.Dynamodb.SequenceNumber == nil {
				return nil, fmt.Errorf("shard %s: a record without a sequence number", b.ShardID)
			}
			seq := *rec.Dynamodb.SequenceNumber
			if compareSequence(seq, b.StartSequenceNumber) < 0 {
				continue
			}
			if len(recs) == 0 && compareSequence(seq, b.StartSequenceNumber) != 0 {
				return nil, fmt.Errorf("%w: the batch's first record %s is not in shard %s (the next one is %s)", ErrGone, b.StartSequenceNumber, b.ShardID, seq)
			}
			if compareSequence(seq, b.EndSequenceNumber) > 0 {
				return recs, nil
			}
			recs = append(recs, rec)
			if compareSequence(seq, b.EndSequenceNumber) == 0 {
				return recs, nil
			}
		}
		if len(out.Records) > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			return nil, fmt.Errorf("shard %s: %d reads in a row found no record before %s", b.ShardID, empty, b.EndSequenceNumber)
		} else if err := r.sleep(ctx, r.emptyReadPause()); err != nil {
			return nil, err
		}
		iterator = out.NextShardIterator
	}
}

// streamError classifies a DynamoDB Streams error: trimmed data, or a
// shard or stream that no longer exists for a batch past the retention, is
// ErrGone; anything else (throttling, permissions, a wrong region) is a
// failure to retry in a later run.
func (r *Reprocessor) streamError(b BatchInfo, err error) error {
	var trimmed *streamtypes.TrimmedDataAccessException
	if errors.As(err, &trimmed) {
		return fmt.Errorf("%w: %w", ErrGone, err)
	}
	var notFound *streamtypes.ResourceNotFoundException
	if errors.As(err, &notFound) {
		if r.now().Sub(b.FirstArrival) >= streamRetention {
			return fmt.Errorf("%w: %w", ErrGone, err)
		}
		return fmt.Errorf("%w (the batch is younger than the stream's retention: is this the stream's account and region?)", err)
	}
	return err
}

// eventRecord is the record Lambda puts in a DynamoDB stream event for a
// stream record: the same fields, under the names and in the encoding the
// enqueue function decodes.
func eventRecord(rec streamtypes.Record, streamARN string) (events.DynamoDBEventRecord, error) {
	d := rec.Dynamodb
	out := events.DynamoDBEventRecord{
		AWSRegion:      aws.ToString(rec.AwsRegion),
		EventID:        aws.ToString(rec.EventID),
		EventName:      string(rec.EventName),
		EventSource:    aws.ToString(rec.EventSource),
		EventVersion:   aws.ToString(rec.EventVersion),
		EventSourceArn: streamARN,
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: aws.ToString(d.SequenceNumber),
			SizeBytes:      aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
		},
	}
	if d.ApproximateCreationDateTime != nil {
		out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
	}
	if rec.UserIdentity != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(rec.UserIdentity.Type), PrincipalID: aws.ToString(rec.UserIdentity.PrincipalId)}
	}
	var err error
	for _, img := range []struct {
		from map[string]streamtypes.AttributeValue
		to   *map[string]events.DynamoDBAttributeValue
	}{{d.Keys, &out.Change.Keys}, {d.NewImage, &out.Change.NewImage}, {d.OldImage, &out.Change.OldImage}} {
		if img.from == nil {
			continue
		}
		var item map[string]ddbtypes.AttributeValue
		if item, err = attributevalue.FromDynamoDBStreamsMap(img.from); err != nil {
			return out, fmt.Errorf("record %s: %w", out.Change.SequenceNumber, err)
		}
		if *img.to, err = eventImage(item); err != nil {
			return out, fmt.Errorf("record %s: %w", out.Change.SequenceNumber, err)
		}
	}
	return out, nil
}

// eventImage converts an item to the attribute values of a Lambda event.
func eventImage(item map[string]ddbtypes.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		a, err := eventAttribute(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = a
	}
	return out, nil
}

func eventAttribute(v ddbtypes.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *ddbtypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *ddbtypes.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			a, err := eventAttribute(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			list[i] = a
		}
		return events.NewListAttribute(list), nil
	case *ddbtypes.AttributeValueMemberM:
		m, err := eventImage(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unsupported attribute value %T", v)
}
