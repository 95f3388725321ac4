package main

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/retry"
	"github.com/stretchr/testify/require"
)

// Every setting of the environment that tunes the handler reaches its
// Config, each to its own field; jitter is on.
func TestConfigCarriesTheEnvironment(t *testing.T) {
	t.Parallel()
	env := fnenv.DeliverEnv{
		QueueURL: "q", LaneQueueURL: "lane", DLQURL: "dlq",
		Retry:          retry.Policy{Schedule: []time.Duration{0, time.Minute}, VisibilityTimeout: 12 * time.Hour},
		RequestTimeout: 7 * time.Second,
		DisableAfter:   51, FailingAfter: 11, DisableAfterFor: 49 * time.Hour,
		Breaker:             domain.Breaker{Cooldown: 3 * time.Second, MaxCooldown: time.Hour},
		EndpointConcurrency: 4, FastConcurrency: 24, TenantConcurrency: 5,
		Notices: fnenv.Notices{OpsQueueURL: "ops", DeadNoticeWindow: 7 * time.Minute},
	}
	c := config(env)
	require.Equal(t, "q", c.QueueURL)
	require.Equal(t, "lane", c.LaneQueueURL)
	require.Equal(t, "dlq", c.DLQURL)
	require.Equal(t, "ops", c.OpsQueueURL)
	require.Equal(t, env.Retry, c.Policy)
	require.Equal(t, 7*time.Second, c.RequestTimeout)
	require.Equal(t, 51, c.DisableAfter)
	require.Equal(t, 11, c.FailingAfter)
	require.Equal(t, 49*time.Hour, c.DisableAfterFor)
	require.Equal(t, env.Breaker, c.Breaker)
	require.Equal(t, 4, c.EndpointConcurrency)
	require.Equal(t, 24, c.FastConcurrency)
	require.Equal(t, 5, c.TenantConcurrency)
	require.Equal(t, 7*time.Minute, c.DeadWindow)
	require.NotNil(t, c.Rand, "retries jittered")
	// What the environment does not set takes the handler's defaults.
	require.Zero(t, c.Concurrency)
	require.Zero(t, c.Reserve)
}
