package deliver

import (
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sender"
)

// Hitch is what reading an attempt's records and preparing its request ran
// into: the first thing that stopped the preparation, or HitchNone.
type Hitch int

const (
	// HitchNone: nothing stood in the way (so far).
	HitchNone Hitch = iota
	// HitchUndecodable: the SQS message is not a delivery message.
	HitchUndecodable
	// HitchDeliveryUnreadable: the delivery's record could not be read.
	HitchDeliveryUnreadable
	// HitchEndpointMissing: the endpoint does not exist.
	HitchEndpointMissing
	// HitchEndpointUnreadable: the endpoint's record could not be read.
	HitchEndpointUnreadable
	// HitchSecretInvalid: no signing secret of the endpoint can sign (one
	// cannot be opened for it, or opened it is not a secret).
	HitchSecretInvalid
	// HitchSecretUnavailable: a sealed secret could not be opened for now
	// (KMS throttled or unreachable, or nothing to open it with).
	HitchSecretUnavailable
	// HitchBodyMalformed: the request body cannot be built from the message.
	HitchBodyMalformed
	// HitchNoTimeLeft: too little of the invocation is left to attempt and
	// record it.
	HitchNoTimeLeft
	// HitchRateLimited: the endpoint's rate limit has no request slot for
	// the attempt within the wait this invocation can afford.
	HitchRateLimited
	// HitchTenantErased: the message's tenant is being erased (it has a
	// tombstone).
	HitchTenantErased
	// HitchBreakerOpen: the endpoint's circuit breaker is open, or half
	// open with its one probe already out.
	HitchBreakerOpen
	// HitchEndpointBusy: the endpoint's gate has no slot: as many
	// invocations as it may have are sending to it.
	HitchEndpointBusy
	// HitchTenantBusy: the tenant's gate has no slot: as many invocations
	// as its share allows are sending to its endpoints (or its slots rest
	// after slow batches).
	HitchTenantBusy
)

// Wait names why a deferred message waits (Decision.Wait; the Deferred
// metric's reason).
type Wait string

// Waits.
const (
	WaitRateLimited Wait = "rate_limited"
	WaitBreakerOpen Wait = "breaker_open"
	WaitBusy        Wait = "endpoint_busy"
	// WaitTenantBusy: the tenant has its share of the deliver pool
	// (Config.TenantConcurrency); the message waits, no attempt spent.
	WaitTenantBusy Wait = "tenant_busy"
	// WaitDependency: hookline's own dependency (DynamoDB, KMS) failed
	// before the attempt; it is tried again soon, no attempt spent.
	WaitDependency Wait = "dependency"
	// WaitBackoff: the retry delay runs past what SQS can delay a message
	// for; it is waited out in hops of at most MaxDeferDelay.
	WaitBackoff Wait = "backoff"
)

// Input is everything Decide reads about one message's attempt.
type Input struct {
	// Attempt is the attempt number: the attempts the message carries
	// (message.Message.Attempts, set when it was sent again to wait for
	// its endpoint's rate limit) plus its ApproximateReceiveCount (at
	// least 1).
	Attempt int
	// Message is the decoded message; zero with HitchUndecodable.
	Message message.Message
	// Started is when the attempt began: the age cap is checked at it, and
	// the attempt is recorded at it.
	Started time.Time
	// Hitch is what stopped the preparation, HitchNone when nothing did.
	Hitch Hitch
	// Delivery is the delivery's record, or one built from the message when
	// it has none yet.
	Delivery domain.Delivery
	// Endpoint is the endpoint's record, zero until it is read.
	Endpoint domain.Endpoint
	// Result is what the request did; nil when none was sent (yet).
	Result *sender.Result
}

// Kind names what happens to a message.
type Kind int

const (
	// Send: nothing rules the attempt out; send the request. Decide's answer
	// while Input.Result is nil and no hitch or record stands in the way.
	Send Kind = iota
	// Delivered: record the delivery delivered and delete the message.
	Delivered
	// Retry: record the attempt (pending), hide the message for
	// Decision.Delay and let it come back.
	Retry
	// Dead: record the delivery dead with Decision.Reason, send the message
	// to the DLQ and delete it.
	Dead
	// DeadUnrecorded: send the message to the DLQ as it is; it names no
	// delivery to record (malformed).
	DeadUnrecorded
	// Duplicate: the delivery is already delivered; delete the message,
	// write nothing.
	Duplicate
	// ReturnUntried: no time left; make the message visible at once, untried.
	ReturnUntried
	// Defer: the attempt cannot be made now for a reason of the
	// endpoint's (its rate limit, circuit breaker or gate) or of
	// hookline's own (a dependency failed; a long backoff's hop), named by
	// Decision.Wait. Send the message again as a new one, delayed,
	// carrying the attempts made (so waiting costs neither an attempt nor
	// a receive), and delete this one.
	Defer
	// Dropped: the tenant is being erased; delete the message, write
	// nothing, send nothing to the DLQ.
	Dropped
	// Cancelled: the delivery was cancelled (and the message is not a
	// replay made after the cancel); delete the message unsent, write
	// nothing.
	Cancelled
)

