package deliver

import (
	"context"
	"errors"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sender"
)

// openDestination, for an endpoint of an AWS type (sqs, sns, eventbridge),
// opens its external ID through h.Secrets (the signing secrets' opener,
// which keeps it in memory across warm invocations, never anywhere else)
// and sets the attempt's destination, with when the endpoint last changed
// (a refusal IAM's eventual consistency explains is retried for
// destination.SettleFor after it). An HTTP endpoint has none: the step
// returns at once.
func (h *Handler) openDestination(ctx context.Context, at *attempt) {
	ep := at.in.Endpoint
	if ep.Kind() == domain.TypeHTTP {
		return
	}
	if ep.SealedExternalID == "" {
		at.log.ErrorContext(ctx, "endpoint of an AWS type has no external id")
		at.in.Hitch = HitchSecretInvalid
		return
	}
	if h.Secrets == nil {
		at.log.ErrorContext(ctx, "endpoint has a sealed external id and nothing opens it; will retry")
		at.in.Hitch = HitchSecretUnavailable
		return
	}
	id, err := h.Secrets.Open(ctx, sealing.Ref{TenantID: ep.TenantID, EndpointID: ep.EndpointID}, ep.SealedExternalID)
	switch {
	case errors.Is(err, sealing.ErrInvalid):
		at.log.ErrorContext(ctx, "endpoint external id cannot be opened", "error", err.Error())
		at.in.Hitch = HitchSecretInvalid
		return
	case err != nil:
		at.log.ErrorContext(ctx, "cannot open the endpoint's external id; will retry", "error", err.Error())
		at.in.Hitch = HitchSecretUnavailable
		return
	}
	at.dest = &sender.Destination{Type: ep.Kind(), ARN: ep.Target, RoleARN: ep.RoleARN, ExternalID: id, TenantID: ep.TenantID, EndpointID: ep.EndpointID, ChangedAt: ep.ChangedAt()}
}
