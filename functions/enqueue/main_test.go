package main

import (
	"testing"

	"github.com/hookline/hookline/internal/fnenv"
	"github.com/stretchr/testify/require"
)

// Every setting of the environment that tunes the handler reaches its
// Config, each to its own field.
func TestConfigCarriesTheEnvironment(t *testing.T) {
	t.Parallel()
	c := config(fnenv.EnqueueEnv{
		QueueURL: "q", EventBus: "bus", FailureQueueURL: "failures",
		SendConcurrency: 3, LaneQueueURL: "lane", LaneAfter: 40,
	})
	require.Equal(t, "q", c.QueueURL)
	require.Equal(t, "bus", c.BusName)
	require.Equal(t, "failures", c.ParkQueueURL)
	require.Equal(t, 3, c.SendConcurrency)
	require.Equal(t, "lane", c.LaneQueueURL)
	require.Equal(t, 40, c.LaneAfter)
}

// An environment without a lane leaves the handler without one, and the
// threshold to its default.
func TestConfigWithoutLane(t *testing.T) {
	t.Parallel()
	c := config(fnenv.EnqueueEnv{QueueURL: "q", EventBus: "bus"})
	require.Empty(t, c.LaneQueueURL)
	require.Zero(t, c.LaneAfter)
}
