package deliver

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/stretchr/testify/require"
)

// A zero Config takes every named default; WithDefaults changes nothing
// the second time.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	require.Equal(t, DefaultConcurrency, c.Concurrency)
	require.Equal(t, DefaultFailingAfter, c.FailingAfter)
	require.Equal(t, DefaultDisableAfter, c.DisableAfter)
	require.Equal(t, DefaultDisableAfterFor, c.DisableAfterFor)
	require.Equal(t, domain.Breaker{}.WithDefaults(), c.Breaker)
	require.Equal(t, DefaultEndpointConcurrency, c.EndpointConcurrency)
	require.Zero(t, c.FastConcurrency, "the endpoint's own slots")
	require.Equal(t, DefaultTenantConcurrency, c.TenantConcurrency)
	require.Equal(t, DefaultSlowAfter, c.SlowAfter)
	require.Equal(t, DefaultDeadWindow, c.DeadWindow)
	require.Equal(t, DefaultReserve, c.Reserve)
	require.Equal(t, DefaultRateWait, c.RateWait)
	require.Equal(t, DefaultHopAfter, c.HopAfter)
	require.Equal(t, DefaultRequestTimeout, c.RequestTimeout)
	require.NotNil(t, c.Now)
	require.NotNil(t, c.SleepUntil)
	require.Nil(t, c.Rand, "nil is no jitter, which Decide tells from a draw of 0")
	again := c.WithDefaults()
	again.Now, again.SleepUntil, c.Now, c.SleepUntil = nil, nil, nil, nil
	require.Equal(t, c, again)
}

// What is set is kept; a negative threshold or rate wait keeps its
// meaning (never), other negative numbers count as unset, and the dead
// window is at most what SQS delays its notice for.
func TestConfigKeepsWhatIsSet(t *testing.T) {
	t.Parallel()
	c := Config{
		Concurrency: -1, FailingAfter: -1, DisableAfter: -1, RateWait: -1,
		Reserve: -time.Second, HopAfter: -time.Second, EndpointConcurrency: -2, FastConcurrency: -3,
		DeadWindow: time.Hour, SlowAfter: 200 * time.Millisecond, TenantConcurrency: 2,
	}.WithDefaults()
	require.Equal(t, DefaultConcurrency, c.Concurrency)
	require.Equal(t, -1, c.FailingAfter)
	require.Equal(t, -1, c.DisableAfter)
	require.Equal(t, time.Duration(-1), c.RateWait)
	require.Equal(t, DefaultReserve, c.Reserve)
	require.Equal(t, DefaultHopAfter, c.HopAfter)
	require.Equal(t, DefaultEndpointConcurrency, c.EndpointConcurrency)
	require.Zero(t, c.FastConcurrency)
	require.Equal(t, opevent.MaxNoticeDelay, c.DeadWindow)
	require.Equal(t, 200*time.Millisecond, c.SlowAfter)
	require.Equal(t, 2, c.TenantConcurrency)
}

// The Config is applied at the first Handle, once: a change after it is
// not seen (the handler reads its tunables from the applied copy only).
func TestConfigIsAppliedOnce(t *testing.T) {
	t.Parallel()
	h := &Handler{Config: Config{Reserve: time.Second, TenantConcurrency: 2}}
	_, err := h.Handle(context.Background(), events.SQSEvent{})
	require.NoError(t, err)
	require.Equal(t, time.Second, h.cfg.Reserve)
	require.Equal(t, DefaultConcurrency, h.cfg.Concurrency)
	require.NotNil(t, h.cache, "the endpoint cache is made with it")
	cache := h.cache
	h.Config.Reserve, h.Config.TenantConcurrency = 5*time.Second, 9
	_, err = h.Handle(context.Background(), events.SQSEvent{})
	require.NoError(t, err)
	require.Equal(t, time.Second, h.cfg.Reserve)
	require.Equal(t, 2, h.cfg.TenantConcurrency)
	require.Same(t, cache, h.cache)
}
