package deliver

import (
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// endpointTimeout is the request timeout an endpoint set for itself
// (domain.Endpoint.TimeoutSeconds), 0 when it has none: the sender's
// request timeout then applies. The attempt's context (attemptContext)
// bounds it by the invocation's deadline less Reserve as it bounds every
// attempt, so a timeout stored before the stack's maximum was lowered
// cannot run the function past its own.
func endpointTimeout(ep domain.Endpoint) time.Duration {
	if ep.TimeoutSeconds <= 0 {
		return 0
	}
	return time.Duration(ep.TimeoutSeconds) * time.Second
}

// attemptTimeout is how long an attempt to ep may take: its own timeout,
// or the Config's RequestTimeout.
func (h *Handler) attemptTimeout(ep domain.Endpoint) time.Duration {
	if t := endpointTimeout(ep); t > 0 {
		return t
	}
	return h.cfg.RequestTimeout
}
