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

// recordFilterBases is how many filters' fixed parts (filter.WorkBase)
// one record's filters may spend in all, besides one filter's work per
// payload byte (filter.WorkPerByte), over every endpoint the event goes
// to: 16. Past it, the record's remaining filtered endpoints get the
// event unfiltered, as for a filter over its own budget. A stream batch's
// records hold at most Lambda's 6 MB invocation payload, so its matching
// spends at most 128 x 6 MB + 100 x 16 x WorkBase, about 0.9 billion
// units: at most about 4.5 s on a full core, 27 s on 256 MB's share of
// one, inside enqueue's 60 s timeout whatever the payloads and filters.
const recordFilterBases = 16

// share is how much of a record's fan-out plan goes inline. Nil: all of
// it (no deferral, Config.FanOutQueueURL unset, or the deferred fan-out
// itself).
type share struct {
	// messages are the tenant's messages planned inline so far this
	// invocation, of at most Config.LaneAfter; work its filters' work, of
	// at most Config.InlineWork.
	messages, work *int
	maxMessages    int
	maxWork        int
}

// filtered is targets less the endpoints whose payload filter does not
// match ev's data, and how many those were (counted as FilteredOut). It
// reads nothing: the filter is the endpoint's, read with it, and the data
// is the event's payload. An endpoint whose stored filter cannot be parsed
// (registration validates them, so it should not happen), or whose filter
// runs over its work budget on the payload (filter.OverBudget; the record's
// filters share one filter's work per byte and recordFilterBases fixed
// parts), keeps its delivery, counted as FilterErrors and logged: a filter
// that fails opens, so a bad one costs the receiver extra events, never the
// event itself. Endpoints with the same filter text share one outcome. It
// filters targets in place.
//
// With a share (sh not nil), it plans inline only the tenant's share of the
// invocation: it stops at the first endpoint past the share's messages
// (unless it is the record's last: that one message goes inline, to the
// lane, as cheap as its deferral and a hop shorter), or whose filter the
// share's work cannot finish, and answers deferred with that endpoint's
// index (targets[deferred:] go to the deferred fan-out); -1 when the whole
// record fits.
func (h *Handler) filtered(ctx context.Context, inv *invocation, ev outbox.Event, targets []domain.Endpoint, sh *share) (kept []domain.Endpoint, filteredOut, deferred int) {
	out, n := targets[:0], 0
	m := matching{payload: ev.Payload, one: filter.Budget(len(ev.Payload)), left: filter.WorkPerByte*len(ev.Payload) + recordFilterBases*filter.WorkBase, sh: sh}
	for i, ep := range targets {
		if sh != nil && *sh.messages >= sh.maxMessages && len(targets)-i > 1 {
			// Past the share, a record's last endpoint is planned inline
			// (sendUnsent's route sends it to the lane): one message, what
			// its deferral would send, and no second hop.
			return out, n, i
		}
		if ep.Filter == "" {
			out = append(out, ep)
			sh.count()
			continue
		}
		f, err := parseFilter(ep.Filter)
		if err != nil {
			h.Log.WarnContext(ctx, "endpoint filter cannot be parsed; the event goes to it unfiltered",
				"tenant_id", ev.TenantID, "endpoint_id", ep.EndpointID, "event_id", ev.ID, "error", err.Error())
			inv.metrics.Put(metrics.FilterErrors, 1, nil)
			out = append(out, ep)
			sh.count()
			continue
		}
		o, ok := m.outcome(f)
		if !ok {
			return out, n, i
		}
		switch o {
		case filter.OverBudget:
			h.Log.WarnContext(ctx, "endpoint filter over its work budget on the payload; the event goes to it unfiltered",
				"tenant_id", ev.TenantID, "endpoint_id", ep.EndpointID, "event_id", ev.ID, "payload_bytes", len(ev.Payload), "record_budget_left", max(m.left, 0))
			inv.metrics.Put(metrics.FilterErrors, 1, nil)
			inv.metrics.Put(metrics.FilterOverBudget, 1, nil)
			fallthrough
		case filter.Matched:
			out = append(out, ep)
			sh.count()
			continue
		}
		n++
		inv.metrics.Put(metrics.FilteredOut, 1, nil)
		h.Log.DebugContext(ctx, "event filtered out for an endpoint", "tenant_id", ev.TenantID, "event_id", ev.ID, "endpoint_id", ep.EndpointID)
	}
	return out, n, -1
}

// matching is one record's filter matching: its budgets, and the outcome
// of each filter it matched (endpoints with the same filter text share one
// parsed filter, parsedFilters, and so one outcome, its work spent once).
type matching struct {
	payload   []byte
	one, left int // one filter's budget; the record's left
	sh        *share
	outcomes  map[*filter.Filter]filter.Outcome
}

// outcome matches f within the record's budget and, with a share, the
// tenant's inline work left; false when the share ran out first.
func (m *matching) outcome(f *filter.Filter) (filter.Outcome, bool) {
	if o, seen := m.outcomes[f]; seen {
		return o, true
	}
	budget := min(m.one, m.left)
	if m.sh != nil {
		if inline := m.sh.maxWork - *m.sh.work; inline < budget {
			if inline <= 0 {
				return 0, false
			}
			budget = inline
		}
	}
	o, work := f.EvalWithin(m.payload, budget)
	full := min(m.one, m.left)
	m.left -= work
	if m.sh != nil {
		*m.sh.work += work
		if o == filter.OverBudget && budget < full {
			return 0, false // the share ran out, not the filter's budget
		}
	}
	if m.outcomes == nil {
		m.outcomes = map[*filter.Filter]filter.Outcome{}
	}
	m.outcomes[f] = o
	return o, true
}

// count counts one message planned inline; nil: no share.
func (sh *share) count() {
	if sh != nil {
		*sh.messages++
	}
}
