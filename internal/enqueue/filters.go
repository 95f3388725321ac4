package enqueue

import (
	"context"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/filter"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/outbox"
)

// parsedFilters holds the endpoints' filters parsed, per warm instance,
// by their text: an endpoint's filter is parsed once, not once per event.
var parsedFilters filter.Cache

// parseFilter parses an endpoint's filter: through parsedFilters (a
// benchmark measures it without).
var parseFilter = parsedFilters.Parse

// filtered is targets less the endpoints whose payload filter does not
// match ev's data, and how many those were (counted as FilteredOut). It
// reads nothing: the filter is the endpoint's, read with it, and the data
// is the event's payload. An endpoint whose stored filter cannot be parsed
// (registration validates them, so it should not happen) keeps its
// delivery, counted as FilterErrors and logged: a filter that fails opens,
// so a bad one costs the receiver extra events, never the event itself.
// It filters targets in place.
func (h *Handler) filtered(ctx context.Context, inv *invocation, ev outbox.Event, targets []domain.Endpoint) ([]domain.Endpoint, int) {
	out, n := targets[:0], 0
	for _, ep := range targets {
		if ep.Filter == "" {
			out = append(out, ep)
			continue
		}
		f, err := parseFilter(ep.Filter)
		if err != nil {
			h.Log.WarnContext(ctx, "endpoint filter cannot be parsed; the event goes to it unfiltered",
				"tenant_id", ev.TenantID, "endpoint_id", ep.EndpointID, "event_id", ev.ID, "error", err.Error())
			inv.metrics.Put(metrics.FilterErrors, 1, nil)
			out = append(out, ep)
			continue
		}
		if f.Match(ev.Payload) {
			out = append(out, ep)
			continue
		}
		n++
		inv.metrics.Put(metrics.FilteredOut, 1, nil)
		h.Log.DebugContext(ctx, "event filtered out for an endpoint", "tenant_id", ev.TenantID, "event_id", ev.ID, "endpoint_id", ep.EndpointID)
	}
	return out, n
}
