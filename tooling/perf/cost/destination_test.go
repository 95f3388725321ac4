package cost

import (
	"math"
	"testing"

	"github.com/hookline/hookline/internal/domain"
)

func TestForTypeDropsEgressForAWSDestinations(t *testing.T) {
	a := InitialAssumptions
	http := Estimate(Default, a.ForType(domain.TypeHTTP).Inputs())
	if http.DataTransfer == 0 {
		t.Fatal("an HTTP delivery should pay data transfer out")
	}
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		b := Estimate(Default, a.ForType(typ).Inputs())
		if b.DataTransfer != 0 {
			t.Errorf("%s: data transfer %.3f, want 0 (in-region AWS call)", typ, b.DataTransfer)
		}
		if b.LambdaDeliver >= http.LambdaDeliver {
			t.Errorf("%s: deliver duration %.3f should drop the assumed receiver latency (HTTP %.3f)", typ, b.LambdaDeliver, http.LambdaDeliver)
		}
	}
}

func TestCustomerPerMillion(t *testing.T) {
	cases := []struct {
		typ   domain.EndpointType
		bytes float64
		want  float64
	}{
		{domain.TypeHTTP, 1000, 0},
		{domain.TypeSQS, 1000, 0.40},
		{domain.TypeSNS, 1000, 0.50},
		{domain.TypeEventBridge, 1000, 1},
		{domain.TypeEventBridge, 64<<10 + 1, 2}, // two 64 KB chunks
		{domain.TypeSQS, 256 << 10, 1.60},
	}
	for _, c := range cases {
		if got := CustomerPerMillion(Default, c.typ, c.bytes); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s at %.0f bytes: $%.2f, want $%.2f", c.typ, c.bytes, got, c.want)
		}
	}
}
