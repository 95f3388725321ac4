package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
)

// DisableEndpoint turns an endpoint off, with the reason, so no further
// deliveries are sent to it until it is enabled again. It reports whether
// this call disabled it (false: it was disabled already, and keeps its
// reason and time). It sets disabled_at, and failing_since when not set, so
// the first success after the endpoint is enabled again is a recovery. An
// endpoint that does not exist (deleted while its attempt was out) answers
// ErrNotFound.
func (s *Store) DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	disabled, err := s.setDisabled(ctx, tenantID, endpointID, reason)
	if isConditionFailed(err) {
		return false, fmt.Errorf("disable endpoint %s: %w", endpointID, ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("disable endpoint %s: %w", endpointID, err)
	}
	return disabled, nil
}

// setDisabled marks an existing endpoint disabled for reason at now, and
// failing since now unless it already was, and reports whether this call
// disabled it. An endpoint disabled already keeps its reason and time (an
// enable removes both).
func (s *Store) setDisabled(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, &dynamodb.UpdateItemInput{
		UpdateExpression: aws.String("SET disabled = :t, disabled_reason = if_not_exists(disabled_reason, :r), " +
			"disabled_at = if_not_exists(disabled_at, :now), failing_since = if_not_exists(failing_since, :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t":   &types.AttributeValueMemberBOOL{Value: true},
			":r":   &types.AttributeValueMemberS{Value: string(reason)},
			":now": timeValue(s.Now()),
		},
		ReturnValues: types.ReturnValueUpdatedOld,
	})
	if err != nil {
		return false, err
	}
	was, _ := out.Attributes["disabled"].(*types.AttributeValueMemberBOOL)
	return was == nil || !was.Value, nil
}

// updateExistingEndpoint runs in against an endpoint's item (table and key
// set here) only if the item exists, so that an update never creates a
// partial endpoint: in's ConditionExpression, if any, must hold as well.
func (s *Store) updateExistingEndpoint(ctx context.Context, tenantID, endpointID string, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	cond := "attribute_exists(pk)"
	if in.ConditionExpression != nil {
		cond += " AND " + *in.ConditionExpression
	}
	in.TableName, in.Key, in.ConditionExpression = &s.table, endpointKey(tenantID, endpointID), aws.String(cond)
	return s.db.UpdateItem(ctx, in)
}

// HealthThresholds are what counting a failed attempt against an endpoint
// weighs: the consecutive failed attempts at which it is marked failing
// (and its circuit breaker opens) and disabled (0 or less: never), how long
// the run must have lasted to disable it, and the breaker's policy.
type HealthThresholds struct {
	FailingAfter, DisableAfter int
	// DisableAfterFor is how long the run of consecutive failures must have
	// lasted (from its first failure, failures_since), besides reaching
	// DisableAfter, for the endpoint to be disabled. 0: no time.
	DisableAfterFor time.Duration
	// Breaker is the circuit breaker's policy (its zero value: the
	// defaults).
	Breaker domain.Breaker
	// Probe says the failed attempt was the breaker's probe: the breaker
	// opens again, for a longer cooldown. A failure that is not the probe
	// (a request sent before the breaker opened) leaves an open breaker as
	// it is.
	Probe bool
	// Retryable says the failure was one the retry schedule retries (a
	// timeout, a network error, 408, 429, 5xx): only such failures open
	// the breaker. A permanent failure (a 4xx rejection, dead at once)
	// counts toward the run and the failing mark, never the breaker: an
	// endpoint that answers at once holds no capacity.
	Retryable bool
}

