package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// Reasons a delivery is not claimed for replay.
var (
	ErrNotDead         = errors.New("not_dead")
	ErrReplayInFlight  = errors.New("replay_in_progress")
	ErrNoReplayMessage = errors.New("no_message")
)

// ClaimForReplay moves dead deliveries back to pending for job: each is
// recorded replayed_at, taken out of the dead-letter index, given its
// record's Retention again from now (so that it cannot expire while the
// replay is in flight) and returned with its message, in its place; errs
// says, in its place too, why one was not claimed. reads are the
// deliveries as the caller read them (strongly consistent, a moment ago:
// each claim is conditional on its delivery being as read). tenantID, when
// not empty, must own a delivery (else ErrNotFound, as for a missing one).
// A delivery another job claimed less than stale ago is ErrReplayInFlight;
// one that is not dead, ErrNotDead. A delivery this job claimed and has not
// released is returned again, so a job that stopped halfway resumes where
// it was; one whose claim is older than stale (its job stopped and was
// never resumed: the claim is pending, its message unsent) can be claimed
// by another job, such as the operator's redrive, which finds its message
// still in the DLQ. Only one claimant wins: two replays of the same
// delivery send it once.
//
// The claims are one transaction (up to maxClaimsAtOnce of them, with
// their tenant's DLQ depth moved in it, each counter shard once): a chunk
// of a replay step is one round trip, not a read and a transaction each.
// When the transaction is cancelled (one of them changed since it was
// read, or collided with another transaction), each is claimed on its own,
// read again first, at once.
func (s *Store) ClaimForReplay(ctx context.Context, reads []domain.Delivery, tenantID, job string, stale time.Duration) ([]domain.Delivery, []error) {
	out := make([]domain.Delivery, len(reads))
	errs := make([]error, len(reads))
	now := s.Now().UTC()
	var todo []int
	for i, d := range reads {
		switch {
		case d.State == "" || (tenantID != "" && d.TenantID != tenantID):
			errs[i] = fmt.Errorf("delivery %s: %w", d.DeliveryID, ErrNotFound)
		default:
			if errs[i] = claimRefusal(d.DeliveryID, d, job, now.Add(-stale)); errs[i] != nil {
				out[i] = d
				continue
			}
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		n := min(len(todo), maxClaimsAtOnce)
		part := todo[:n]
		todo = todo[n:]
		if err := s.claimAtOnce(ctx, reads, part, job, now, now.Add(-stale)); err == nil {
			for _, i := range part {
				d := reads[i]
				d.State, d.ReplayClaimedBy, d.ReplayClaimedAt, d.ReplayedAt = domain.StatePending, job, &now, &now
				out[i] = d
			}
			continue
		}
		var wg sync.WaitGroup
		for _, i := range part {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = s.claimOne(ctx, reads[i].DeliveryID, tenantID, job, stale)
			}()
		}
		wg.Wait()
	}
	return out, errs
}

// maxClaimsAtOnce is how many claims one transaction holds: 25 claims and
// at most 25 counter shards, half of DynamoDB's 100 members.
const maxClaimsAtOnce = 25

