package destination

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// Options configure New. Every field's zero value is a default.
type Options struct {
	// RequestTimeout bounds an attempt when sender.Request.Timeout is 0.
	// Zero is domain.DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Now is the clock used for webhook-timestamp; nil is time.Now.
	Now func() time.Time
}

// Sender sends attempts to AWS destinations. Safe for concurrent use; build
// one per warm instance so that its credentials and clients are reused.
type Sender struct {
	cfg aws.Config
	o   Options
}

// New returns a Sender that calls STS with cfg (the deliver function's own
// configuration: region, endpoint override, credentials) and the customer's
// services with the role's credentials and the target's region.
func New(cfg aws.Config, o Options) *Sender {
	if o.RequestTimeout == 0 {
		o.RequestTimeout = domain.DefaultRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sender{cfg: cfg, o: o}
}

// Send makes one attempt to r.Destination and classifies it. It never
// returns an error: every failure is a Result.
func (s *Sender) Send(ctx context.Context, r sender.Request) sender.Result {
	if r.Destination == nil {
		return sender.Result{Outcome: sender.Dead, Error: "no_destination", Reason: domain.ReasonInvalidDestination}
	}
	return sender.Result{Outcome: sender.Retry, Error: "not_implemented"}
}
