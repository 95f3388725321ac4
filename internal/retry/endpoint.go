package retry

import (
	"fmt"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// An endpoint's own schedule (domain.Endpoint.RetrySchedule) lists the
// delays before its retries, in whole seconds: [10, 60, 600] is an attempt
// at once, then three retries 10 s, 60 s and 600 s after the failure before
// each. It replaces the stack's Schedule for that endpoint's deliveries;
// the stack's jitter, age cap and visibility timeout still apply (the
// queue is the stack's), and so does the queue's maxReceiveCount, which is
// the stack's number of attempts: SQS moves a message to the DLQ after
// that many receives whatever an endpoint's schedule says.
//
// The limits (CheckEndpointSchedule, held at registration by the API, and
// again by ForEndpoint, which cuts what an older registration or a changed
// stack could leave past them):
//
//   - each delay from 0 to MaxDelay (43200 s): SQS hides a message at most
//     12 h; Decide shortens a 12 h step to LongestDelay, as the stack's;
//   - at most Attempts()-1 retries: the endpoint's attempts may not exceed
//     the stack's, the queue's maxReceiveCount. An endpoint with fewer is
//     dead-lettered explicitly after its last attempt (Redrives is false);
//   - the delays' sum within the stack's age cap (24 h by default): a
//     schedule longer than that would end in max_age_exceeded, never
//     reaching its last attempts.

// ForEndpoint is the policy of ep's deliveries: the stack's policy p, its
// Schedule replaced by ep's own (an attempt at once, then ep.RetrySchedule's
// delays) when ep has one. The endpoint's schedule is cut to p's attempts
// (the queue's maxReceiveCount) and each delay to MaxDelay, so that no
// stored schedule, however old, can outlast the queue's redrive; the age
// cap stays p's, and Decide applies it as ever. The result's Redrives
// reports whether SQS's redrive dead-letters its last attempt.
func ForEndpoint(p Policy, ep domain.Endpoint) Policy {
	if len(ep.RetrySchedule) == 0 {
		return p
	}
	receives := p.receives()
	steps := ep.RetrySchedule[:min(len(ep.RetrySchedule), receives-1)]
	sched := make([]time.Duration, 0, len(steps)+1)
	sched = append(sched, 0)
	for _, s := range steps {
		sched = append(sched, min(time.Duration(max(s, 0))*time.Second, MaxDelay))
	}
	p.Schedule, p.Receives = sched, receives
	return p
}

// receives is the queue's maxReceiveCount: Receives, or Attempts() when 0.
func (p Policy) receives() int {
	if p.Receives > 0 {
		return p.Receives
	}
	return p.Attempts()
}

// Redrives reports whether SQS's redrive policy dead-letters the policy's
// last attempt: its attempts are the queue's maxReceiveCount (always, for
// the stack's own policy). When false (an endpoint's shorter schedule,
// ForEndpoint) the consumer dead-letters the last failed attempt itself,
// and a message received past the attempts is dead untried.
func (p Policy) Redrives() bool {
	return p.Attempts() == p.receives()
}

// StepProblem is what CheckEndpointSchedule finds wrong: with the step's
// index (0-based, as the endpoint lists its delays), or Step -1 for the
// schedule as a whole.
type StepProblem struct {
	Step    int
	Message string
}

// CheckEndpointSchedule checks an endpoint's own retry schedule, delays in
// whole seconds, against the stack's policy p (see ForEndpoint for the
// limits): nil when it is usable. An empty schedule is not a schedule (the
// endpoint then has the stack's); the caller decides what it means.
func CheckEndpointSchedule(p Policy, secs []int) []StepProblem {
	var out []StepProblem
	if len(secs) == 0 {
		return []StepProblem{{-1, "must list at least one retry delay"}}
	}
	maxSecs := int(MaxDelay / time.Second)
	total := 0
	for i, s := range secs {
		switch {
		case s < 0:
			out = append(out, StepProblem{i, fmt.Sprintf("%d s is negative", s)})
		case s > maxSecs:
			out = append(out, StepProblem{i, fmt.Sprintf("%d s exceeds SQS's %d s visibility limit", s, maxSecs)})
		default:
			total += s
		}
	}
	if retries := p.Attempts() - 1; len(secs) > retries {
		out = append(out, StepProblem{-1, fmt.Sprintf("has %d retries, at most %d: the delivery queue moves a message to the DLQ after %d receives (its maxReceiveCount, the stack's %d attempts)", len(secs), retries, p.Attempts(), p.Attempts())})
	}
	if capSecs := int(p.maxAge() / time.Second); total > capSecs {
		out = append(out, StepProblem{-1, fmt.Sprintf("adds up to %d s, more than the stack's %d s age cap: the last retries would never be made", total, capSecs)})
	}
	return out
}

// AgeCap is the policy's age cap: MaxAge, or DefaultMaxAge when 0.
func (p Policy) AgeCap() time.Duration { return p.maxAge() }