// claimAtOnce claims reads[i] for each i of part (each claimable as read,
// claimRefusal) in one write: an UpdateItem for a delivery alone whose
// depth does not move, else a transaction with the depth's moves summed
// per counter shard. Any failure (a delivery changed since it was read, a
// collision) is answered as it is, with nothing written.
func (s *Store) claimAtOnce(ctx context.Context, reads []domain.Delivery, part []int, job string, now, staleBefore time.Time) error {
	if len(part) == 1 {
		d := reads[part[0]]
		return s.transition(ctx, s.claimUpdate(d.DeliveryID, d, job, now, staleBefore), d.TenantID, d.DeliveryID, domain.DLQDepthDelta(d.State, domain.StatePending), now)
	}
	type shard struct {
		tenant, delivery string
		delta            int
	}
	var items []types.TransactWriteItem
	var shards []shard
	at := map[string]int{} // tenant and shard: index in shards
	for _, i := range part {
		d := reads[i]
		items = append(items, types.TransactWriteItem{Update: s.claimUpdate(d.DeliveryID, d, job, now, staleBefore)})
		delta := domain.DLQDepthDelta(d.State, domain.StatePending)
		if delta == 0 {
			continue
		}
		k := d.TenantID + "\x00" + strconv.Itoa(depthShard(d.DeliveryID))
		if j, ok := at[k]; ok {
			shards[j].delta += delta
			continue
		}
		at[k] = len(shards)
		shards = append(shards, shard{d.TenantID, d.DeliveryID, delta})
	}
	for _, sh := range shards {
		if sh.delta != 0 {
			items = append(items, types.TransactWriteItem{Update: s.depthMove(sh.tenant, sh.delivery, sh.delta, now)})
		}
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return err
}

// claimOne claims delivery id for job, reading it first, and again as
// long as it changes between the read and the claim (ClaimForReplay's
// rules).
func (s *Store) claimOne(ctx context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	for try := 0; try < maxChangedTries; try++ {
		now := s.Now().UTC()
		d, err := s.record(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && tenantID != "" && d.TenantID != tenantID) {
			return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: %w", id, err)
		}
		if err := claimRefusal(id, d, job, now.Add(-stale)); err != nil {
			return d, err
		}
		err = s.transition(ctx, s.claimUpdate(id, d, job, now, now.Add(-stale)), d.TenantID, d.DeliveryID, domain.DLQDepthDelta(d.State, domain.StatePending), now)
		var changed *changedError
		if errors.As(err, &changed) {
			continue // claimed, attempted or killed meanwhile: read it again
		}
		if err != nil {
			return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: %w", id, err)
		}
		// What the update wrote, on the item as it was.
		d.State, d.ReplayClaimedBy, d.ReplayClaimedAt, d.ReplayedAt = domain.StatePending, job, &now, &now
		return d, nil
	}
	return domain.Delivery{}, fmt.Errorf("claim delivery %s for replay: changed by others %d times in a row: %w", id, maxChangedTries, ErrConflict)
}

// claimRefusal says why job cannot claim d (delivery id), or nil if it can: d is dead and
// unclaimed, claimed before staleBefore by a job that stopped, or claimed by
// job itself, and (the last two) not delivered since. A dead or claimed
// delivery is ErrReplayInFlight, any other ErrNotDead.
func claimRefusal(id string, d domain.Delivery, job string, staleBefore time.Time) error {
	staleClaim := d.ReplayClaimedAt != nil && d.ReplayClaimedAt.Before(staleBefore)
	claimable := (d.State == domain.StateDead && d.ReplayClaimedBy == "") ||
		(d.State != domain.StateDelivered && staleClaim) ||
		(d.ReplayClaimedBy == job && d.State != domain.StateDelivered)
	switch {
	case claimable:
		return nil
	case d.State == domain.StateDead || d.ReplayClaimedBy != "":
		return fmt.Errorf("delivery %s: %w", id, ErrReplayInFlight)
	default:
		return fmt.Errorf("delivery %s is %s: %w", id, d.State, ErrNotDead)
	}
}

// claimUpdate is job's claim of d (delivery id), read at now: pending, claimed by job, its
// retention counted again from now, on the condition that it is still
// claimable (claimRefusal's rule, staleBefore the same) and as read.
func (s *Store) claimUpdate(id string, d domain.Delivery, job string, now, staleBefore time.Time) *types.Update {
	names := map[string]string{"#state": "state"}
	values := map[string]types.AttributeValue{
		":dead":      &types.AttributeValueMemberS{Value: string(domain.StateDead)},
		":pending":   &types.AttributeValueMemberS{Value: string(domain.StatePending)},
		":delivered": &types.AttributeValueMemberS{Value: string(domain.StateDelivered)},
		":job":       &types.AttributeValueMemberS{Value: job},
		":now":       timeValue(now),
		":stale":     timeValue(staleBefore),
		":expires":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(s.Retention).Unix(), 10)},
	}
	// Claimable (dead and unclaimed; claimed by a job that stopped long
	// ago; or claimed by this very job and not delivered since), and as
	// read.
	cond := "((#state = :dead AND attribute_not_exists(replay_job)) OR (#state <> :delivered AND replay_claimed_at < :stale) OR (replay_job = :job AND #state <> :delivered))" +
		" AND " + expected(d, names, values)
	return &types.Update{
		TableName: &s.table, Key: deliveryKey(id),
		UpdateExpression:          aws.String("SET #state = :pending, replay_job = :job, replay_claimed_at = :now, replayed_at = :now, expires_at = :expires REMOVE " + unlisted),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// ReleaseReplay records that job has sent the deliveries' messages: each
// claim is dropped, so the delivery can be replayed again if it dies again,
// and replayed_by names the job. A delivery whose claim is not job's (taken
// over by another once stale) is left alone. The releases are one
// transaction (up to maxClaimsAtOnce of them): a chunk of a replay step is
// one round trip; when it is cancelled (one of them is not job's claim, or
// it collided), each is released on its own, at once.
func (s *Store) ReleaseReplay(ctx context.Context, ids []string, job string) error {
	for len(ids) > 0 {
		part := ids[:min(len(ids), maxClaimsAtOnce)]
		ids = ids[len(part):]
		if len(part) > 1 {
			items := make([]types.TransactWriteItem, len(part))
			for i, id := range part {
				items[i] = types.TransactWriteItem{Update: s.releaseUpdate(id, job)}
			}
			if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err == nil {
				continue
			}
		}
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, id := range part {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.db.UpdateItem(ctx, alone(s.releaseUpdate(id, job)))
				if err != nil && !isConditionFailed(err) {
					errs[i] = fmt.Errorf("release replay of delivery %s: %w", id, err)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// releaseUpdate is job's release of its claim on delivery id.
func (s *Store) releaseUpdate(id, job string) *types.Update {
	return &types.Update{
		TableName: &s.table, Key: deliveryKey(id),
		UpdateExpression:          aws.String("SET replayed_by = :job REMOVE replay_job, replay_claimed_at"),
		ConditionExpression:       aws.String("replay_job = :job"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":job": &types.AttributeValueMemberS{Value: job}},
	}
}
