package selection

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Events lists a tenant's events, newest first, a page at a time
// (messagelog.Reader; storefake.MessageLog in the tests).
type Events interface {
	ListEvents(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error)
}

// Records reads deliveries a batch at a time, and a tenant's endpoints.
type Records interface {
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error)
}

var _ Records = (*store.Store)(nil)

// MaxEvents bounds the events of one listing of the message log, and
// MaxPageEvents those of one page: a page lists again while its events'
// candidates fall short of the sends asked for (events addressed to one
// endpoint each name one, where the first listing is sized for every
// endpoint).
const (
	MaxEvents     = 100
	MaxPageEvents = 1000
)

// Candidate is one delivery a page names: its event, its endpoint, and its
// record if it has one (Found). ID is its record's id when Found (the
// legacy id of a delivery made before ids carried the time), else the id
// a delivery of it is given now (domain.DeliveryID).
type Candidate struct {
	ID       string
	Event    domain.Event
	Endpoint domain.Endpoint
	Delivery domain.Delivery
	Found    bool
	// ids are the ids it may have (domain.DeliveryIDs), which read looks
	// for.
	ids [2]string
}

// Selector reads pages of candidates. Build it with a literal.
type Selector struct {
	Events  Events
	Records Records
}

// Page reads the next page of r's events from cursor ("" the first) and
// returns their candidate deliveries, in event order (newest first), then
// endpoint id; next is "" when no event follows. sends sizes the page: the
// first listing has as many events as make sends candidates were each
// event to name every endpoint (at least one, at most MaxEvents); while
// the page's candidates fall short of sends, it lists again, each listing
// sized by the most candidates one event has named so far, up to
// MaxPageEvents events. A page's candidates are at most sends +
// MaxEvents x the tenant's endpoints (a later event naming more endpoints
// than the earlier ones did).
func (s Selector) Page(ctx context.Context, tenantID string, r domain.Range, sends int, cursor string) ([]Candidate, string, error) {
	eps, err := s.endpoints(ctx, tenantID, r.EndpointID)
	if err != nil {
		return nil, "", err
	}
	if len(eps) == 0 {
		return nil, "", nil
	}
	var out []Candidate
	next, read, widest := cursor, 0, len(eps)
	for first := true; first || (next != "" && len(out) < sends && read < MaxPageEvents); first = false {
		limit := min(MaxEvents, MaxPageEvents-read, max(1, (sends-len(out))/widest))
		evs, after, err := s.Events.ListEvents(ctx, tenantID, domain.EventFilter{Type: r.EventType, Since: r.Since, Until: r.Until}, limit, next)
		if err != nil {
			return nil, "", fmt.Errorf("select deliveries of tenant %s: %w", tenantID, err)
		}
		next, read = after, read+len(evs)
		if first {
			widest = 1
		}
		for _, ev := range evs {
			named := candidates(tenantID, ev, eps)
			widest = max(widest, len(named))
			out = append(out, named...)
		}
	}
	return out, next, s.read(ctx, tenantID, out)
}

// candidates are tenantID's event ev's deliveries to eps: to every endpoint, or to the
// one it is addressed to.
func candidates(tenantID string, ev domain.Event, eps []domain.Endpoint) []Candidate {
	var out []Candidate
	for _, ep := range eps {
		if ev.EndpointID == "" || ev.EndpointID == ep.EndpointID {
			ids := domain.DeliveryIDs(tenantID, ev.ID, ep.EndpointID, ev.OccurredAt)
			out = append(out, Candidate{ID: ids[0], Event: ev, Endpoint: ep, ids: ids})
		}
	}
	return out
}

// endpoints are the tenant's endpoints in id order, or the one asked for
// (by its id alone if it is gone: its deliveries still have records): a
// read bounded by the endpoints_per_tenant cap (api.Caps), once a step.
func (s Selector) endpoints(ctx context.Context, tenantID, endpointID string) ([]domain.Endpoint, error) {
	eps, err := s.Records.Endpoints(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("select deliveries of tenant %s: %w", tenantID, err)
	}
	slices.SortFunc(eps, func(a, b domain.Endpoint) int { return strings.Compare(a.EndpointID, b.EndpointID) })
	if endpointID == "" {
		return eps, nil
	}
	for _, ep := range eps {
		if ep.EndpointID == endpointID {
			return []domain.Endpoint{ep}, nil
		}
	}
	return []domain.Endpoint{{TenantID: tenantID, EndpointID: endpointID}}, nil
}

// read fills in the candidates' records, fifty candidates (a hundred ids:
// each under its id and its legacy id, domain.DeliveryIDs) at a time.
func (s Selector) read(ctx context.Context, tenantID string, cs []Candidate) error {
	for start := 0; start < len(cs); start += 50 {
		part := cs[start:min(len(cs), start+50)]
		ids := make([]string, 0, 2*len(part))
		for _, c := range part {
			ids = append(ids, c.ids[:]...)
		}
		snap, err := s.Records.Load(ctx, ids, nil)
		if err != nil {
			return fmt.Errorf("read %d deliveries of tenant %s: %w", len(part), tenantID, err)
		}
		for i := range part {
			d, ok := store.FirstFound(snap.Deliveries, part[i].ids)
			if ok && d.TenantID == tenantID {
				part[i].ID, part[i].Delivery, part[i].Found = d.DeliveryID, d, true
			}
		}
	}
	return nil
}
