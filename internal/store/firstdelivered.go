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

// unprocessedTries bounds how often RecordFirstAttempts sends again the
// items DynamoDB left unprocessed (a key value over its throughput), and
// unprocessedBackoff is the first wait, doubled each time.
const (
	unprocessedTries   = 3
	unprocessedBackoff = 50 * time.Millisecond
)

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
	seen := map[string]bool{}
	var idx []int
	var reqs []types.WriteRequest
	for i, f := range firsts {
		if seen[f.Delivery.DeliveryID] || f.Delivery.State != "" {
			notWritten = append(notWritten, i)
			continue
		}
		seen[f.Delivery.DeliveryID] = true
		item, err := s.firstAttemptItem(f, now)
		if err != nil {
			notWritten = append(notWritten, i)
			continue
		}
		idx = append(idx, i)
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for start := 0; start < len(reqs); start += maxBatchWrites {
		end := min(start+maxBatchWrites, len(reqs))
		left, werr := s.batchWrite(ctx, reqs[start:end])
		if werr != nil {
			err = fmt.Errorf("record %d first attempts: %w", end-start, werr)
		}
		for _, j := range left {
			notWritten = append(notWritten, idx[start+j])
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
// sending again what DynamoDB leaves unprocessed, at most
// unprocessedTries times. It returns the positions in reqs not written:
// all of them when a request fails (with its error), the unprocessed
// ones after the last try.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) (left []int, err error) {
	pending := make([]int, len(reqs))
	for i := range pending {
		pending[i] = i
	}
	wait := unprocessedBackoff
	for try := 0; ; try++ {
		batch := make([]types.WriteRequest, len(pending))
		for i, j := range pending {
			batch[i] = reqs[j]
		}
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: batch}})
		if err != nil {
			return pending, err
		}
		unprocessed := map[string]bool{}
		for _, r := range out.UnprocessedItems[s.table] {
			if r.PutRequest != nil {
				unprocessed[itemKeyString(r.PutRequest.Item)] = true
			}
		}
		var still []int
		for _, j := range pending {
			if unprocessed[itemKeyString(reqs[j].PutRequest.Item)] {
				still = append(still, j)
			}
		}
		pending = still
		if len(pending) == 0 || try+1 >= unprocessedTries {
			return pending, nil
		}
		select {
		case <-ctx.Done():
			return pending, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// itemKeyString names an item by its table key.
func itemKeyString(item map[string]types.AttributeValue) string {
	return stringAttr(item, "pk") + "\x00" + stringAttr(item, "sk")
}
