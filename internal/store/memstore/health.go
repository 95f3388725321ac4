package memstore

import (
	"context"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// DisableEndpoint turns an existing, enabled endpoint off with the reason
// (disabled_at now, failing since now unless it was) and reports whether
// this call disabled it; a missing one is an error (nothing is created).
func (s *Store) DisableEndpoint(_ context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	disabledNow := false
	_, err := s.changeEndpoint(tenantID, endpointID, "disable endpoint", func(e *domain.Endpoint) {
		if !e.Disabled {
			*e, disabledNow = s.disabled(*e, reason), true
		}
	})
	return disabledNow, err
}

// disabled is e disabled for reason now.
func (s *Store) disabled(e domain.Endpoint, reason domain.DisableReason) domain.Endpoint {
	e.Disabled, e.DisabledReason, e.DisabledAt = true, reason, stamp(s.now())
	if e.FailingSince == nil {
		e.FailingSince = stamp(s.now())
	}
	return e
}

// RecordEndpointFailure counts a failed attempt against an existing
// endpoint (starting its run's clock on the run's first), opens its
// circuit breaker and marks it failing at th.FailingAfter (once per
// episode), opens the breaker again for a doubled cooldown on a failed
// probe (th.Probe), and disables it at th.DisableAfter once the run has
// lasted th.DisableAfterFor, as store.Store does.
func (s *Store) RecordEndpointFailure(_ context.Context, tenantID, endpointID string, th store.HealthThresholds) (store.FailureEffect, error) {
	var fx store.FailureEffect
	_, err := s.changeEndpoint(tenantID, endpointID, "count failure of endpoint", func(e *domain.Endpoint) {
		now := s.now()
		e.ConsecutiveFailures++
		fx.Failures = e.ConsecutiveFailures
		if e.FailuresSince == nil {
			e.FailuresSince = stamp(now)
		}
		if th.FailingAfter > 0 && fx.Failures >= th.FailingAfter {
			tripBreaker(e, th, now, &fx)
		}
		if th.DisableAfter > 0 && fx.Failures >= th.DisableAfter && now.Sub(*e.FailuresSince) >= th.DisableAfterFor && !e.Disabled {
			*e = s.disabled(*e, domain.DisabledConsecutiveFailures)
			fx.Disabled, fx.DisabledAt = true, *e.DisabledAt
		}
	})
	return fx, err
}

// tripBreaker marks e failing, and for a retryable failure opens its
// circuit breaker when it is closed, or again for the next cooldown after a
// failed probe.
func tripBreaker(e *domain.Endpoint, th store.HealthThresholds, now time.Time, fx *store.FailureEffect) {
	switch {
	case !th.Retryable:
		if e.FailingSince == nil {
			e.FailingSince = stamp(now)
			fx.Failing, fx.FailingSince = true, *e.FailingSince
		}
		return
	case e.BreakerUntil == nil:
		e.BreakerUntil, e.BreakerTrips = stamp(now.Add(th.Breaker.Open(0))), 0
		if e.FailingSince == nil {
			e.FailingSince = stamp(now)
			fx.Failing, fx.FailingSince = true, *e.FailingSince
		}
	case th.Probe:
		e.BreakerTrips++
		e.BreakerUntil = stamp(now.Add(th.Breaker.Open(e.BreakerTrips)))
	default:
		return
	}
	u := *e.BreakerUntil
	fx.BreakerUntil = &u
}

// ResetEndpointFailures sets an existing endpoint's failure count to zero,
// closes its breaker and clears its failing mark, which it returns (nil:
// none).
func (s *Store) ResetEndpointFailures(_ context.Context, tenantID, endpointID string) (*time.Time, error) {
	var since *time.Time
	_, err := s.changeEndpoint(tenantID, endpointID, "reset failures of endpoint", func(e *domain.Endpoint) {
		since = e.FailingSince
		e.ConsecutiveFailures, e.FailingSince, e.FailuresSince, e.BreakerUntil, e.BreakerTrips = 0, nil, nil, nil, 0
	})
	return since, err
}
