package deliver

import (
	"cmp"
	"context"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/retry"
)

// The defaults of Config, each written once.
const (
	// DefaultConcurrency is Config.Concurrency's default: as many attempts
	// in flight as an SQS batch holds (10), so a whole batch is one round
	// of attempts and the function's timeout need cover only one request
	// timeout.
	DefaultConcurrency = 10
	// DefaultFailingAfter is Config.FailingAfter's default.
	DefaultFailingAfter = domain.DefaultFailingAfter
	// DefaultDisableAfter is Config.DisableAfter's default.
	DefaultDisableAfter = domain.DefaultDisableAfter
	// DefaultDisableAfterFor is Config.DisableAfterFor's default (5 days).
	DefaultDisableAfterFor = domain.DefaultDisableAfterFor
	// DefaultEndpointConcurrency is Config.EndpointConcurrency's default
	// (3).
	DefaultEndpointConcurrency = domain.DefaultEndpointConcurrency
	// DefaultTenantConcurrency is Config.TenantConcurrency's default (6).
	DefaultTenantConcurrency = domain.DefaultTenantConcurrency
	// DefaultSlowAfter is Config.SlowAfter's default: an endpoint whose
	// requests of a batch all took less has shown itself fast.
	DefaultSlowAfter = time.Second
	// DefaultDeadWindow is Config.DeadWindow's default.
	DefaultDeadWindow = domain.DefaultDeadWindow
	// DefaultReserve is Config.Reserve's default: the time an attempt's
	// outcome takes to record, with room.
	DefaultReserve = 3 * time.Second
	// DefaultRateWait is Config.RateWait's default.
	DefaultRateWait = 2 * time.Second
	// DefaultHopAfter is Config.HopAfter's default: 2 s, DefaultRateWait,
	// the longest an invocation already holds a message for a rate slot. A
	// wait that short is about as long as the message is worked anyway,
	// and within a poll's latency; every step of the default schedule (5 s
	// and up, with the 20% jitter 4 s and up) and every Retry-After (never
	// shorter than the step) is longer, so every retry hops. A hop costs
	// one SendMessageBatch entry (a tenth of a request) and the event
	// source mapping's delete (a tenth) instead of one
	// ChangeMessageVisibility.
	DefaultHopAfter = DefaultRateWait
	// DefaultRequestTimeout is Config.RequestTimeout's default, the
	// sender's.
	DefaultRequestTimeout = domain.DefaultRequestTimeout
)

