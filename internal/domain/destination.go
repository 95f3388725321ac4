package domain

// EndpointType says where an endpoint's deliveries go (Endpoint.Type).
type EndpointType string

// Endpoint types.
const (
	// TypeHTTP: a signed POST to the endpoint's URL (the empty type too).
	TypeHTTP EndpointType = "http"
	// TypeSQS: a message on the customer's SQS queue.
	TypeSQS EndpointType = "sqs"
	// TypeSNS: a message published to the customer's SNS topic.
	TypeSNS EndpointType = "sns"
	// TypeEventBridge: an entry put on the customer's EventBridge bus.
	TypeEventBridge EndpointType = "eventbridge"
)

// Valid reports whether t is one of the four endpoint types (the empty
// type, which Kind reads as TypeHTTP on a stored endpoint, is not).
func (t EndpointType) Valid() bool {
	switch t {
	case TypeHTTP, TypeSQS, TypeSNS, TypeEventBridge:
		return true
	}
	return false
}

// Kind is the endpoint's type, TypeHTTP when none is stored.
func (e Endpoint) Kind() EndpointType {
	if e.Type == "" {
		return TypeHTTP
	}
	return e.Type
}

// Signature schemes (Endpoint.Signatures).
const (
	// SchemeV1 is Standard Webhooks' HMAC-SHA256 signature.
	SchemeV1 = "v1"
	// SchemeV1a is Standard Webhooks' Ed25519 signature.
	SchemeV1a = "v1a"
)
