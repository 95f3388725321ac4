package store

import (
	"context"
	"fmt"
	"strconv"
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
// that had no record when read: each record is written whole, as
// RecordAttempt's first write of a delivered delivery writes it (its ids,
// creation time, expiry and delivery log keys; delivered, one attempt,
// its log, its answer), 25 to a BatchWriteItem, so that a deliver batch of
// ten writes its records in one call where RecordAttempt makes one each
// (issue 37: a clean batch is two DynamoDB calls, its read and this).
//
// BatchWriteItem takes no condition: a record another writer created
// between the read and this write is replaced, where RecordAttempt would
// have applied the attempt to it. What another writer can create there
// is another copy's attempt (the attempt log then shows one of the two
// attempts, the receiver got both, as it may from any copy), a cancel's
// record (the delivery, delivered, shows delivered: the truth, where
// RecordAttempt keeps it cancelled), or a death recorded before another
// copy's last attempt (delivered replaces it, and that copy's attempt
// then leaves it delivered, so the tenant's DLQ depth keeps the death
// until the daily reconciliation corrects it). A record is never replaced
// by an older state: every write here is delivered.
//
// It returns the indexes of firsts not written, for the caller to record
// one at a time with RecordAttempt: a delivery a second time in firsts
// (its first occurrence is written), the items of a request that failed
// (and its error), and those still unprocessed after unprocessedTries.
func (s *Store) RecordFirstAttempts(ctx context.Context, firsts []FirstAttempt) (notWritten []int, err error) {
	now := s.Now().UTC()
	at := map[string]int{} // a delivery id's index in firsts
	var reqs []types.WriteRequest
	for i, f := range firsts {
		if _, twice := at[f.Delivery.DeliveryID]; twice || f.Delivery.State != "" {
			notWritten = append(notWritten, i)
			continue
		}
		item, err := s.firstAttemptItem(f, now)
		if err != nil {
			notWritten = append(notWritten, i)
			continue
		}
		at[f.Delivery.DeliveryID] = i
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for start := 0; start < len(reqs); start += maxBatchWrites {
		left, werr := s.batchWrite(ctx, reqs[start:min(start+maxBatchWrites, len(reqs))])
		if werr != nil {
			err = fmt.Errorf("record %d first attempts: %w", len(left), werr)
		}
		for _, r := range left {
			notWritten = append(notWritten, at[deliveryIDOf(r.PutRequest.Item)])
		}
	}
	return notWritten, err
}

// firstAttemptItem is the record of f delivered at now.
func (s *Store) firstAttemptItem(f FirstAttempt, now time.Time) (map[string]types.AttributeValue, error) {
	logAV, err := attemptLogValue(nil, f.Attempt)
	if err != nil {
		return nil, err
	}
	item := s.creationAttributes(f.Delivery, now)
	for k, v := range deliveryKey(f.Delivery.DeliveryID) {
		item[k] = v
	}
	item["state"] = &types.AttributeValueMemberS{Value: string(domain.StateDelivered)}
	item["last_status"] = &types.AttributeValueMemberN{Value: strconv.Itoa(f.Attempt.Status)}
	item["last_error"] = &types.AttributeValueMemberS{Value: f.Attempt.Error}
	item["attempt_log"] = logAV
	item["attempts"] = &types.AttributeValueMemberN{Value: "1"}
	item["delivered_at"] = timeValue(f.Attempt.At)
	return item, nil
}

// batchWrite writes reqs (at most maxBatchWrites) in one BatchWriteItem,
// sending again what DynamoDB leaves unprocessed (as batchGet does its
// keys), at most unprocessedTries times in all. It returns the requests
// not written: all of them when a request fails (with its error), the
// unprocessed ones after the last try.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) (left []types.WriteRequest, err error) {
	for try := 0; ; try++ {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
		if err != nil {
			return reqs, err
		}
		if reqs = out.UnprocessedItems[s.table]; len(reqs) == 0 || try+1 >= unprocessedTries {
			return reqs, nil
		}
		select {
		case <-time.After(time.Duration(25<<try) * time.Millisecond):
		case <-ctx.Done():
			return reqs, ctx.Err()
		}
	}
}