// HealthEffect is what recording a batch's attempts did to their
// endpoint's health.
type HealthEffect struct {
	// Recovered is the failing mark the reset cleared (the episode's
	// start), nil when there was none or no reset: of concurrent
	// successes, one recovers the endpoint.
	Recovered *time.Time
	// Failures is the endpoint's run of consecutive failures, these
	// included (0 after a reset alone).
	Failures int
	// Failing is true when this call marked the endpoint failing (the run
	// reached FailingAfter and it was not marked): FailingSince is the
	// mark.
	Failing      bool
	FailingSince time.Time
	// BreakerUntil is set when this call opened the endpoint's circuit
	// breaker (at FailingAfter) or opened it again (a failed probe): the
	// next probe's time.
	BreakerUntil *time.Time
	// Disabled is true when this call disabled the endpoint (the run
	// reached DisableAfter, lasted DisableAfterFor, and it was enabled):
	// DisabledAt is when.
	Disabled   bool
	DisabledAt time.Time
}

// Moved reports whether the write moved more than the count: a mark, the
// breaker or the endpoint's enabled state (a recovery is no such move: a
// reset's result is known whatever it cleared).
func (fx HealthEffect) Moved() bool {
	return fx.Failing || fx.BreakerUntil != nil || fx.Disabled
}

// RecordEndpointHealth records, in one write, what a deliver batch's
// attempts to an endpoint did to its consecutive failure count (issue 37:
// one write per endpoint per batch): reset, a success reset it (and
// closed its circuit breaker and cleared its failing mark: Recovered is
// the mark it cleared); failures, that many attempts failed (counted after
// the reset, as from zero, when both). Reaching th.FailingAfter marks the
// endpoint failing and opens its breaker, a failed probe (th.Probe) opens
// the breaker again for a doubled cooldown, and reaching th.DisableAfter
// once the run has lasted th.DisableAfterFor disables it. Each transition
// is a conditional write, so it happens once however many attempts fail
// at once; a count below the thresholds, or a reset, is one write. An
// endpoint that does not exist answers ErrNotFound.
func (s *Store) RecordEndpointHealth(ctx context.Context, tenantID, endpointID string, reset bool, failures int, th HealthThresholds) (HealthEffect, error) {
	var fx HealthEffect
	if failures < 0 || (failures == 0 && !reset) {
		return fx, fmt.Errorf("record the health of endpoint %s: %d failures and no reset: nothing to write", endpointID, failures)
	}
	now := s.Now()
	out, err := s.updateExistingEndpoint(ctx, tenantID, endpointID, healthUpdate(reset, failures, now))
	if isConditionFailed(err) {
		// Its only condition is the item's: the endpoint was deleted
		// while the attempt was out.
		return fx, fmt.Errorf("record the health of endpoint %s: %w", endpointID, ErrNotFound)
	}
	if err != nil {
		return fx, fmt.Errorf("record the health of endpoint %s: %w", endpointID, err)
	}
	var ep domain.Endpoint
	if err := attributevalue.UnmarshalMap(out.Attributes, &ep); err != nil {
		return fx, fmt.Errorf("endpoint %s: %w", endpointID, err)
	}
	if reset {
		// The attributes the reset moved, as they were: what it cleared;
		// the new state is known.
		fx.Recovered = ep.FailingSince
		ep = domain.Endpoint{TenantID: tenantID, EndpointID: endpointID, ConsecutiveFailures: failures}
		if failures > 0 {
			t := now.UTC()
			ep.FailuresSince = &t
		}
	}
	fx.Failures = ep.ConsecutiveFailures
	if failures == 0 {
		return fx, nil
	}
	return fx, s.weighFailures(ctx, ep, th, now, &fx)
}

