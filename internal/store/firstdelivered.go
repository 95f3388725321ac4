package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// FirstAttempt is a delivery delivered at its first attempt: the delivery
// as read before it (its ids alone: it had no record) and the attempt.
type FirstAttempt struct {
	Delivery domain.Delivery
	Attempt  domain.Attempt
}

// maxBatchWrites is DynamoDB's limit on the requests of one
// BatchWriteItem.
const maxBatchWrites = 25

// unprocessedTries bounds how often RecordFirstAttempts sends the items
// DynamoDB leaves unprocessed (a key value over its throughput), in all.
const unprocessedTries = 3

// RecordFirstAttempts records deliveries delivered at their first attempt
// that had no record when read, packed in outcome pages (outcomes.go): one
// item per tenant and second of the deliveries' events (at most
// maxOutcomeRows rows), 25 pages to a BatchWriteItem, so that a deliver
// batch of ten of one second writes about 2 write units where a record
// each took 10 (issue 37). Each row holds what the record held (ids,
// attempt, answer, excerpt, expiry); Delivery, Load and the delivery log
// read it as the record.
//
// BatchWriteItem takes no condition, and a page is no record: a record
// another writer created between the read and this write (another copy's
// attempt, a cancel, a death recorded before another copy's last attempt)
// stays, and wins over the row when read, but for a record no attempt
// wrote (a cancel's: the row, delivered, is the truth; rowMayWin).
//
// It returns the indexes of firsts not written, for the caller to record
// one at a time with RecordAttempt: a delivery a second time in firsts
// (its first occurrence is written), one with a legacy id (its record has
// a partition of its own), those of a page whose request failed (and its
// error), and those of a page still unprocessed after unprocessedTries.
func (s *Store) RecordFirstAttempts(ctx context.Context, firsts []FirstAttempt) (notWritten []int, err error) {
	now := s.Now().UTC()
	expires := now.Add(s.Retention).Unix()
	seen := map[string]bool{}
	pages := map[string]*outcomePage{}
	var order []*outcomePage
	for i, f := range firsts {
		d := f.Delivery
		p, ok := domain.ParseDeliveryID(d.DeliveryID)
		if seen[d.DeliveryID] || d.State != "" || !ok || d.TenantID == "" {
			notWritten = append(notWritten, i)
			continue
		}
		seen[d.DeliveryID] = true
		sec := outcomeSecond(p.At)
		k := d.TenantID + "\x00" + sec
		pg := pages[k]
		if pg == nil || len(pg.rows) == maxOutcomeRows {
			pg = &outcomePage{tenant: d.TenantID, th: p.TenantHash, sec: sec}
			pages[k] = pg
			order = append(order, pg)
		}
		a := f.Attempt
		pg.rows = append(pg.rows, outcomeRow{
			ID: d.DeliveryID, Endpoint: d.EndpointID, Event: d.EventID, Type: d.EventType,
			Number: a.Number, At: a.At.UnixMilli(), Status: a.Status, LatencyMS: a.LatencyMS, Error: a.Error, Excerpt: a.Excerpt,
			Expires: expires,
		})
		pg.at = append(pg.at, i)
	}
	reqs := make([]types.WriteRequest, 0, len(order))
	of := map[string]*outcomePage{} // a page's sort key: the page
	for _, pg := range order {
		item, ierr := pg.item()
		if ierr != nil {
			notWritten = append(notWritten, pg.at...)
			continue
		}
		of[stringAttr(item, "sk")] = pg
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	left, werr := BatchWrite(ctx, s.db, s.table, reqs, unprocessedTries, 25*time.Millisecond)
	if werr != nil {
		err = fmt.Errorf("record first attempts in %d outcome pages: %w", len(left), werr)
	}
	for _, r := range left {
		notWritten = append(notWritten, of[stringAttr(r.PutRequest.Item, "sk")].at...)
	}
	slices.Sort(notWritten)
	return notWritten, err
}

// BatchWriter is what BatchWrite needs of DynamoDB.
type BatchWriter interface {
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// BatchWrite writes reqs to table, maxBatchWrites to a BatchWriteItem,
// and writes again what DynamoDB leaves unprocessed (a key value over its
// throughput), in at most rounds rounds, waiting backoff before the
// second and twice as long before each later one (as batchGet asks again
// for its keys). It returns the requests not written: those of a request
// that failed (and the last such error: the others' requests are still
// sent), and those still unprocessed after the last round.
// RecordFirstAttempts (outcome pages) and package messagelog (message log
// pages) write with it.
func BatchWrite(ctx context.Context, db BatchWriter, table string, reqs []types.WriteRequest, rounds int, backoff time.Duration) (left []types.WriteRequest, err error) {
	for round := 0; len(reqs) > 0; round++ {
		if round == rounds {
			return append(left, reqs...), err
		}
		if round > 0 {
			select {
			case <-time.After(backoff << (round - 1)):
			case <-ctx.Done():
				return append(left, reqs...), ctx.Err()
			}
		}
		var again []types.WriteRequest
		for chunk := range slices.Chunk(reqs, maxBatchWrites) {
			out, cerr := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: chunk}})
			if cerr != nil {
				left, err = append(left, chunk...), cerr
				continue
			}
			again = append(again, out.UnprocessedItems[table]...)
		}
		reqs = again
	}
	return left, err
}
