package retry

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// MaxDelay is the longest an SQS message can be hidden (the maximum
// visibility timeout): 12 h. Validate rejects schedule steps above it. SQS
// counts those 12 h from the message's receive, not from the
// ChangeMessageVisibility call, so the delays Decide returns are shorter
// still: see Policy.LongestDelay.
const MaxDelay = 12 * time.Hour

// DefaultVisibilityTimeout is the queue visibility timeout assumed when
// Policy.VisibilityTimeout is 0: 2 min, the stack's default (six times the
// deliver function's 20 s timeout).
const DefaultVisibilityTimeout = 2 * time.Minute

// VisibilityMargin is kept back from the 12 h that SQS allows, on top of the
// queue's visibility timeout, for SQS's own timekeeping: a message's
// visibility expires approximately, so the window in which a call can still
// find it in flight may run a little past the visibility timeout. See
// Policy.LongestDelay.
const VisibilityMargin = time.Minute

// DefaultSchedule is the schedule used when Policy.Schedule is nil:
// attempts at 0, 5s, 30s, 5m, 30m, 2h, 8h and 12h, eight attempts in all.
// Element i is the delay before attempt i+1, counted from the failure of the
// previous attempt; element 0 is always the first attempt, normally 0.
//
// Treat it as read-only; copy it before modifying.
var DefaultSchedule = []time.Duration{
	0,
	5 * time.Second,
	30 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	8 * time.Hour,
	12 * time.Hour,
}

// DefaultJitter is the jitter fraction used by JitterProportional when
// Policy.Jitter is 0: delays vary by ±20 %.
const DefaultJitter = 0.2

// DefaultMaxAge is the age cap used when Policy.MaxAge is 0: an event is not
// retried if the next attempt would start more than 24 h after it occurred.
const DefaultMaxAge = 24 * time.Hour

// JitterMode selects how Decide randomises the scheduled delay. The zero
// value, JitterProportional, is the default.
type JitterMode int

const (
	// JitterProportional (the default) scales the delay by a factor drawn
	// uniformly from [1-Jitter, 1+Jitter].
	JitterProportional JitterMode = iota
	// JitterFull draws the delay uniformly from [0, d], d being the
	// scheduled delay; Policy.Jitter is ignored.
	JitterFull
	// JitterNone uses the scheduled delay as is.
	JitterNone
)

// Policy is a retry policy. The zero value is valid and means
// DefaultSchedule, ±DefaultJitter proportional jitter and DefaultMaxAge.
type Policy struct {
	// Schedule holds one delay per attempt; element i is the delay before
	// attempt i+1, counted from the previous failure. nil means
	// DefaultSchedule; a non-nil empty schedule is invalid.
	Schedule []time.Duration
	// Jitter is the fraction used by JitterProportional, in [0, 1].
	// 0 means DefaultJitter (0.2); to disable jitter use Mode JitterNone.
	Jitter float64
	// Mode selects the jitter; the zero value is JitterProportional.
	Mode JitterMode
	// MaxAge caps how long after the event occurred an attempt may start.
	// 0 means DefaultMaxAge (24 h).
	MaxAge time.Duration
	// VisibilityTimeout is the delivery queue's visibility timeout: how
	// long a received message stays in flight, and so the longest time
	// between a receive and the ChangeMessageVisibility that schedules the
	// retry. It shortens the longest delay (see LongestDelay). 0 means
	// DefaultVisibilityTimeout (2 min). The CDK stack sets it from the
	// queue it creates.
	VisibilityTimeout time.Duration
	// Receives is the delivery queue's maxReceiveCount when it differs
	// from Attempts(): ForEndpoint sets it to the stack's attempts when it
	// puts an endpoint's own, shorter, schedule in place (see Redrives).
	// 0 (the stack's own policy) means Attempts(). Not carried by Env.
	Receives int
}

// Decision is the outcome of Policy.Decide.
type Decision struct {
	// Retry reports whether the message should be delivered again.
	Retry bool
	// Delay is the visibility timeout to set when Retry is true: whole
	// seconds in [0, LongestDelay()]. It is 0 when Retry is false.
	Delay time.Duration
	// Reason is empty when Retry is true, otherwise
	// domain.ReasonAttemptsExhausted or domain.ReasonMaxAgeExceeded.
	Reason domain.DeadReason
}

const (
	// maxReceiveCount is the largest maxReceiveCount SQS accepts in a
	// redrive policy.
	maxReceiveCount = 1000
)

func (p Policy) schedule() []time.Duration {
	if p.Schedule == nil {
		return DefaultSchedule
	}
	return p.Schedule
}

