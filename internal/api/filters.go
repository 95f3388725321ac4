package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/filter"
)

// An endpoint's payload filter (package filter, docs/filters.md) as the
// API takes and shows it: a JSON object on create and update (null: none,
// and on update removes it), stored compact, shown as it is stored.

// parsedFilters holds the filters the message log evaluates, parsed once
// per warm instance by their text.
var parsedFilters filter.Cache

// noFilter reports whether a filter field is absent or null.
func noFilter(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// checkFilter checks an endpoint's filter field; the problem names the
// path in it (filter.amount[0].numeric).
func (errs *fieldErrors) checkFilter(raw json.RawMessage) {
	if noFilter(raw) {
		return
	}
	if _, err := filter.Parse(raw); err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			errs.add(fe.Path, "%s", fe.Message)
			return
		}
		errs.add("filter", "%s", err.Error())
	}
}

// filterText is the stored form of a checked filter field: its compact
// JSON, "" for none.
func filterText(raw json.RawMessage) string {
	if noFilter(raw) {
		return ""
	}
	f, err := filter.Parse(raw)
	if err != nil {
		return "" // checked before: not reached
	}
	return f.String()
}

// filterChange is an update's change of the filter: nil when the field
// is absent, "" (removed) when null.
func filterChange(raw json.RawMessage) *string {
	if raw == nil {
		return nil
	}
	s := filterText(raw)
	return &s
}

// filterView is a stored filter as the API shows it (absent: none).
func filterView(text string) json.RawMessage {
	if text == "" {
		return nil
	}
	return json.RawMessage(text)
}

// EventRouting says, of the tenant's endpoints as they are now, which an
// event goes to and which it was filtered out for: those that subscribe
// to its type and whose filter matches its payload, and those whose
// filter does not (enqueue's rule, evaluated again on the payload the
// message log read). An event addressed to one endpoint matched that
// endpoint, whatever its filter.
type EventRouting struct {
	Matched     []string `json:"matched"`
	FilteredOut []string `json:"filtered_out"`
}

// routing is EventRouting for e, from the tenant's endpoints.
func (s *Server) routing(ctx context.Context, tenant string, e domain.Event) (EventRouting, error) {
	r := EventRouting{Matched: []string{}, FilteredOut: []string{}}
	if e.EndpointID != "" {
		r.Matched = append(r.Matched, e.EndpointID)
		return r, nil
	}
	eps, err := s.allEndpoints(ctx, tenant)
	if err != nil {
		return r, err
	}
	for _, ep := range eps {
		subscribed := ep.Accepts(e.Type)
		if domain.IsOperational(e.Type) {
			subscribed = !ep.Disabled && ep.SubscribesExplicitly(e.Type)
		}
		if !subscribed {
			continue
		}
		if ep.Filter != "" && !filterMatches(ep.Filter, e.Payload) {
			r.FilteredOut = append(r.FilteredOut, ep.EndpointID)
			continue
		}
		r.Matched = append(r.Matched, ep.EndpointID)
	}
	return r, nil
}

// filterMatches reports whether a stored filter matches data; one that
// cannot be parsed, or runs over its work budget (filter.OverBudget, which
// Match answers true), matches, as in enqueue (it delivers unfiltered).
func filterMatches(text string, data []byte) bool {
	f, err := parsedFilters.Parse(text)
	return err != nil || f.Match(data)
}

// routingPage is how many endpoints routing reads a page.
const routingPage = 100

// allEndpoints is every endpoint of the tenant, page by page: at most
// Caps.MaxEndpoints (100 by default) for a tenant within its cap, one or
// two pages.
func (s *Server) allEndpoints(ctx context.Context, tenant string) ([]domain.Endpoint, error) {
	var all []domain.Endpoint
	cursor := ""
	for {
		es, next, err := s.Store.ListEndpoints(ctx, tenant, routingPage, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
		if next == "" || len(es) == 0 {
			return all, nil
		}
		cursor = next
	}
}
