package streamreprocess

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/hookline/hookline/outbox"
)

// Scanner reads the whole outbox table, a page at a time.
type Scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ Scanner = (*dynamodb.Client)(nil)

// window is a closed time interval.
type window struct{ from, to time.Time }

// outboxWindow is the time in which the events of a batch occurred, give or
// take margin: the outbox keeps no write time, and an event's occurred_at
// is its producer's clock, usually a moment before the write that put it
// on the stream.
func outboxWindow(b BatchInfo, margin time.Duration) window {
	return window{from: b.FirstArrival.Add(-margin), to: b.LastArrival.Add(margin)}
}

// mergeWindows sorts windows and joins those that overlap: merged is
// sorted and disjoint, and ws[i] lies within merged[index[i]].
func mergeWindows(ws []window) (merged []window, index []int) {
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return ws[a].from.Compare(ws[b].from) })
	index = make([]int, len(ws))
	for _, i := range order {
		w := ws[i]
		if n := len(merged); n > 0 && !w.from.After(merged[n-1].to) {
			if w.to.After(merged[n-1].to) {
				merged[n-1].to = w.to
			}
			index[i] = n - 1
			continue
		}
		merged = append(merged, w)
		index[i] = len(merged) - 1
	}
	return merged, index
}

// locate answers the index of the window of merged (sorted, disjoint)
// that holds t, or -1.
func locate(merged []window, t time.Time) int {
	i := sort.Search(len(merged), func(i int) bool { return !merged[i].to.Before(t) })
	if i < len(merged) && !t.Before(merged[i].from) {
		return i
	}
	return -1
}

// outboxResult is what reprocessing from the outbox did.
type outboxResult struct {
	// Events is how many outbox items were processed; Found, how many of
	// them in each window given.
	Events int
	Found  []int
	// Unplaced counts the items whose occurred_at cannot be read, so that
	// they cannot be placed in time; they are left alone.
	Unplaced int
	Retries  int
}

// fromOutbox processes again every outbox event that occurred in one of
// the windows: it scans the whole table (a page at a time, each page's
// events invoked before the next page is read) and builds for each event
// the INSERT record the stream carried, its NewImage the item.
func (r *Reprocessor) fromOutbox(ctx context.Context, ws []window, streamARN string) (res outboxResult, err error) {
	merged, index := mergeWindows(ws)
	perMerged := make([]int, len(merged))
	res.Found = make([]int, len(ws))
	defer func() { // whatever the return, each window's count so far
		for i, m := range index {
			res.Found[i] = perMerged[m]
		}
	}()
	var start map[string]ddbtypes.AttributeValue
	run := r.now().UTC().Format("20060102T150405")
	for {
		page, err := r.Outbox.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(r.OutboxTable), ExclusiveStartKey: start})
		if err != nil {
			return res, fmt.Errorf("scan the outbox table %s: %w", r.OutboxTable, err)
		}
		var recs []events.DynamoDBEventRecord
		for _, item := range page.Items {
			at, ok := occurredAt(item)
			if !ok {
				res.Unplaced++
				continue
			}
			w := locate(merged, at)
			if w < 0 {
				continue
			}
			perMerged[w]++
			rec, err := r.outboxRecord(item, streamARN, run+"-"+strconv.Itoa(res.Events+len(recs)+1))
			if err != nil {
				return res, err
			}
			recs = append(recs, rec)
		}
		if len(recs) > 0 {
			bodies, err := payloads(recs)
			if err != nil {
				return res, err
			}
			for _, p := range bodies {
				retries, err := r.invoke(ctx, p)
				res.Retries += retries
				if err != nil {
					return res, err
				}
			}
			res.Events += len(recs)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return res, nil
		}
		start = page.LastEvaluatedKey
	}
}

// occurredAt reads an item's occurred_at.
func occurredAt(item map[string]ddbtypes.AttributeValue) (time.Time, bool) {
	s, ok := item[outbox.AttrOccurredAt].(*ddbtypes.AttributeValueMemberS)
	if !ok {
		return time.Time{}, false
	}
	t, err := outbox.ParseOccurredAt(s.Value)
	return t, err == nil
}

// outboxRecord is the stream INSERT record of an outbox item. Its sequence
// number is made up, "outbox-<run>-<n>": the item's own is gone with the
// stream record (enqueue only logs it, and keys by it the rejection of an
// item whose id cannot key one).
func (r *Reprocessor) outboxRecord(item map[string]ddbtypes.AttributeValue, streamARN, seq string) (events.DynamoDBEventRecord, error) {
	img, err := eventImage(item)
	if err != nil {
		return events.DynamoDBEventRecord{}, fmt.Errorf("outbox item: %w", err)
	}
	keys := map[string]events.DynamoDBAttributeValue{}
	if id, ok := img[outbox.AttrID]; ok {
		keys[outbox.AttrID] = id
	}
	return events.DynamoDBEventRecord{
		AWSRegion: r.Region, EventID: "outbox-" + seq, EventName: string(events.DynamoDBOperationTypeInsert),
		EventSource: "aws:dynamodb", EventVersion: "1.1", EventSourceArn: streamARN,
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: r.now()},
			Keys:                        keys, NewImage: img,
			SequenceNumber: "outbox-" + seq, StreamViewType: string(streamtypes.StreamViewTypeNewImage),
		},
	}, nil
}
