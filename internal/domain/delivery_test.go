package domain

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeliveryIDIsDeterministicAndDistinct(t *testing.T) {
	t.Parallel()
	a := DeliveryID("evt_1", "ep_1")
	require.Equal(t, a, DeliveryID("evt_1", "ep_1"), "the same pair always names the same delivery")
	require.Regexp(t, regexp.MustCompile(`^msg_[a-z2-7]{26}$`), a)
	require.NotEqual(t, a, DeliveryID("evt_1", "ep_2"))
	require.NotEqual(t, a, DeliveryID("evt_2", "ep_1"))
	require.NotEqual(t, DeliveryID("ab", "c"), DeliveryID("a", "bc"), "the separator keeps the two ids apart")
}

func TestDLQDepthDelta(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to DeliveryState
		want     int
	}{
		{"", StatePending, 0},
		{"", StateDelivered, 0},
		{"", StateDead, 1},
		{StatePending, StatePending, 0},
		{StatePending, StateDelivered, 0},
		{StatePending, StateDead, 1},
		{StateDelivered, StateDelivered, 0},
		{StateDelivered, StateDead, 1},
		{StateDead, StatePending, -1},
		{StateDead, StateDelivered, -1},
		{StateDead, StateDead, 0},
	} {
		require.Equal(t, c.want, DLQDepthDelta(c.from, c.to), "%q -> %q", c.from, c.to)
	}
}
