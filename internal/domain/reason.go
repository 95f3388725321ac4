package domain

import "fmt"

// DeadReason says why a delivery was given up on (dead_reason). Every
// reason a delivery can die with is here.
type DeadReason string

// Dead reasons decided before or without an attempt's response.
const (
	// ReasonAttemptsExhausted: the retry schedule's last attempt failed.
	ReasonAttemptsExhausted DeadReason = "attempts_exhausted"
	// ReasonMaxAgeExceeded: the next attempt would start past the age cap.
	ReasonMaxAgeExceeded DeadReason = "max_age_exceeded"
	// ReasonMalformedMessage: the delivery's message cannot be decoded.
	ReasonMalformedMessage DeadReason = "malformed_message"
	// ReasonEndpointNotFound: the endpoint no longer exists.
	ReasonEndpointNotFound DeadReason = "endpoint_not_found"
	// ReasonEndpointDisabled: the endpoint is disabled.
	ReasonEndpointDisabled DeadReason = "endpoint_disabled"
	// ReasonInvalidSecret: none of the endpoint's signing secrets can sign.
	ReasonInvalidSecret DeadReason = "invalid_secret"
	// ReasonInvalidURL: the endpoint's URL cannot be requested.
	ReasonInvalidURL DeadReason = "invalid_url"
	// ReasonForbiddenAddress: the endpoint resolves to an address the SSRF
	// guard refuses.
	ReasonForbiddenAddress DeadReason = "forbidden_address"
	// ReasonEndpointGone: the receiver answered 410 Gone (the endpoint is
	// disabled too, DisabledEndpointGone).
	ReasonEndpointGone DeadReason = "endpoint_gone"
)

// RedirectNotFollowed is the dead reason of an attempt answered with a
// redirect (3xx) status: "redirect_<status>_not_followed".
func RedirectNotFollowed(status int) DeadReason {
	return DeadReason(fmt.Sprintf("redirect_%d_not_followed", status))
}

// Rejected is the dead reason of an attempt answered with a 4xx status that
// is not retried: "rejected_<status>".
func Rejected(status int) DeadReason {
	return DeadReason(fmt.Sprintf("rejected_%d", status))
}

// DisableReason says why an endpoint was disabled (disabled_reason).
type DisableReason string

// Disable reasons.
const (
	// DisabledConsecutiveFailures: too many attempts in a row failed.
	DisabledConsecutiveFailures DisableReason = "consecutive_failures"
	// DisabledEndpointGone: the receiver answered 410 Gone.
	DisabledEndpointGone DisableReason = "endpoint_gone"
	// DisabledRoleUnguarded: the endpoint's AWS role accepted a wrong
	// external ID (its trust policy has no sts:ExternalId condition), so
	// any of hookline's tenants could reach it; nothing is sent to it
	// until the customer fixes the trust policy and enables it.
	DisabledRoleUnguarded DisableReason = "destination_role_unguarded"
	// DisabledByTenant: the tenant disabled it through the API.
	DisabledByTenant DisableReason = "disabled_by_tenant"
)

// RejectReason says why enqueue rejected an outbox item (a Rejection's
// reason). Besides the constants here, the public outbox package's
// validation codes (outbox.Reason*) are reject reasons too: the outbox
// package is imported by producers and cannot import this one.
type RejectReason string

// Reject reasons decided by enqueue, once the item is valid.
const (
	// RejectNoEndpoint: no endpoint of the tenant subscribes to the event.
	RejectNoEndpoint RejectReason = "no_endpoint"
	// RejectUnknownTenant: the item names a tenant that does not exist.
	RejectUnknownTenant RejectReason = "unknown_tenant"
	// RejectUnknownEndpoint: the item names an endpoint the tenant does not have.
	RejectUnknownEndpoint RejectReason = "unknown_endpoint"
	// RejectSchemaMismatch: the payload does not validate against its
	// type's schema in the stack's event-type catalog, whose validation
	// for the type is "reject" (package eventtypes); the rejection's
	// field is payload and its detail names the violated path and keyword.
	RejectSchemaMismatch RejectReason = "schema_mismatch"
)
