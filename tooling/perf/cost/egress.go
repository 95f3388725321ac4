package cost

// Static egress (hookline.Props.StaticEgressAZs, off by default): the
// deliver function runs in a VPC whose internet traffic leaves through one
// NAT gateway per availability zone, each with an Elastic IP. It costs a
// fixed part a month, whatever the deliveries, and a part per delivery:
// the bytes the gateways process, both ways. DynamoDB takes a gateway
// endpoint (free); SQS, KMS and STS cross the NAT, for the arithmetic of
// InterfaceEndpointBreakEvenGB.

// HoursPerMonth is the month AWS's hourly prices are read over: 730 hours
// (8,760 a year / 12).
const HoursPerMonth = 730

// StaticEgress are the assumptions static egress's per-delivery cost rests
// on; each is to be measured (the NAT gateways' BytesOutToDestination and
// BytesInFromDestination metrics ÷ deliveries).
type StaticEgress struct {
	// NATBytesPerAttempt is what one attempt's HTTP exchange puts through
	// a NAT gateway, both directions (the gateway bills each byte it
	// processes, in or out): the request as EgressBytesPerAttempt (1,000),
	// an answer of status line, headers and a short body with its framing
	// (500), the TCP acknowledgements (200), and a share of the TLS 1.3
	// handshake of a new connection (about 6 KB with the server's
	// certificate chain) for the attempts that cannot reuse one (1 in 8
	// assumed: deliver keeps connections across warm invocations, a
	// sparse endpoint's idle one is gone): 750. 2,450 in all.
	NATBytesPerAttempt float64
	// OwnBytesPerDelivery is what hookline's own calls from deliver put
	// through the NAT per delivery: not DynamoDB (its gateway endpoint),
	// not the event source mappings' receives and deletes (Lambda's, not
	// the function's network). SQS sends of retries (0.05 a delivery,
	// about 2.5 KB a request with its SigV4 headers and answer: 125), a
	// KMS Decrypt per 100 deliveries (about 2 KB: 20) and their share of
	// connections: 200 assumed.
	OwnBytesPerDelivery float64
}

// DefaultStaticEgress holds the assumptions above.
var DefaultStaticEgress = StaticEgress{NATBytesPerAttempt: 2450, OwnBytesPerDelivery: 200}

// StaticEgressMonthly is static egress's fixed cost a month over azs
// zones: each zone's NAT gateway hour and its Elastic IP's public IPv4
// hour, 730 hours a month.
func StaticEgressMonthly(p Prices, azs int) float64 {
	return float64(azs) * HoursPerMonth * (p.NATGatewayHour.USD + p.PublicIPv4Hour.USD)
}

// NATBytesPerDelivery is what a delivery of a's workload puts through the
// NAT: its attempts' exchanges and hookline's own calls.
func (s StaticEgress) NATBytesPerDelivery(a Assumptions) float64 {
	return (1+a.RetriedFraction)*s.NATBytesPerAttempt + s.OwnBytesPerDelivery
}

// PerMillion is the NAT gateways' data processing for a million
// deliveries of a's workload. An AWS destination's call (an sqs, sns or
// eventbridge endpoint) crosses the NAT too, at about the size of an HTTP
// attempt: the same figure holds.
func (s StaticEgress) PerMillion(p Prices, a Assumptions) float64 {
	return Deliveries * s.NATBytesPerDelivery(a) / gib * p.NATGatewayData.USD
}

// InterfaceEndpointMonthly is one interface endpoint's fixed cost a month
// in azs zones: one AWS service (SQS, KMS, STS) reached privately.
func InterfaceEndpointMonthly(p Prices, azs int) float64 {
	return float64(azs) * HoursPerMonth * p.InterfaceEndpointHour.USD
}

// InterfaceEndpointBreakEvenGB is the GB a month of one service's traffic
// at which its interface endpoint in azs zones costs what it saves: each
// GB through the endpoint instead of the NAT saves the difference of
// their data processing prices.
func InterfaceEndpointBreakEvenGB(p Prices, azs int) float64 {
	return InterfaceEndpointMonthly(p, azs) / (p.NATGatewayData.USD - p.InterfaceEndpointData.USD)
}
