package domain

// Dead reasons of an attempt to an AWS destination (TypeSQS, TypeSNS,
// TypeEventBridge); docs/destinations.md maps each AWS error to one.
const (
	// ReasonDestinationRoleRefused: sts:AssumeRole of the endpoint's role
	// was refused (no such role, a trust policy that does not name
	// hookline's deliver role, or another external ID).
	ReasonDestinationRoleRefused DeadReason = "destination_role_refused"
	// ReasonDestinationRoleUnguarded: the role accepted an AssumeRole with
	// a wrong external ID (hookline's probe): its trust policy does not
	// require the endpoint's, so nothing is sent and the endpoint is
	// disabled (DisabledRoleUnguarded).
	ReasonDestinationRoleUnguarded DeadReason = "destination_role_unguarded"
	// ReasonDestinationAccessDenied: the role was assumed, but its
	// permissions do not allow the send (sqs:SendMessage, sns:Publish,
	// events:PutEvents, or the queue's or topic's KMS key).
	ReasonDestinationAccessDenied DeadReason = "destination_access_denied"
	// ReasonDestinationNotFound: the queue, topic or bus does not exist.
	ReasonDestinationNotFound DeadReason = "destination_not_found"
	// ReasonDestinationKeyUnusable: the destination's KMS key is disabled,
	// pending deletion, missing or in a state that cannot encrypt.
	ReasonDestinationKeyUnusable DeadReason = "destination_key_unusable"
	// ReasonDestinationRefused: the service refused the message as invalid
	// (a 4xx validation error that retrying cannot change).
	ReasonDestinationRefused DeadReason = "destination_refused"
	// ReasonPayloadTooLarge: the message is over the destination's size
	// limit (256 KiB), found before sending.
	ReasonPayloadTooLarge DeadReason = "payload_too_large"
	// ReasonInvalidDestination: the endpoint's target or role ARN is
	// malformed, or its type is not an AWS destination.
	ReasonInvalidDestination DeadReason = "invalid_destination"
)
