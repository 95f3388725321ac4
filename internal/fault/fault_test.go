package fault

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAndPoint(t *testing.T) {
	r, err := Parse("")
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		require.NoError(t, r.Point(EnqueueFail), "off by default")
	}
	r, err = Parse(" enqueue_fail:1 , deliver_crash:0 ")
	require.NoError(t, err)
	require.True(t, errors.Is(r.Point(EnqueueFail), Injected))
	require.NoError(t, r.Point(DeliverCrash), "rate 0 never fires")
	for _, bad := range []string{"enqueue_fail", "enqueue_fail:2", "enqueue_fail:x", "disk_full:0.1"} {
		_, err := Parse(bad)
		require.Error(t, err, bad)
	}
}
