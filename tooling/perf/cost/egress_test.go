package cost

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Static egress's prices are sourced like the rest, in the units its
// arithmetic assumes.
func TestStaticEgressPricesAreSourced(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]Price{
		"NATGatewayHour": Default.NATGatewayHour, "NATGatewayData": Default.NATGatewayData, "PublicIPv4Hour": Default.PublicIPv4Hour,
		"InterfaceEndpointHour": Default.InterfaceEndpointHour, "InterfaceEndpointData": Default.InterfaceEndpointData,
	} {
		require.Positive(t, p.USD, name)
		require.True(t, strings.HasPrefix(p.Source, "https://"), "%s has no source address", name)
		require.NotEmpty(t, p.Note, name)
	}
	require.Equal(t, "GB", Default.NATGatewayData.Unit)
	require.Equal(t, "GB", Default.InterfaceEndpointData.Unit)
}

// The figures docs/configuration.md ("Static egress") and README.md
// quote, by hand: a zone is a NAT gateway hour and an address hour, 730
// hours a month; per delivery, 1.05 attempts' exchanges and hookline's own
// calls through the NAT at $0.045 a GB; an interface endpoint pays for
// itself past hundreds of GB a month of one service's calls.
func TestStaticEgressByHand(t *testing.T) {
	t.Parallel()
	near := func(want, got float64, what string) {
		t.Helper()
		require.InDelta(t, want, got, 0.005, what)
	}
	near(36.50, StaticEgressMonthly(Default, 1), "a zone: 730 x ($0.045 + $0.005)")
	near(73.00, StaticEgressMonthly(Default, 2), "2 zones")
	near(109.50, StaticEgressMonthly(Default, 3), "3 zones")

	a := InitialAssumptions
	bytes := DefaultStaticEgress.NATBytesPerDelivery(a)
	require.InDelta(t, 1.05*2450+200, bytes, 1e-9)
	perMillion := DefaultStaticEgress.PerMillion(Default, a)
	near(1e6*2772.5/(1<<30)*0.045, perMillion, "2,772.5 bytes a delivery: 2.58 GB a million")
	near(0.12, perMillion, "the documented $0.12 a million")
	t.Logf("NAT bytes a delivery %.0f, $%.3f a million deliveries", bytes, perMillion)

	// Against the delivery's own cost (README.md's estimate).
	total := Estimate(Default, a.Inputs()).Total
	t.Logf("hookline's estimate $%.3f a million; static egress adds $%.3f (%.0f%%)", total, perMillion, 100*perMillion/total)

	near(7.30, InterfaceEndpointMonthly(Default, 1), "an interface endpoint, a zone")
	near(14.60, InterfaceEndpointMonthly(Default, 2), "in 2 zones")
	be := InterfaceEndpointBreakEvenGB(Default, 2)
	near(417.14, be, "$14.60 / ($0.045 - $0.010) a GB")
	// hookline's own calls through the NAT are OwnBytesPerDelivery: at
	// that rate the SQS endpoint pays for itself past billions of
	// deliveries a month.
	deliveries := be * (1 << 30) / DefaultStaticEgress.OwnBytesPerDelivery
	require.Greater(t, deliveries, 2e9, "break-even at %s deliveries a month", fmt.Sprintf("%.1e", deliveries))
}
