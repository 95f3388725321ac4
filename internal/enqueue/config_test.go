package enqueue

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
)

// A zero Config takes every named default; a negative number counts as
// unset; what is set is kept.
func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := Config{}.WithDefaults()
	require.Equal(t, DefaultSendConcurrency, c.SendConcurrency)
	require.Equal(t, DefaultPutTries, c.PutTries)
	require.Equal(t, DefaultPutBackoff, c.PutBackoff)
	require.NotNil(t, c.Sleep)
	c = Config{SendConcurrency: -1, PutTries: -1, PutBackoff: -time.Second}.WithDefaults()
	require.Equal(t, DefaultSendConcurrency, c.SendConcurrency)
	require.Equal(t, DefaultPutTries, c.PutTries)
	require.Equal(t, DefaultPutBackoff, c.PutBackoff)
	c = Config{SendConcurrency: 1, PutTries: 5, PutBackoff: time.Second}.WithDefaults()
	require.Equal(t, 1, c.SendConcurrency)
	require.Equal(t, 5, c.PutTries)
	require.Equal(t, time.Second, c.PutBackoff)
}

// The default Sleep honours ctx.
func TestConfigSleepHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Config{}.WithDefaults().Sleep(ctx, time.Hour), context.Canceled)
	require.NoError(t, Config{}.WithDefaults().Sleep(context.Background(), 0))
}

// The Config is applied at the first Handle, once: a change after it is
// not seen.
func TestConfigIsAppliedOnce(t *testing.T) {
	t.Parallel()
	h := newHandler(newFakeStore(), &fakeQueue{})
	h.Config.SendConcurrency = 2
	_, err := h.Handle(context.Background(), events.DynamoDBEvent{})
	require.NoError(t, err)
	require.Equal(t, 2, h.cfg.SendConcurrency)
	require.Equal(t, DefaultPutTries, h.cfg.PutTries)
	h.Config.SendConcurrency, h.Config.PutTries = 7, 9
	_, err = h.Handle(context.Background(), events.DynamoDBEvent{})
	require.NoError(t, err)
	require.Equal(t, 2, h.cfg.SendConcurrency)
	require.Equal(t, DefaultPutTries, h.cfg.PutTries)
}
