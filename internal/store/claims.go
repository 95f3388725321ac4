package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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

// ClaimForReplay moves a dead delivery back to pending for job, records
// replayed_at, takes it out of the dead-letter index, gives its record
// Retention again from now (so that it cannot expire while the replay is in
// flight), and returns it with its message. tenantID, when not empty, must
// own the delivery (else ErrNotFound, as for a missing one). A delivery
// another job claimed less than stale ago is ErrReplayInFlight; one that is
// not dead, ErrNotDead. A delivery this job claimed and has not released is
// returned again, so a job that stopped halfway resumes where it was; one
// whose claim is older than stale (its job stopped and was never resumed:
// the claim is pending, its message unsent) can be claimed by another job,
// such as the operator's redrive, which finds its message still in the DLQ.
// Only one claimant wins: two replays of the same delivery send it once.
// The delivery is read first (its tenant names the DLQ depth counter, and
// its state says whether the claim takes it out of the dead), and the claim
// is conditional on it being as read: a dead delivery's claim and its
// tenant's DLQ depth move in one transaction.
func (s *Store) ClaimForReplay(ctx context.Context, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	for try := 0; try < maxChangedTries; try++ {
		now := s.Now().UTC()
		d, err := s.Delivery(ctx, id)
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

// ReleaseReplay records that job has sent the delivery's message: the claim
// is dropped, so the delivery can be replayed again if it dies again, and
// replayed_by names the job.
func (s *Store) ReleaseReplay(ctx context.Context, id, job string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: deliveryKey(id),
		UpdateExpression:          aws.String("SET replayed_by = :job REMOVE replay_job, replay_claimed_at"),
		ConditionExpression:       aws.String("replay_job = :job"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":job": &types.AttributeValueMemberS{Value: job}},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release replay of delivery %s: %w", id, err)
	}
	return nil
}