func (p Policy) jitter() float64 {
	if p.Jitter == 0 {
		return DefaultJitter
	}
	return p.Jitter
}

func (p Policy) maxAge() time.Duration {
	if p.MaxAge == 0 {
		return DefaultMaxAge
	}
	return p.MaxAge
}

func (p Policy) visibilityTimeout() time.Duration {
	if p.VisibilityTimeout == 0 {
		return DefaultVisibilityTimeout
	}
	return p.VisibilityTimeout
}

// LongestDelay is the longest delay Decide returns: MaxDelay less the
// queue's visibility timeout less VisibilityMargin, rounded down to whole
// seconds (11h57m with the default 2 min visibility timeout); 0 if nothing
// is left.
//
// SQS refuses a ChangeMessageVisibility that would keep a message hidden for
// more than 12 h counted from its receive: (call - receive) + delay must not
// exceed 12 h, or the request fails and the message comes back after the
// queue's visibility timeout instead of after the delay. The deliver
// function cannot see when SQS handed the message to the poller that
// invoked it (the event carries only the first receive and the send), but
// it need not: a call can only act on a message while it is in flight, and
// a received message is in flight for the queue's visibility timeout (the
// deliver function never extends it before the call that schedules the
// retry). So call - receive <= VisibilityTimeout (+ VisibilityMargin for
// SQS's approximate expiry), and any delay up to LongestDelay fits, however
// long the message waited for the invocation and however long the attempt
// took. Nothing here compares clocks, so no skew between SQS and Lambda can
// push past 12 h.
func (p Policy) LongestDelay() time.Duration {
	held := max(p.visibilityTimeout(), 0)
	if held >= MaxDelay-VisibilityMargin {
		return 0
	}
	return (MaxDelay - VisibilityMargin - held).Truncate(time.Second)
}

// Attempts returns the number of attempts the policy allows, len(Schedule)
// (8 for DefaultSchedule). The queue's redrive maxReceiveCount must equal it.
func (p Policy) Attempts() int {
	return len(p.schedule())
}

// Span is the sum of the schedule's delays (22h35m35s for
// DefaultSchedule): how long a run of failures that the schedule rides out,
// every attempt failing, lasts at least, jitter aside. A patient disable
// must wait at least this long, so that no outage the schedule rides out
// disables an endpoint.
func (p Policy) Span() time.Duration {
	var d time.Duration
	for _, step := range p.schedule() {
		d += step
	}
	return d
}

// Validate reports whether the policy is usable: the schedule (after
// defaulting) must be non-empty, have at most 1000 steps (the SQS limit on
// maxReceiveCount), and every step must lie in [0, MaxDelay]; Jitter must lie
// in [0, 1]; Mode must be a known JitterMode; MaxAge must not be negative;
// VisibilityTimeout must not be negative and must leave a delay under 12 h.
// The zero Policy is valid.
//
// A step of exactly 12 h (MaxDelay), as the default schedule's last, is
// valid: it asks for the longest wait SQS allows, and Decide shortens it to
// LongestDelay.
func (p Policy) Validate() error {
	if err := validateSchedule(p.schedule()); err != nil {
		return err
	}
	if j := p.Jitter; !(j >= 0 && j <= 1) {
		return fmt.Errorf("retry: jitter %v is outside [0, 1]", j)
	}
	switch p.Mode {
	case JitterProportional, JitterFull, JitterNone:
	default:
		return fmt.Errorf("retry: unknown jitter mode %d", int(p.Mode))
	}
	if p.MaxAge < 0 {
		return fmt.Errorf("retry: max age %s is negative", fmtDuration(p.MaxAge))
	}
	if p.Receives < 0 || p.Attempts() > p.receives() {
		return fmt.Errorf("retry: %d attempts, but the queue moves a message to the DLQ after %d receives", p.Attempts(), p.Receives)
	}
	if p.VisibilityTimeout < 0 {
		return fmt.Errorf("retry: visibility timeout %s is negative", fmtDuration(p.VisibilityTimeout))
	}
	if p.LongestDelay() < time.Second {
		return fmt.Errorf("retry: visibility timeout %s leaves no delay: SQS hides a message at most %s from its receive", fmtDuration(p.VisibilityTimeout), fmtDuration(MaxDelay))
	}
	return nil
}

func validateSchedule(s []time.Duration) error {
	if len(s) == 0 {
		return errors.New("retry: schedule is empty: at least one attempt is needed")
	}
	if len(s) > maxReceiveCount {
		return fmt.Errorf("retry: schedule has %d steps: SQS allows at most %d receives (maxReceiveCount)", len(s), maxReceiveCount)
	}
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("retry: step %d (%s) is negative", i, fmtDuration(d))
		}
		if d > MaxDelay {
			return fmt.Errorf("retry: step %d (%s) exceeds %s: SQS cannot hide a message for longer", i, fmtDuration(d), fmtDuration(MaxDelay))
		}
	}
	return nil
}