var kindNames = [...]string{
	Send: "send", Delivered: "delivered", Retry: "retry", Dead: "dead",
	DeadUnrecorded: "dead_unrecorded", Duplicate: "duplicate", ReturnUntried: "return_untried",
	Defer: "defer", Dropped: "dropped", Cancelled: "cancelled",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Decision is what Decide chose: a kind and what goes with it.
type Decision struct {
	Kind Kind
	// Delay, for Retry, is how long the message hides: whole seconds within
	// retry.Policy.LongestDelay.
	Delay time.Duration
	// Reason, for Dead and DeadUnrecorded, says why.
	Reason domain.DeadReason
	// Wait, for Defer, says what the message waits for.
	Wait Wait
	// MarkDeadFirst, for Send, asks for the delivery to be recorded dead
	// (attempts_exhausted) before the request: this is the last receive, and
	// should the outcome not be recorded, SQS moves the message to the DLQ's
	// arrivals unseen. Never for a message that carries attempts: SQS's redrive
	// cannot see them, so its exhaustion is dead-lettered here.
	MarkDeadFirst bool
	// DisableEndpoint, when not empty, disables the endpoint for this reason.
	DisableEndpoint domain.DisableReason
	// CountFailure counts a failed attempt against the endpoint (which the
	// store disables at the threshold of consecutive failures).
	CountFailure bool
	// ResetFailures clears the endpoint's count of consecutive failures and
	// its failing mark (a recovery when it had one). Only when the endpoint
	// as read has either, so a success of a healthy endpoint writes nothing
	// to it.
	ResetFailures bool
}

// Decide chooses what happens to a message, from what was read and what the
// attempt did, with no I/O. p is the retry policy; now is the clock when the
// request's result is in (a retry's delay counts from it; before a request
// it is not read); rnd draws the retry delay's jitter in [0, 1) (nil: none).
//
// Before a request (in.Result nil) it rules the attempt out, in this order,
// for: an undecodable message, a tenant being erased, an unreadable
// delivery (Defer: dependency), a delivery already delivered (unless the
// message is a resend), a cancelled one (unless the message is a replay
// made after the cancel), an event past the age cap at in.Started, a retry
// delay not yet run out (Defer: backoff, a hop), a missing or unreadable
// endpoint (Defer: dependency), a disabled one, an invalid or unavailable
// secret (Defer: dependency), a malformed body, no time left, an open
// breaker, a busy endpoint and no rate slot (each Defer); else it answers
// Send. After a request it classifies the result. Nothing that hookline
// itself or the endpoint's protection stands in the way of spends an
// attempt: every Defer carries the attempts made.
//
// A last failed attempt is Dead (attempts_exhausted), dead-lettered
// explicitly, whatever the queue's redrive policy would do: the DLQ holds
// a death as soon as it is recorded, and SQS's redrive (to the DLQ's
// arrivals, which the sweep checks and moves) is left the deaths deliver
// could not record. A message that carries attempts (sent again to wait
// for a rate limit) has a receive count below its attempt number, so SQS's
// redrive, which counts receives, would not stop it in time: it is never
// attempted past the schedule (should a last attempt's outcome be lost, it
// comes back and goes dead untried). So is a message to an endpoint whose
// own schedule has fewer attempts than the queue's maxReceiveCount (p from
// retry.ForEndpoint, p.Redrives false).
//
// p is the policy of the message's endpoint: the handler passes
// retry.ForEndpoint(stack policy, in.Endpoint).
func Decide(in Input, p retry.Policy, now time.Time, rnd func() float64) Decision {
	if in.Result == nil {
		return decideBefore(in, p)
	}
	return decideResult(in, p, now, rnd)
}

// decideBefore decides a message whose request is not sent (yet).
func decideBefore(in Input, p retry.Policy) Decision {
	switch {
	case in.Hitch == HitchUndecodable:
		return Decision{Kind: DeadUnrecorded, Reason: domain.ReasonMalformedMessage}
	case in.Hitch == HitchTenantErased:
		return Decision{Kind: Dropped}
	case in.Hitch == HitchDeliveryUnreadable:
		return wait(WaitDependency)
	case in.Delivery.State == domain.StateDelivered && !in.Message.Resend:
		return Decision{Kind: Duplicate}
	case !in.Delivery.Revives(in.Message.ReplayedAt):
		return Decision{Kind: Cancelled}
	case p.Expired(in.Message.AgeFrom(), in.Started):
		return deadUntried(domain.ReasonMaxAgeExceeded)
	case !redrives(in, p) && in.Attempt > p.Attempts():
		return deadUntried(domain.ReasonAttemptsExhausted)
	case in.Message.NotBefore != nil && in.Started.Before(in.Message.NotBefore.Add(-HopSlack)):
		return wait(WaitBackoff)
	case in.Hitch == HitchEndpointMissing:
		return deadUntried(domain.ReasonEndpointNotFound)
	case in.Hitch == HitchEndpointUnreadable:
		return wait(WaitDependency)
	case in.Endpoint.Disabled:
		return deadUntried(domain.ReasonEndpointDisabled)
	case in.Hitch == HitchSecretInvalid:
		return deadUntried(domain.ReasonInvalidSecret)
	case in.Hitch == HitchSecretUnavailable:
		return wait(WaitDependency)
	case in.Hitch == HitchBodyMalformed:
		return deadUntried(domain.ReasonMalformedMessage)
	case in.Hitch == HitchNoTimeLeft:
		return Decision{Kind: ReturnUntried}
	case in.Hitch == HitchBreakerOpen:
		return wait(WaitBreakerOpen)
	case in.Hitch == HitchEndpointBusy:
		return wait(WaitBusy)
	case in.Hitch == HitchTenantBusy:
		return wait(WaitTenantBusy)
	case in.Hitch == HitchRateLimited:
		return wait(WaitRateLimited)
	}
	// A resend of a delivered delivery never marks it dead: it stays
	// delivered whatever the resend does. Nor does a message that carries
	// attempts: its last failed attempt is dead-lettered explicitly.
	return Decision{Kind: Send, MarkDeadFirst: in.Attempt >= p.Attempts() && !isResend(in) && redrives(in, p)}
}

// redrives reports whether SQS's redrive policy takes the message (to the
// DLQ's arrivals) should its last attempt's outcome be lost: it carries no
// attempts (its receive count is its attempt number) and the policy's
// attempts are the queue's maxReceiveCount (not an endpoint's shorter
// schedule, retry.ForEndpoint). Then its death is recorded before that
// attempt (MarkDeadFirst); otherwise a message that comes back past its
// last attempt goes dead untried.
func redrives(in Input, p retry.Policy) bool {
	return in.Message.Attempts == 0 && p.Redrives()
}

// isResend reports whether in is an attempt of a resend of a delivered
// delivery: its outcome is logged, never recorded as the delivery's state.
func isResend(in Input) bool {
	return in.Message.Resend && in.Delivery.State == domain.StateDelivered
}

// decideResult decides a message whose request was sent.
func decideResult(in Input, p retry.Policy, now time.Time, rnd func() float64) Decision {
	res := in.Result
	switch res.Outcome {
	case sender.Delivered:
		return Decision{Kind: Delivered, ResetFailures: in.Endpoint.ConsecutiveFailures > 0 || in.Endpoint.FailingSince != nil}
	case sender.Dead:
		d := Decision{Kind: Dead, Reason: res.Reason, CountFailure: true}
		d.DisableEndpoint = res.DisableEndpoint
		return d
	}
	r := p.Decide(in.Attempt, in.Message.AgeFrom(), now, res.RetryAfter, rnd)
	switch {
	case r.Retry:
		return Decision{Kind: Retry, Delay: r.Delay, CountFailure: true}
	default:
		return Decision{Kind: Dead, Reason: r.Reason, CountFailure: true}
	}
}

// HopSlack is how early a hop's message may come back and be attempted:
// SQS delays a message by whole seconds and a poll may be late, so a
// message due within a second is not sent on another hop.
const HopSlack = time.Second

// wait is the decision to send a message again, delayed, for w.
func wait(w Wait) Decision {
	return Decision{Kind: Defer, Wait: w}
}

// deadUntried is the decision to give a delivery up, untried, for reason.
func deadUntried(reason domain.DeadReason) Decision {
	return Decision{Kind: Dead, Reason: reason}
}
