package domain

import "time"

// Endpoint is a tenant's webhook receiver.
type Endpoint struct {
	TenantID   string `dynamodbav:"tenant_id"`
	EndpointID string `dynamodbav:"endpoint_id"`
	URL        string `dynamodbav:"url"`
	// SealedSecrets sign each request, newest first: each is a signing
	// secret encrypted under the stack's KMS key for this endpoint
	// (package sealing). Only the deliver function can open them.
	SealedSecrets []string `dynamodbav:"sealed_secrets,omitempty"`
	// Secrets are signing secrets in plaintext, as endpoints written before
	// secrets were sealed hold them: they sign only when SealedSecrets is
	// empty. A rotation, or `make seal-secrets` (store.SealPlaintextSecrets),
	// replaces them with sealed ones. Nothing writes them any more.
	Secrets []string `dynamodbav:"secrets,omitempty"`
	// Disabled endpoints get no deliveries.
	Disabled bool `dynamodbav:"disabled"`
	// EventTypes filters events; empty means every type.
	EventTypes []string `dynamodbav:"event_types,omitempty"`
	// DisabledReason says why an endpoint was disabled.
	DisabledReason DisableReason `dynamodbav:"disabled_reason,omitempty"`
	// DisabledAt is when the endpoint was last disabled; nil while it has
	// not been since it was created or enabled.
	DisabledAt *time.Time `dynamodbav:"disabled_at,omitempty"`
	// FailingSince marks an endpoint in a failure episode: set when its run
	// of consecutive failures reaches the failing threshold (or when it is
	// disabled by deliveries), cleared by its next success, which raises
	// endpoint.recovered. Enabling the endpoint keeps it, so the first
	// success after an enable is a recovery. Nil: not failing.
	FailingSince *time.Time `dynamodbav:"failing_since,omitempty"`
	// Description is the tenant's note on the endpoint.
	Description string `dynamodbav:"description,omitempty"`
	// Headers are sent with every request to the endpoint; they never
	// replace hookline's own headers.
	Headers map[string]string `dynamodbav:"headers,omitempty"`
	// SealedRetiringSecret is the secret a rotation replaced, sealed; it
	// keeps signing, beside the new one, until RetiringUntil.
	SealedRetiringSecret string `dynamodbav:"sealed_retiring_secret,omitempty"`
	// RetiringSecret is a replaced secret in plaintext (written before
	// secrets were sealed); it signs only when SealedRetiringSecret is empty.
	RetiringSecret string     `dynamodbav:"retiring_secret,omitempty"`
	RetiringUntil  *time.Time `dynamodbav:"retiring_until,omitempty"`
	UpdatedAt      *time.Time `dynamodbav:"updated_at,omitempty"`
	// Revision counts the writes of the endpoint's configuration made
	// through the API (a change, a rotation, an enable or a disable: each
	// adds one, atomically); 0 for an endpoint not changed since it was
	// created (or last changed before revisions were counted). A delivery
	// message carries the revision its sender read
	// (message.Message.EndpointRevision): deliver sends it by no older
	// copy of the endpoint than that (package deliver, "Endpoint reads").
	// Health writes (failure counts, the breaker, deliver's own disable)
	// do not count: deliver reads again what it wrote itself.
	Revision int64 `dynamodbav:"revision,omitempty"`
	// RateLimit is the most requests per second hookline sends the
	// endpoint, across every deliver invocation, replays and resends
	// included. 0 (the default): no limit.
	RateLimit int `dynamodbav:"rate_limit,omitempty"`
	// ConsecutiveFailures counts failed attempts since the last success.
	ConsecutiveFailures int `dynamodbav:"consecutive_failures"`
	// FailuresSince is when the current run of consecutive failures began
	// (its first failure); nil after a success. An endpoint is disabled for
	// failures only when the run has lasted DisableAfterFor.
	FailuresSince *time.Time `dynamodbav:"failures_since,omitempty"`
	// BreakerUntil, while the endpoint is failing (FailingSince), is when
	// its circuit breaker lets the next probe through (Breaker); nil while
	// the breaker is closed.
	BreakerUntil *time.Time `dynamodbav:"breaker_until,omitempty"`
	// BreakerTrips counts the probes that failed in this episode: each
	// doubles the breaker's open period (domain.Breaker.Open).
	BreakerTrips int       `dynamodbav:"breaker_trips,omitempty"`
	CreatedAt    time.Time `dynamodbav:"created_at"`

	// Type is where the endpoint's deliveries go: TypeHTTP (empty, the
	// default: a POST to URL) or one of the AWS destinations (TypeSQS,
	// TypeSNS, TypeEventBridge), reached by assuming RoleARN.
	Type EndpointType `dynamodbav:"type,omitempty"`
	// Target is an AWS destination's ARN: the customer's queue, topic or
	// bus. Empty for TypeHTTP.
	Target string `dynamodbav:"target,omitempty"`
	// RoleARN is the role in the customer's account that hookline assumes
	// to reach Target. Empty for TypeHTTP.
	RoleARN string `dynamodbav:"role_arn,omitempty"`
	// SealedExternalID is the external ID hookline generated for the
	// endpoint (shown once, at creation), sealed like a signing secret;
	// AssumeRole sends it, and the customer's trust policy requires it.
	SealedExternalID string `dynamodbav:"sealed_external_id,omitempty"`

	// Signatures are the Standard Webhooks schemes the endpoint is signed
	// with: SchemeV1 (HMAC-SHA256), SchemeV1a (Ed25519) or both during a
	// migration. Empty: v1 only.
	Signatures []string `dynamodbav:"signatures,omitempty"`
	// SealedSigningKeys are the endpoint's Ed25519 private keys (whsk_),
	// newest first, each sealed like a signing secret.
	SealedSigningKeys []string `dynamodbav:"sealed_signing_keys,omitempty"`
	// PublicKeys are the public halves of SealedSigningKeys (whpk_), in
	// the same order: served to receivers, never secret.
	PublicKeys []string `dynamodbav:"public_keys,omitempty"`

	// RetrySchedule, when set, replaces the stack's retry schedule for
	// this endpoint: the delay before each retry, in seconds.
	RetrySchedule []int `dynamodbav:"retry_schedule,omitempty"`
	// TimeoutSeconds, when set, replaces the stack's request timeout for
	// this endpoint.
	TimeoutSeconds int `dynamodbav:"timeout_seconds,omitempty"`

	// Filter, when set, is a payload filter on the event's data (package
	// filter): an event whose data it does not match creates no delivery
	// for the endpoint. Stored as the JSON the tenant sent, validated.
	Filter string `dynamodbav:"filter,omitempty"`

	// Auth, when set, is how hookline authenticates to the endpoint
	// (Basic, OAuth 2.0 client credentials or mTLS), beside the signature.
	// HTTP endpoints only.
	Auth *EndpointAuth `dynamodbav:"auth,omitempty"`

	// FailureRateAlert, when set, raises endpoint.degraded once per
	// episode when the endpoint's failure rate over the alert's window
	// reaches its threshold (package deliver, "Failure-rate alerts").
	// Stored with its defaults applied.
	FailureRateAlert *FailureRateAlert `dynamodbav:"failure_rate_alert,omitempty"`
	// DegradedSince marks an endpoint in a degraded episode: set where
	// absent when its alert's window reaches the threshold (the episode's
	// start, which names its endpoint.degraded), removed where present
	// when a later window is below it, and removed when the alert is set,
	// changed or removed, so that an episode is always of the alert as it
	// is. Nil: not degraded.
	DegradedSince *time.Time `dynamodbav:"degraded_since,omitempty"`
}

