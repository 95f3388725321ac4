package deliver

import (
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sender"
	"github.com/stretchr/testify/require"
)

// decidePolicy: three attempts (0, 10 s, 60 s), 24 h age cap, a 6 min queue
// visibility timeout, so the longest delay is 12 h - 6 min - 1 min.
var decidePolicy = retry.Policy{Schedule: []time.Duration{0, 10 * time.Second, 60 * time.Second}, MaxAge: 24 * time.Hour, VisibilityTimeout: 6 * time.Minute}

func TestDecideBeforeTheRequest(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fresh := message.Message{DeliveryID: "d1", OccurredAt: t0.Add(-time.Minute)}
	old := message.Message{DeliveryID: "d1", OccurredAt: t0.Add(-25 * time.Hour)}
	replayed := old
	replayed.ReplayedAt = ptr(t0.Add(-time.Hour))
	delivered := domain.Delivery{DeliveryID: "d1", State: domain.StateDelivered}
	cancelledAt := t0.Add(-time.Hour)
	cancelled := domain.Delivery{DeliveryID: "d1", State: domain.StateCancelled, CancelledAt: &cancelledAt}
	replayedAt := func(m message.Message, at time.Time) message.Message { m.ReplayedAt = &at; return m }
	resend := fresh
	resend.Resend, resend.ReplayedAt = true, ptr(t0)
	disabled := domain.Endpoint{EndpointID: "ep_1", Disabled: true}
	for _, tc := range []struct {
		name string
		in   Input
		want Decision
	}{
		{"an undecodable message goes to the DLQ unrecorded", Input{Hitch: HitchUndecodable}, Decision{Kind: DeadUnrecorded, Reason: domain.ReasonMalformedMessage}},
		{"an unreadable delivery waits, no attempt spent", Input{Message: old, Hitch: HitchDeliveryUnreadable}, Decision{Kind: Defer, Wait: WaitDependency}},
		{"a delivered delivery is a duplicate", Input{Message: fresh, Delivery: delivered}, Decision{Kind: Duplicate}},
		{"a delivered delivery is a duplicate, however old", Input{Message: old, Delivery: delivered}, Decision{Kind: Duplicate}},
		{"a resend of a delivered delivery is sent", Input{Message: resend, Delivery: delivered}, Decision{Kind: Send}},
		{"a resend on the last receive does not mark the delivery dead", Input{Attempt: 3, Message: resend, Delivery: delivered}, Decision{Kind: Send}},
		{"a resend to a disabled endpoint is given up", Input{Message: resend, Delivery: delivered, Endpoint: disabled}, Decision{Kind: Dead, Reason: domain.ReasonEndpointDisabled}},
		{"an event past the age cap is dead untried", Input{Message: old}, Decision{Kind: Dead, Reason: domain.ReasonMaxAgeExceeded}},
		{"the age cap comes before the endpoint", Input{Message: old, Hitch: HitchEndpointMissing}, Decision{Kind: Dead, Reason: domain.ReasonMaxAgeExceeded}},
		{"a replayed event's age counts from the replay", Input{Message: replayed}, Decision{Kind: Send}},
		{"a missing endpoint is dead", Input{Message: fresh, Hitch: HitchEndpointMissing}, Decision{Kind: Dead, Reason: domain.ReasonEndpointNotFound}},
		{"an unreadable endpoint waits, no attempt spent", Input{Message: fresh, Hitch: HitchEndpointUnreadable}, Decision{Kind: Defer, Wait: WaitDependency}},
		{"a disabled endpoint is dead", Input{Message: fresh, Endpoint: disabled}, Decision{Kind: Dead, Reason: domain.ReasonEndpointDisabled}},
		{"an invalid secret is dead", Input{Message: fresh, Hitch: HitchSecretInvalid}, Decision{Kind: Dead, Reason: domain.ReasonInvalidSecret}},
		{"an unavailable secret waits, no attempt spent", Input{Message: fresh, Hitch: HitchSecretUnavailable}, Decision{Kind: Defer, Wait: WaitDependency}},
		{"an open breaker: the message waits", Input{Message: fresh, Hitch: HitchBreakerOpen}, Decision{Kind: Defer, Wait: WaitBreakerOpen}},
		{"a busy endpoint: the message waits", Input{Message: fresh, Hitch: HitchEndpointBusy}, Decision{Kind: Defer, Wait: WaitBusy}},
		{"a tenant at its share: the message waits", Input{Message: fresh, Hitch: HitchTenantBusy}, Decision{Kind: Defer, Wait: WaitTenantBusy}},
		{"no rate slot: the message waits", Input{Message: fresh, Hitch: HitchRateLimited}, Decision{Kind: Defer, Wait: WaitRateLimited}},
		{"a disabled endpoint is dead before its breaker is asked", Input{Message: fresh, Endpoint: disabled, Hitch: HitchBreakerOpen}, Decision{Kind: Dead, Reason: domain.ReasonEndpointDisabled}},
		{"a retry not yet due hops", Input{Message: due(fresh, t0.Add(time.Hour))}, Decision{Kind: Defer, Wait: WaitBackoff}},
		{"a retry due within a second is sent", Input{Message: due(fresh, t0.Add(HopSlack))}, Decision{Kind: Send}},
		{"a retry that came back late is sent", Input{Message: due(fresh, t0.Add(-time.Hour))}, Decision{Kind: Send}},
		{"the age cap comes before a hop", Input{Message: due(old, t0.Add(time.Hour))}, Decision{Kind: Dead, Reason: domain.ReasonMaxAgeExceeded}},
		{"a body that cannot be built is dead", Input{Message: fresh, Hitch: HitchBodyMalformed}, Decision{Kind: Dead, Reason: domain.ReasonMalformedMessage}},
		{"a cancelled delivery is dropped unsent", Input{Message: fresh, Delivery: cancelled}, Decision{Kind: Cancelled}},
		{"a cancelled delivery is dropped on its last receive too", Input{Attempt: 3, Message: fresh, Delivery: cancelled}, Decision{Kind: Cancelled}},
		{"a replay made before the cancel is dropped", Input{Message: replayedAt(fresh, t0.Add(-2*time.Hour)), Delivery: cancelled}, Decision{Kind: Cancelled}},
		{"a replay made after the cancel is sent", Input{Message: replayedAt(fresh, t0), Delivery: cancelled}, Decision{Kind: Send}},
		{"a tenant being erased: dropped", Input{Attempt: 9, Message: fresh, Hitch: HitchTenantErased}, Decision{Kind: Dropped}},
		{"no time left returns the message untried", Input{Message: fresh, Hitch: HitchNoTimeLeft}, Decision{Kind: ReturnUntried}},
		{"no time left on the last receive returns it untried too", Input{Attempt: 3, Message: fresh, Hitch: HitchNoTimeLeft}, Decision{Kind: ReturnUntried}},
		{"ready on the first receive: send", Input{Attempt: 1, Message: fresh}, Decision{Kind: Send}},
		{"ready on the next to last receive: send", Input{Attempt: 2, Message: fresh}, Decision{Kind: Send}},
		{"ready on the last receive: record the death first, then send", Input{Attempt: 3, Message: fresh}, Decision{Kind: Send, MarkDeadFirst: true}},
		{"past the last receive: the same", Input{Attempt: 5, Message: fresh}, Decision{Kind: Send, MarkDeadFirst: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Started = t0
			if tc.in.Attempt == 0 {
				tc.in.Attempt = 1
			}
			// now is not read before a request: a later clock changes nothing.
			require.Equal(t, tc.want, Decide(tc.in, decidePolicy, t0.Add(48*time.Hour), nil))
		})
	}
}