// Config is how the handler delivers: its queues, its retry policy, the
// endpoints' health thresholds and isolation, and its clock. Every field's
// zero value means its default; WithDefaults fills them in, and the
// handler applies it once, at its first Handle (a change after that is
// not seen).
type Config struct {
	// QueueURL is the delivery queue (for ChangeMessageVisibility and the
	// messages sent again to wait).
	QueueURL string
	// LaneQueueURL is the tenant lane (enqueue.Config.LaneQueueURL), the
	// second queue deliver consumes: a message received from it is sent
	// again to it, and a message of the delivery queue whose tenant has its
	// share of the pool (WaitTenantBusy) moves to it, so that a tenant over
	// its share waits outside the queue every other tenant's deliveries
	// come through. Empty: no lane; everything waits in QueueURL.
	LaneQueueURL string
	// DLQURL is the dead-letter queue permanent failures are sent to.
	DLQURL string
	// OpsQueueURL is the replay worker's operations queue: the death that
	// opens a delivery.dead window sends its opevent.DeadNotice there,
	// delayed until the window ends. Empty: deaths raise no delivery.dead.
	OpsQueueURL string
	// Policy is the retry policy. Its VisibilityTimeout must be the
	// delivery queue's: the longest retry delay is counted back from it,
	// so that SQS, which hides a message at most 12 h from its receive,
	// accepts every delay asked for. Zero value: the defaults of package
	// retry (which the Policy applies itself).
	Policy retry.Policy
	// Concurrency bounds the attempts of a batch in flight at once.
	// Default DefaultConcurrency (10).
	Concurrency int
	// FailingAfter marks an endpoint failing (endpoint.failing) after this
	// many consecutive failed attempts; below DisableAfter. Default
	// DefaultFailingAfter (10); negative: never.
	FailingAfter int
	// DisableAfter disables an endpoint after this many consecutive failed
	// attempts, once the run has also lasted DisableAfterFor. Default
	// DefaultDisableAfter (50); negative: never.
	DisableAfter int
	// DisableAfterFor is how long a run of consecutive failures must have
	// lasted, besides reaching DisableAfter, to disable the endpoint.
	// Default DefaultDisableAfterFor (5 days). A 410 disables at once
	// whatever it says.
	DisableAfterFor time.Duration
	// Breaker is the endpoints' circuit breaker policy: it opens when an
	// endpoint is marked failing (FailingAfter consecutive failures, the
	// last a retryable one), and while it is open the endpoint's
	// deliveries wait, sent again delayed with no attempt spent, but for
	// one probe at a time. Zero fields: the domain's defaults.
	Breaker domain.Breaker
	// EndpointConcurrency is the most invocations that may send to one
	// endpoint at once while it has not shown itself fast (its requests
	// within SlowAfter); the attempts of the others wait, sent again
	// delayed, no attempt spent. Default DefaultEndpointConcurrency (3).
	EndpointConcurrency int
	// FastConcurrency is the most while the endpoint answers fast: the
	// deliver mapping's maximum concurrency, so that a fast endpoint may
	// use the whole pool. Zero: the endpoint's own slots
	// (EndpointConcurrency), no more.
	FastConcurrency int
	// TenantConcurrency is the most invocations that may send to one
	// tenant's endpoints not shown fast at once, however many endpoints it
	// spreads over (a batch takes one slot of the tenant's gate for all
	// its attempts to the tenant); a slow batch's slot then rests as long
	// as it was held (TenantRest). The attempts of the others wait, sent
	// again delayed, no attempt spent (WaitTenantBusy). Attempts to an
	// endpoint shown fast (see FastConcurrency) take no slot. Default
	// DefaultTenantConcurrency (6).
	TenantConcurrency int
	// SlowAfter is the request time from which an endpoint counts as
	// slow. Default DefaultSlowAfter (1 s).
	SlowAfter time.Duration
	// DeadWindow is delivery.dead's coalescing window: an endpoint's
	// deaths within one raise one summary. Default DefaultDeadWindow
	// (5 min); at most opevent.MaxNoticeDelay (15 min).
	DeadWindow time.Duration
	// Reserve is the time kept back from the Lambda deadline for recording
	// an attempt's outcome. An attempt gets at most the time left before
	// the deadline less Reserve; with less than a second of it, the
	// message is returned to the queue untried. Default DefaultReserve
	// (3 s).
	Reserve time.Duration
	// RateWait is the longest an attempt to a rate-limited endpoint waits
	// in the invocation for a request slot; one that would wait longer is
	// sent again as a new message, delayed. Default DefaultRateWait (2 s);
	// negative: never waits.
	RateWait time.Duration
	// HopAfter is the longest retry delay a message waits out in its own
	// visibility (ChangeMessageVisibility, counted in flight); a longer
	// one is sent again as a new, delayed message and this one deleted
	// (waitOut), so that the queue's in-flight messages are only those
	// being worked. Default DefaultHopAfter (2 s).
	HopAfter time.Duration
	// RequestTimeout is the sender's request timeout: a wait for a rate
	// slot leaves at least this and Reserve before the invocation's
	// deadline. Default DefaultRequestTimeout (15 s).
	RequestTimeout time.Duration
	// StatsFlushEvery is how often the instance writes the endpoints'
	// attempt counters it gathered: a batch's counters are written at its
	// end when the last write was at least this long ago, else kept and
	// merged with the next batches' (statsBuffer), and what is kept is
	// written at shutdown (FlushStats, on SIGTERM). Zero (the default
	// here; the function's environment sets fnenv.DefaultStatsFlushEvery):
	// every batch's at its end.
	StatsFlushEvery time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Rand draws jitter in [0, 1). Nil (not a default: Decide tells nil
	// from a draw of 0): no jitter.
	Rand func() float64
	// SleepUntil waits until a time on the handler's clock, or until ctx
	// is done. Default: a timer on the wall clock.
	SleepUntil func(ctx context.Context, t time.Time)
}

// WithDefaults returns c with every field not set given its default. A
// negative FailingAfter, DisableAfter or RateWait keeps its meaning
// (never); the other negative numbers count as not set.
func (c Config) WithDefaults() Config {
	pos := func(d time.Duration) time.Duration { return max(d, 0) }
	c.Concurrency = cmp.Or(max(c.Concurrency, 0), DefaultConcurrency)
	c.FailingAfter = cmp.Or(c.FailingAfter, DefaultFailingAfter)
	c.DisableAfter = cmp.Or(c.DisableAfter, DefaultDisableAfter)
	c.DisableAfterFor = cmp.Or(c.DisableAfterFor, DefaultDisableAfterFor)
	c.Breaker = c.Breaker.WithDefaults()
	c.EndpointConcurrency = cmp.Or(max(c.EndpointConcurrency, 0), DefaultEndpointConcurrency)
	c.FastConcurrency = max(c.FastConcurrency, 0)
	c.TenantConcurrency = cmp.Or(max(c.TenantConcurrency, 0), DefaultTenantConcurrency)
	c.SlowAfter = cmp.Or(pos(c.SlowAfter), DefaultSlowAfter)
	c.DeadWindow = cmp.Or(min(pos(c.DeadWindow), opevent.MaxNoticeDelay), DefaultDeadWindow)
	c.Reserve = cmp.Or(pos(c.Reserve), DefaultReserve)
	c.RateWait = cmp.Or(c.RateWait, DefaultRateWait)
	c.HopAfter = cmp.Or(pos(c.HopAfter), DefaultHopAfter)
	c.RequestTimeout = cmp.Or(pos(c.RequestTimeout), DefaultRequestTimeout)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SleepUntil == nil {
		c.SleepUntil = sleepUntil
	}
	return c
}

// sleepUntil waits until t on the wall clock, or until ctx is done.
func sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// draw is r's next draw in [0, 1), 0 when r is nil (no jitter).
func draw(r func() float64) float64 {
	if r == nil {
		return 0
	}
	return r()
}