// ChangedAt is when the endpoint was last changed through the API
// (UpdatedAt: a change, a rotation, an enable or a disable), or created
// when it never was.
func (e Endpoint) ChangedAt() time.Time {
	if e.UpdatedAt != nil && e.UpdatedAt.After(e.CreatedAt) {
		return *e.UpdatedAt
	}
	return e.CreatedAt
}

// Accepts reports whether the endpoint subscribes to eventType: every type
// when EventTypes is empty, else an exact name or a "prefix.*" wildcard.
func (e Endpoint) Accepts(eventType string) bool {
	if len(e.EventTypes) == 0 {
		return true
	}
	for _, f := range e.EventTypes {
		if f == eventType || f == "*" {
			return true
		}
		if n := len(f); n >= 2 && f[n-2:] == ".*" && len(eventType) > n-1 && eventType[:n-1] == f[:n-1] {
			return true
		}
	}
	return false
}

// StoredSecret is one signing secret as the state table holds it: Sealed
// (encrypted for its endpoint, package sealing) or, on an endpoint written
// before secrets were sealed, Plain.
type StoredSecret struct {
	Sealed string
	Plain  string
}

// SigningSecrets returns the secrets that sign a request at now, as stored:
// the current ones, then the retiring one while its grace period lasts. A
// sealed form wins over a plaintext one.
func (e Endpoint) SigningSecrets(now time.Time) []StoredSecret {
	var out []StoredSecret
	if len(e.SealedSecrets) > 0 {
		for _, s := range e.SealedSecrets {
			out = append(out, StoredSecret{Sealed: s})
		}
	} else {
		for _, s := range e.Secrets {
			out = append(out, StoredSecret{Plain: s})
		}
	}
	if e.RetiringUntil == nil || !now.Before(*e.RetiringUntil) {
		return out
	}
	switch {
	case e.SealedRetiringSecret != "":
		out = append(out, StoredSecret{Sealed: e.SealedRetiringSecret})
	case e.RetiringSecret != "":
		out = append(out, StoredSecret{Plain: e.RetiringSecret})
	}
	return out
}

// MaxRateLimit is the highest Endpoint.RateLimit: 1000 requests per second.
const MaxRateLimit = 1000

// TenantBytes is the size of what the tenant wrote into e: its URL,
// description, event types, header names and values, filter, target, role
// ARN and its auth's public fields. The rest of the item (ids, sealed
// secrets, counters, times) is hookline's and bounded by it;
// MaxEndpointBytes caps this sum.
func (e Endpoint) TenantBytes() int {
	n := len(e.URL) + len(e.Description) + len(e.Filter) + len(e.Target) + len(e.RoleARN)
	for _, t := range e.EventTypes {
		n += len(t)
	}
	for k, v := range e.Headers {
		n += len(k) + len(v)
	}
	if e.Auth != nil {
		n += e.Auth.TenantBytes()
	}
	return n
}
