package cost

import (
	"testing"

	"github.com/hookline/hookline/internal/deliver"
	"github.com/stretchr/testify/require"
)

// A message waiting for an open breaker costs bounded work per hour: at
// most WaitingReceivesPerHour returns, each a tenth of a batch's three
// SQS requests and invocation and two reads of its own. A backlog of a
// million such messages waiting an hour is priced (logged) beside a
// million deliveries.
func TestWaitingHourIsBounded(t *testing.T) {
	a := InitialAssumptions
	require.Equal(t, deliver.BreakerReceivesPerHour, WaitingReceivesPerHour, "the deliver function's bound")
	w := a.Waiting()
	require.InDelta(t, 0.3, w.SQSRequests, 1e-9)
	require.InDelta(t, 2, w.ReadUnits, 1e-9)
	hour := a.WaitingHourUSD(Default)
	// By hand: 8 × (0.3 SQS requests + 2 RRU + 0.1 invocation + a tenth
	// of the deliver function's own time).
	byHand := 8 * (0.3*Default.SQSRequests.USD/1e6 + 2*Default.DynamoDBReads.USD/1e6 + 0.1*Default.LambdaRequests.USD/1e6 +
		0.1*a.DeliverOwnMS/1000*a.DeliverMemoryMB/1024*Default.LambdaArmGBSecond.USD)
	require.InDelta(t, byHand, hour, 1e-12)
	t.Logf("a million messages waiting an hour: $%.3f; a million deliveries: $%.3f", hour*1e6, Estimate(Default, a.Inputs()).Total)
}
