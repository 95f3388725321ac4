package domain

import "time"

// BreakerState is where an endpoint's circuit breaker stands.
type BreakerState string

// Breaker states.
const (
	// BreakerClosed: the endpoint is not failing; its deliveries are sent,
	// at most EndpointConcurrency invocations' worth at once.
	BreakerClosed BreakerState = "closed"
	// BreakerOpen: the endpoint is failing and its cooldown has not run
	// out; its deliveries wait (sent again delayed, no attempt spent) until
	// Endpoint.BreakerUntil.
	BreakerOpen BreakerState = "open"
	// BreakerHalfOpen: the cooldown has run out; one delivery at a time is
	// sent as a probe while the rest wait. The probe's success closes the
	// breaker; its failure opens it again for a doubled cooldown.
	BreakerHalfOpen BreakerState = "half_open"
)

// Breaker is an endpoint circuit breaker's policy: how long it stays open
// after the endpoint is found failing (FailingAfter consecutive failed
// attempts), and after each failed probe.
type Breaker struct {
	// Cooldown is the first open period: the first probe goes this long
	// after the breaker opens. Default DefaultBreakerCooldown (10 s).
	Cooldown time.Duration
	// MaxCooldown bounds the open period, which doubles with each failed
	// probe. Default DefaultBreakerMaxCooldown (10 min).
	MaxCooldown time.Duration
}

// DefaultBreakerCooldown is Breaker.Cooldown's default: a receiver that
// restarts is tried again within seconds.
const DefaultBreakerCooldown = 10 * time.Second

// DefaultBreakerMaxCooldown is Breaker.MaxCooldown's default: an endpoint
// down for an hour is probed about 10 times, one request each.
const DefaultBreakerMaxCooldown = 10 * time.Minute

// WithDefaults is b with its zero fields set to their defaults.
func (b Breaker) WithDefaults() Breaker {
	if b.Cooldown <= 0 {
		b.Cooldown = DefaultBreakerCooldown
	}
	if b.MaxCooldown <= 0 {
		b.MaxCooldown = DefaultBreakerMaxCooldown
	}
	b.MaxCooldown = max(b.MaxCooldown, b.Cooldown)
	return b
}

// Open is how long the breaker stays open after its trips-th trip (0: the
// opening itself): Cooldown doubled trips times, at most MaxCooldown.
func (b Breaker) Open(trips int) time.Duration {
	b = b.WithDefaults()
	d := b.Cooldown
	for range min(max(trips, 0), 30) {
		if d >= b.MaxCooldown {
			break
		}
		d *= 2
	}
	return min(d, b.MaxCooldown)
}

// DefaultDisableAfterFor is how long an endpoint's run of consecutive
// failures must have lasted, besides reaching the disable threshold,
// before hookline disables it: 5 days, as Svix does (Stripe too retries for
// days and warns before it disables an endpoint). Far longer than the 24 h
// age cap, so no outage that the retry schedule rides out disables an
// endpoint; the circuit breaker, not the disable, protects the pool
// meanwhile, at the cost of a probe every MaxCooldown.
const DefaultDisableAfterFor = 5 * 24 * time.Hour

// DefaultEndpointConcurrency is the default of the most deliver
// invocations that may send to one endpoint at once: 3 of the default 10
// (the deliver mapping's maximum concurrency), so a slow endpoint holds at
// most 30% of the pool.
const DefaultEndpointConcurrency = 3

// DefaultTenantConcurrency is the default of the most deliver invocations
// that may send to one tenant's endpoints at once, however many endpoints
// it spreads over, while the tenant has not shown itself fast: 6 of the
// default 25 (the deliver mapping's maximum concurrency), twice an
// endpoint's share, so a tenant with one slow endpoint is bound by the
// endpoint's gate, not its own, and a slow tenant holds at most a quarter
// of the pool's invocations (and, resting its slots, deliver.TenantRest,
// at most half of their time: an eighth of the pool in all).
const DefaultTenantConcurrency = 6

// Breaker reports where the endpoint's circuit breaker stands at now:
// closed unless the endpoint is failing with a probe time set.
func (e Endpoint) Breaker(now time.Time) BreakerState {
	switch {
	case e.FailingSince == nil || e.BreakerUntil == nil:
		return BreakerClosed
	case now.Before(*e.BreakerUntil):
		return BreakerOpen
	default:
		return BreakerHalfOpen
	}
}