// fmtDuration is time.Duration.String without trailing zero units:
// "13h" rather than "13h0m0s", "5m" rather than "5m0s".
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseSchedule parses a comma-separated list of Go durations, such as
// "0s, 5s, 30s, 5m", into a schedule. Spaces around elements are allowed.
// The result is checked like Policy.Validate checks a schedule; errors name
// the offending element by its 0-based index.
func ParseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("retry: schedule is empty: at least one attempt is needed")
	}
	parts := strings.Split(s, ",")
	if len(parts) > maxReceiveCount {
		return nil, fmt.Errorf("retry: schedule has %d steps: SQS allows at most %d receives (maxReceiveCount)", len(parts), maxReceiveCount)
	}
	out := make([]time.Duration, 0, len(parts))
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("retry: schedule step %d is empty", i)
		}
		d, err := time.ParseDuration(part)
		if err != nil {
			return nil, fmt.Errorf("retry: schedule step %d (%q) is not a duration: %w", i, part, err)
		}
		out = append(out, d)
	}
	if err := validateSchedule(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Decide says what to do after failed attempt attempt (1-based, the
// message's ApproximateReceiveCount; values below 1 count as 1) of an event
// that occurred at occurred, at time now, given a Retry-After hint
// (0 when none, see ParseRetryAfter).
//
// If attempt >= Attempts() the answer is no retry, "attempts_exhausted".
// Otherwise the delay is Schedule[attempt], jittered per Mode with rnd
// (which returns values in [0, 1) like rand.Float64; nil means no jitter),
// raised to retryAfter if that is larger, rounded up to whole seconds and
// clamped to [0, LongestDelay()], so that SQS accepts it (a 12 h step, or a
// Retry-After of 12 h or more, waits LongestDelay). If now+delay is after
// occurred+MaxAge the answer is no retry, "max_age_exceeded"; the clamp comes
// first, so it only ever brings an attempt forward, never drops one.
func (p Policy) Decide(attempt int, occurred, now time.Time, retryAfter time.Duration, rnd func() float64) Decision {
	sched := p.schedule()
	if attempt < 1 {
		attempt = 1
	}
	if attempt >= len(sched) {
		return Decision{Reason: domain.ReasonAttemptsExhausted}
	}

	base := float64(max(sched[attempt], 0))
	delay := base
	if rnd != nil {
		switch p.Mode {
		case JitterNone:
		case JitterFull:
			delay = base * unit(rnd())
		default: // JitterProportional, and unknown modes
			delay = base * (1 + unit(p.jitter())*(2*unit(rnd())-1))
		}
	}
	if ra := float64(retryAfter); ra > delay {
		delay = ra
	}
	d := clampDelay(delay, p.LongestDelay())

	deadline := occurred.Add(p.maxAge())
	if now.Add(d).After(deadline) {
		return Decision{Reason: domain.ReasonMaxAgeExceeded}
	}
	return Decision{Retry: true, Delay: d}
}

// unit forces a random value or jitter fraction into [0, 1]; NaN becomes 0.
func unit(r float64) float64 {
	switch {
	case r > 1:
		return 1
	case r >= 0:
		return r
	default: // negative or NaN
		return 0
	}
}

// clampDelay rounds d (nanoseconds) up to whole seconds and clamps it to
// [0, limit]; limit is whole seconds.
func clampDelay(d float64, limit time.Duration) time.Duration {
	switch {
	case !(d > 0): // also NaN
		return 0
	case d >= float64(limit):
		return limit
	}
	dd := time.Duration(d)
	if rem := dd % time.Second; rem != 0 {
		dd += time.Second - rem
	}
	return min(dd, limit)
}

// ParseRetryAfter parses a Retry-After header value, either delta-seconds
// ("120") or an HTTP date (anything http.ParseTime accepts), into a delay
// relative to now. Surrounding spaces are ignored; delta-seconds too large
// for a time.Duration saturate. ok is false for an empty or unparsable
// value and for a date before now; a value of "0" or a date equal to now
// gives (0, true).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n > uint64(math.MaxInt64/int64(time.Second)) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		return 0, false
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Expired reports whether an event that occurred at occurred is past the age
// cap at now, so that no attempt may start.
func (p Policy) Expired(occurred, now time.Time) bool {
	return now.After(occurred.Add(p.maxAge()))
}
