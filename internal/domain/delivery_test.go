package domain

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDeliveryIDIsDeterministicAndDistinct(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 6, 0, 0, 123456789, time.UTC)
	a := DeliveryID("t1", "evt_1", "ep_1", at)
	require.Equal(t, a, DeliveryID("t1", "evt_1", "ep_1", at), "the same event and endpoint always name the same delivery")
	require.Equal(t, a, DeliveryID("t1", "evt_1", "ep_1", at.In(time.FixedZone("x", 3600)).Add(500*time.Microsecond)), "to the millisecond, in any zone")
	require.Regexp(t, regexp.MustCompile(`^msg_[0-9a-v]{17}[a-z2-7]{22}$`), a)
	require.NotEqual(t, a, DeliveryID("t1", "evt_1", "ep_2", at))
	require.NotEqual(t, a, DeliveryID("t1", "evt_2", "ep_1", at))
	require.NotEqual(t, a, DeliveryID("t2", "evt_1", "ep_1", at), "another tenant's hash")
	require.NotEqual(t, DeliveryID("t1", "ab", "c", at), DeliveryID("t1", "a", "bc", at), "the separator keeps the two ids apart")
	require.Equal(t, a[21:], LegacyDeliveryID("evt_1", "ep_1")[4:26], "the hash is the legacy id's")
	require.Regexp(t, regexp.MustCompile(`^msg_[a-z2-7]{26}$`), LegacyDeliveryID("evt_1", "ep_1"))
	require.Equal(t, [2]string{a, LegacyDeliveryID("evt_1", "ep_1")}, DeliveryIDs("t1", "evt_1", "ep_1", at))
	p, ok := ParseDeliveryID(a)
	require.True(t, ok)
	require.Equal(t, ParsedDeliveryID{At: time.Date(2026, 12, 7, 6, 0, 0, 123e6, time.UTC), TenantHash: TenantHash("t1")}, p)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-v]{8}$`), TenantHash("t1"))
	require.NotEqual(t, TenantHash("t1"), TenantHash("t2"))
}

// A delivery id carries its event's time, to the millisecond, so that a
// tenant's ids sort by it as strings; a legacy id and a string that is not
// an id carry none.
func TestDeliveryIDsSortByTheirEventsTime(t *testing.T) {
	t.Parallel()
	times := []time.Time{
		time.Unix(0, 0), time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC), time.Date(2026, 12, 7, 6, 0, 0, 1e6, time.UTC),
		time.Date(2026, 12, 7, 6, 0, 0, 2e6, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	var ids []string
	for i, at := range times {
		id := DeliveryID("t1", fmt.Sprintf("evt_%d", len(times)-i), "ep_1", at) // hashes in no order
		p, ok := ParseDeliveryID(id)
		require.True(t, ok)
		require.True(t, at.Equal(p.At), "%s: %s", id, p.At)
		ids = append(ids, id)
	}
	require.True(t, slices.IsSorted(ids), "%v", ids)
	for at, want := range map[time.Time]string{
		time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC): "000000000", {}: "000000000",
		time.Date(4100, 1, 1, 0, 0, 0, 0, time.UTC): "vvvvvvvvv",
	} {
		require.Equal(t, want, DeliveryID("t", "e", "p", at)[4:13], "%s is clamped", at)
	}
	good := DeliveryID("t1", "e", "p", times[2])
	for _, id := range []string{LegacyDeliveryID("evt_1", "ep_1"), "", "msg_", "msg_zzzzzzzzz" + good[13:], good[:14] + "w" + good[15:], "xyz_" + good[4:], good + "a"} {
		_, ok := ParseDeliveryID(id)
		require.False(t, ok, id)
	}
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
