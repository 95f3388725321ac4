package destination

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sender"
)

// Poster sends one attempt and classifies it; *sender.Client (HTTP) and
// *Sender (AWS destinations) are Posters.
type Poster interface {
	Send(context.Context, sender.Request) sender.Result
}

var (
	_ Poster = (*sender.Client)(nil)
	_ Poster = (*Sender)(nil)
	_ Poster = Router{}
)

// Router sends an attempt to an AWS destination through AWS and every other
// through HTTP: one nil check on the HTTP path.
type Router struct{ HTTP, AWS Poster }

// Send routes r: to AWS when r.Destination is set, else to HTTP. An AWS
// destination with no AWS Poster configured is dead (invalid_destination).
func (r Router) Send(ctx context.Context, req sender.Request) sender.Result {
	if req.Destination == nil {
		return r.HTTP.Send(ctx, req)
	}
	if r.AWS == nil {
		return sender.Result{Outcome: sender.Dead, Error: "no_aws_sender", Reason: domain.ReasonInvalidDestination}
	}
	return r.AWS.Send(ctx, req)
}
