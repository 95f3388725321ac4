package cost

import (
	"math"

	"github.com/hookline/hookline/internal/domain"
)

// ForType returns the assumptions of a workload whose deliveries go to an
// endpoint of type t. An AWS destination is reached in the region (a
// request to an AWS endpoint, not the internet: no data transfer out), and
// its call's latency is inside the deliver function's measured duration,
// so it adds no receiver latency of its own. The AssumeRole calls behind it
// are free and made once an hour per warm instance and role: they cost
// nothing here.
func (a Assumptions) ForType(t domain.EndpointType) Assumptions {
	if t == domain.TypeHTTP || t == "" {
		return a
	}
	a.EgressBytesPerAttempt = 0
	a.ReceiverLatencyMS = 0
	return a
}

// CustomerPerMillion is what a million deliveries of bodyBytes each cost
// the destination's owner, the customer, in its own account: the requests
// that hookline makes there with the role it assumes are billed to the
// queue's, topic's or bus's owner. Each started 64 KB of a payload is one
// request. Zero for HTTP, whose receiver's costs are its own business.
func CustomerPerMillion(p Prices, t domain.EndpointType, bodyBytes float64) float64 {
	var price Price
	switch t {
	case domain.TypeSQS:
		price = p.SQSRequests
	case domain.TypeSNS:
		price = p.SNSPublish
	case domain.TypeEventBridge:
		price = p.EventBridgeEvents
	default:
		return 0
	}
	chunks := math.Max(1, math.Ceil(bodyBytes/(64<<10)))
	return Deliveries * chunks * price.USD / 1e6
}
