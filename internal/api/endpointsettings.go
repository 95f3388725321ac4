package api

import (
	"fmt"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/retry"
)

// An endpoint's own retry schedule and request timeout, both optional:
//
//   - retry_schedule: the delays before its retries, in whole seconds
//     ([10, 60, 600]: an attempt at once, then retries 10 s, 60 s and
//     600 s after each failure), in place of the stack's schedule. Held to
//     the stack's limits by retry.CheckEndpointSchedule: each delay within
//     SQS's 43200 s, no more attempts than the delivery queue's
//     maxReceiveCount (the stack's attempts), the whole within the stack's
//     age cap. The stack's jitter and Retry-After rule apply to it.
//   - timeout_seconds: the request timeout of its attempts, 1 s to the
//     stack's max request timeout (Server.MaxRequestTimeout, which the
//     deliver function's timeout is sized for).
//
// As rate_limit: absent leaves it as it is; on PATCH an empty list and 0
// return to the stack's (on create they are refused); null is refused, as
// for every field. The endpoint's view shows its own values, absent when
// it has the stack's.

// checkEndpointSettings adds what is wrong with in's retry_schedule and
// timeout_seconds to errs.
func (s *Server) checkEndpointSettings(errs *fieldErrors, in endpointInput, create bool) {
	if in.RetrySchedule != nil && (create || len(*in.RetrySchedule) > 0) {
		for _, p := range retry.CheckEndpointSchedule(s.Retry, *in.RetrySchedule) {
			field := "retry_schedule"
			if p.Step >= 0 {
				field = fmt.Sprintf("retry_schedule[%d]", p.Step)
			}
			msg := p.Message
			if p.Step < 0 && len(*in.RetrySchedule) == 0 {
				msg += " (an empty list on update returns to the stack's schedule)"
			}
			errs.add(field, "%s", msg)
		}
	}
	if msg := s.timeoutProblem(in.TimeoutSeconds, create); msg != "" {
		errs.add("timeout_seconds", "%s", msg)
	}
}

// timeoutProblem says what is wrong with a timeout_seconds (nil: absent),
// or nothing: 1 to the max request timeout, or 0 on update (the stack's).
func (s *Server) timeoutProblem(n *int, create bool) string {
	maxSecs := int(s.maxRequestTimeout() / time.Second)
	if n == nil || (*n == 0 && !create) || (*n >= 1 && *n <= maxSecs) {
		return ""
	}
	if *n > maxSecs {
		return fmt.Sprintf("%d s exceeds the stack's %d s max request timeout (the deliver function's timeout is sized for it)", *n, maxSecs)
	}
	return fmt.Sprintf("is %d, must be a whole number of seconds from 1 to %d (0 on update returns to the stack's timeout)", *n, maxSecs)
}

func (s *Server) maxRequestTimeout() time.Duration {
	if s.MaxRequestTimeout > 0 {
		return s.MaxRequestTimeout
	}
	return domain.DefaultRequestTimeout
}

// setEndpointSettings sets a new endpoint's own retry schedule and
// timeout from in, validated.
func setEndpointSettings(e *domain.Endpoint, in endpointInput) {
	if in.RetrySchedule != nil {
		e.RetrySchedule = *in.RetrySchedule
	}
	if in.TimeoutSeconds != nil {
		e.TimeoutSeconds = *in.TimeoutSeconds
	}
}
