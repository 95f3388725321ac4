package store

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// TestClaimRefusal checks the rule of who may claim a delivery for replay,
// apart from the conditional update that enforces it in the table.
func TestClaimRefusal(t *testing.T) {
	t.Parallel()
	staleBefore := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	old, recent := staleBefore.Add(-time.Second), staleBefore.Add(time.Second)
	claimed := func(state domain.DeliveryState, job string, at time.Time) domain.Delivery {
		return domain.Delivery{DeliveryID: "dlv_1", State: state, ReplayClaimedBy: job, ReplayClaimedAt: &at}
	}
	for _, c := range []struct {
		name string
		d    domain.Delivery
		want error // nil: claimable
	}{
		{"dead and unclaimed", domain.Delivery{DeliveryID: "dlv_1", State: domain.StateDead}, nil},
		{"claimed by another job lately", claimed(domain.StatePending, "job_other", recent), ErrReplayInFlight},
		{"dead, claimed by another job lately", claimed(domain.StateDead, "job_other", recent), ErrReplayInFlight},
		{"claimed by another job that stopped", claimed(domain.StatePending, "job_other", old), nil},
		{"claimed by this job", claimed(domain.StatePending, "job_1", recent), nil},
		{"delivered since this job claimed it", claimed(domain.StateDelivered, "job_1", old), ErrReplayInFlight},
		{"pending, never claimed", domain.Delivery{DeliveryID: "dlv_1", State: domain.StatePending}, ErrNotDead},
		{"delivered, released", domain.Delivery{DeliveryID: "dlv_1", State: domain.StateDelivered}, ErrNotDead},
	} {
		err := claimRefusal("dlv_1", c.d, "job_1", staleBefore)
		if c.want == nil {
			require.NoError(t, err, c.name)
			continue
		}
		require.ErrorIs(t, err, c.want, c.name)
		require.ErrorContains(t, err, "dlv_1", c.name)
	}
}