// healthUpdate is RecordEndpointHealth's write: the failures added to the
// count (the run's start set on its first), the new state returned; or,
// with reset, the count set to the failures (the run starting now when
// there are any) and the mark and the breaker removed, the moved
// attributes' old values returned (not the whole item: its headers and
// secrets), which tell what the reset cleared.
func healthUpdate(reset bool, failures int, now time.Time) *dynamodb.UpdateItemInput {
	n := &types.AttributeValueMemberN{Value: strconv.Itoa(failures)}
	switch {
	case !reset:
		return &dynamodb.UpdateItemInput{
			UpdateExpression:          aws.String("ADD consecutive_failures :n SET failures_since = if_not_exists(failures_since, :now)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": n, ":now": timeValue(now)}, ReturnValues: types.ReturnValueAllNew,
		}
	case failures > 0:
		return &dynamodb.UpdateItemInput{
			UpdateExpression:          aws.String("SET consecutive_failures = :n, failures_since = :now REMOVE failing_since, breaker_until, breaker_trips"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": n, ":now": timeValue(now)}, ReturnValues: types.ReturnValueUpdatedOld,
		}
	}
	return &dynamodb.UpdateItemInput{
		UpdateExpression:          aws.String("SET consecutive_failures = :n REMOVE failing_since, failures_since, breaker_until, breaker_trips"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": n}, ReturnValues: types.ReturnValueUpdatedOld,
	}
}

// weighFailures makes the transitions ep's count (as the write left it)
// reaches: failing and the breaker at th.FailingAfter, disabled at
// th.DisableAfter once the run has lasted th.DisableAfterFor.
func (s *Store) weighFailures(ctx context.Context, ep domain.Endpoint, th HealthThresholds, now time.Time, fx *HealthEffect) error {
	if th.FailingAfter > 0 && fx.Failures >= th.FailingAfter {
		if err := s.tripBreaker(ctx, ep, th, now, fx); err != nil {
			return err
		}
	}
	if th.DisableAfter <= 0 || fx.Failures < th.DisableAfter || ep.FailuresSince == nil || now.Sub(*ep.FailuresSince) < th.DisableAfterFor {
		return nil
	}
	disabled, err := s.setDisabled(ctx, ep.TenantID, ep.EndpointID, domain.DisabledConsecutiveFailures)
	if err != nil {
		return fmt.Errorf("disable endpoint %s: %w", ep.EndpointID, err)
	}
	if disabled {
		fx.Disabled, fx.DisabledAt = true, now.UTC()
	}
	return nil
}

// tripBreaker marks ep (as the failure count left it) failing, and for a
// retryable failure opens its circuit breaker when it is closed, or, for a
// failed probe, opens it again for the next cooldown. Both are conditional on the
// breaker as read: of concurrent callers, one moves it.
func (s *Store) tripBreaker(ctx context.Context, ep domain.Endpoint, th HealthThresholds, now time.Time, fx *HealthEffect) error {
	in := &dynamodb.UpdateItemInput{}
	var until time.Time
	switch {
	case !th.Retryable && ep.FailingSince == nil:
		in.UpdateExpression = aws.String("SET failing_since = :now")
		in.ConditionExpression = aws.String("attribute_not_exists(failing_since)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":now": timeValue(now)}
	case !th.Retryable:
		return nil
	case ep.BreakerUntil == nil:
		until = now.Add(th.Breaker.Open(0))
		in.UpdateExpression = aws.String("SET breaker_until = :until, breaker_trips = :zero, failing_since = if_not_exists(failing_since, :now)")
		in.ConditionExpression = aws.String("attribute_not_exists(breaker_until)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":until": timeValue(until), ":zero": &types.AttributeValueMemberN{Value: "0"}, ":now": timeValue(now)}
	case th.Probe:
		until = now.Add(th.Breaker.Open(ep.BreakerTrips + 1))
		in.UpdateExpression = aws.String("SET breaker_until = :until, breaker_trips = :next")
		in.ConditionExpression = aws.String("breaker_until = :was")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":until": timeValue(until), ":was": timeValue(*ep.BreakerUntil), ":next": &types.AttributeValueMemberN{Value: strconv.Itoa(ep.BreakerTrips + 1)}}
	default:
		return nil // open already, and this is no probe's failure
	}
	_, err := s.updateExistingEndpoint(ctx, ep.TenantID, ep.EndpointID, in)
	switch {
	case isConditionFailed(err): // moved by another attempt
		return nil
	case err != nil:
		return fmt.Errorf("open the circuit breaker of endpoint %s: %w", ep.EndpointID, err)
	}
	if th.Retryable {
		u := until.UTC()
		fx.BreakerUntil = &u
	}
	if ep.BreakerUntil == nil && ep.FailingSince == nil {
		fx.Failing, fx.FailingSince = true, now.UTC()
	}
	return nil
}