func TestDecideTheResult(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fresh := message.Message{DeliveryID: "d1", OccurredAt: t0.Add(-time.Minute)}
	// Within the cap when the attempt started, and the next step (10 s)
	// counted from then would be too; counted from the result, 10 s later,
	// it is past the cap.
	nearCap := message.Message{DeliveryID: "d1", OccurredAt: t0.Add(-24*time.Hour + 15*time.Second)}
	old := message.Message{DeliveryID: "d1", OccurredAt: t0.Add(-25 * time.Hour)}
	healthy := domain.Endpoint{EndpointID: "ep_1"}
	failing := domain.Endpoint{EndpointID: "ep_1", ConsecutiveFailures: 7}
	longest := decidePolicy.LongestDelay()
	for _, tc := range []struct {
		name     string
		attempt  int
		msg      message.Message
		ep       domain.Endpoint
		res      sender.Result
		rnd      func() float64
		want     Decision
		wantSecs int // expected delay in seconds, as a cross-check on Retry
	}{
		{"2xx is delivered", 1, fresh, healthy, sender.Result{Outcome: sender.Delivered, Status: 200}, nil,
			Decision{Kind: Delivered}, 0},
		{"2xx resets a failing endpoint's count", 1, fresh, failing, sender.Result{Outcome: sender.Delivered, Status: 200}, nil,
			Decision{Kind: Delivered, ResetFailures: true}, 0},
		{"2xx on the last attempt is delivered", 3, fresh, healthy, sender.Result{Outcome: sender.Delivered, Status: 200}, nil,
			Decision{Kind: Delivered}, 0},
		{"once sent, the age cap no longer stands in the way of a 2xx", 1, old, healthy, sender.Result{Outcome: sender.Delivered, Status: 200}, nil,
			Decision{Kind: Delivered}, 0},
		{"a permanent rejection is dead and counted", 1, fresh, healthy, sender.Result{Outcome: sender.Dead, Status: 400, Reason: domain.Rejected(400)}, nil,
			Decision{Kind: Dead, Reason: "rejected_400", CountFailure: true}, 0},
		{"410 is dead and disables the endpoint", 1, fresh, healthy, sender.Result{Outcome: sender.Dead, Status: 410, Reason: domain.ReasonEndpointGone, DisableEndpoint: domain.DisabledEndpointGone}, nil,
			Decision{Kind: Dead, Reason: domain.ReasonEndpointGone, DisableEndpoint: domain.DisabledEndpointGone, CountFailure: true}, 0},
		{"a retryable failure waits the next step", 1, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 500}, nil,
			Decision{Kind: Retry, Delay: 10 * time.Second, CountFailure: true}, 10},
		{"the second failure waits the step after", 2, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 503}, nil,
			Decision{Kind: Retry, Delay: 60 * time.Second, CountFailure: true}, 60},
		{"jitter is drawn from rnd", 1, fresh, healthy, sender.Result{Outcome: sender.Retry, Error: "timeout"}, func() float64 { return 0.75 },
			Decision{Kind: Retry, Delay: 11 * time.Second, CountFailure: true}, 11},
		{"Retry-After longer than the step is honoured", 1, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 429, RetryAfter: 120 * time.Second}, nil,
			Decision{Kind: Retry, Delay: 120 * time.Second, CountFailure: true}, 120},
		{"Retry-After shorter than the step is not", 2, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 429, RetryAfter: time.Second}, nil,
			Decision{Kind: Retry, Delay: 60 * time.Second, CountFailure: true}, 60},
		{"Retry-After past what SQS allows waits the longest it does", 1, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 429, RetryAfter: 13 * time.Hour}, nil,
			Decision{Kind: Retry, Delay: longest, CountFailure: true}, 42780},
		{"the last attempt's failure is dead-lettered, not left to the redrive policy", 3, fresh, healthy, sender.Result{Outcome: sender.Retry, Status: 500}, nil,
			Decision{Kind: Dead, Reason: domain.ReasonAttemptsExhausted, CountFailure: true}, 0},
		{"a retry past the age cap, counted from the result, is dead", 1, nearCap, healthy, sender.Result{Outcome: sender.Retry, Status: 500}, nil,
			Decision{Kind: Dead, Reason: domain.ReasonMaxAgeExceeded, CountFailure: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res
			in := Input{Attempt: tc.attempt, Message: tc.msg, Started: t0, Endpoint: tc.ep, Result: &res}
			// The result is in ten seconds after the attempt started: a
			// retry's delay, and its age check, count from then.
			got := Decide(in, decidePolicy, t0.Add(10*time.Second), tc.rnd)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantSecs, int(got.Delay/time.Second))
		})
	}
}

func TestKindsHaveNames(t *testing.T) {
	t.Parallel()
	seen := map[string]Kind{}
	for k := Send; k <= ReturnUntried; k++ {
		name := k.String()
		require.NotEqual(t, "unknown", name, "kind %d", int(k))
		require.NotContains(t, seen, name, "kind %d shares a name", int(k))
		seen[name] = k
	}
	require.Equal(t, "unknown", Kind(-1).String())
}

func ptr[T any](v T) *T { return &v }

// due is m waiting out a long retry delay until at.
func due(m message.Message, at time.Time) message.Message {
	m.NotBefore = &at
	return m
}
