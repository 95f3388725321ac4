package api

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
)

// MaxMetricsRange is the longest since..until the metrics route reads: 7
// days, 168 hour buckets of each endpoint it covers.
const MaxMetricsRange = 7 * 24 * time.Hour

// MaxMetricsEndpoints is how many endpoints one answer of the metrics
// route covers (a page of the tenant's endpoints, oldest first); a tenant
// with more reads the rest with next_cursor and adds the answers up.
const MaxMetricsEndpoints = 50

// metricsReaders bounds how many endpoints' stats the metrics route reads
// at once; each is store.StatsShards+1 Queries, themselves concurrent.
const metricsReaders = 8

// Granularities of the metrics route's series.
const (
	granularityHour = "hour"
	granularityDay  = "day"
)

// Groupings of the metrics route.
const (
	groupByEndpoint    = "endpoint"
	groupByStatusClass = "status_class"
	groupByEventType   = "event_type"
)

// MetricsPeriodView is one period of the metrics route's series: an hour,
// or 24 hours from since's first hour.
type MetricsPeriodView struct {
	Start time.Time `json:"start"`
	CountsView
}

// MetricsGroupView is one group of the metrics route: an endpoint's
// counters (group_by=endpoint), the attempts of one status class
// (group_by=status_class: delivered or a failure class, without latency,
// which is not counted by class), or the attempts of the events of one
// type (group_by=event_type, from the endpoints' counters by type, latency
// included).
type MetricsGroupView struct {
	EndpointID  string `json:"endpoint_id,omitempty"`
	StatusClass string `json:"status_class,omitempty"`
	EventType   string `json:"event_type,omitempty"`
	// OtherTypes, in the last group of group_by=event_type only, is how
	// many event types beyond the Caps.MaxMetricsEventTypes most attempted
	// its counters sum (its EventType empty).
	OtherTypes int `json:"other_types,omitempty"`
	CountsView
}

// MetricsView answers GET /v1/metrics/attempts: the attempts of the
// endpoints it covers over [since, until), in total, period by period
// (those with attempts, oldest first) and by group.
type MetricsView struct {
	Since       time.Time `json:"since"`
	Until       time.Time `json:"until"`
	Granularity string    `json:"granularity"`
	GroupBy     string    `json:"group_by,omitempty"`
	// EndpointIDs are the endpoints counted.
	EndpointIDs []string `json:"endpoint_ids"`
	// NextCursor reads the tenant's next endpoints; absent after the last.
	NextCursor string              `json:"next_cursor,omitempty"`
	Totals     CountsView          `json:"totals"`
	Series     []MetricsPeriodView `json:"series"`
	// Groups are empty without group_by.
	Groups []MetricsGroupView `json:"groups"`
}

// metricsQuery is a metrics request's parameters.
type metricsQuery struct {
	since, until         time.Time
	granularity, groupBy string
	endpointID, cursor   string
}

// metricsParams reads the metrics route's query: since and until as the
// stats route's but at most MaxMetricsRange apart, granularity (hour, the
// default, or day), group_by (endpoint, status_class or event_type), and either
// endpoint_id (that endpoint only) or cursor (the next endpoints).
func metricsParams(r *http.Request, now time.Time) (metricsQuery, *Problem) {
	q, errs := queryParams(r, "since", "until", "granularity", "group_by", "endpoint_id", "cursor")
	m := metricsQuery{granularity: granularityHour, groupBy: q["group_by"], endpointID: q["endpoint_id"], cursor: q["cursor"]}
	parse := func(field string, def time.Time) time.Time {
		if t := timeParam(field, q[field], &errs); !t.IsZero() {
			return t.UTC()
		}
		return def
	}
	m.until = parse("until", now.UTC())
	m.since = parse("since", m.until.Add(-DefaultStatsRange))
	switch {
	case len(errs) > 0:
	case !m.since.Before(m.until):
		errs = append(errs, FieldError{Field: "since", Message: "must be before until (" + m.until.Format(time.RFC3339) + ")"})
	case m.until.Sub(m.since) > MaxMetricsRange:
		errs = append(errs, FieldError{Field: "since", Message: "is more than 7 days before until (the limit is 7 days): read a longer range in parts"})
	}
	if g := q["granularity"]; g != "" {
		m.granularity = g
		if g != granularityHour && g != granularityDay {
			errs = append(errs, FieldError{Field: "granularity", Message: "must be hour or day"})
		}
	}
	if m.groupBy != "" && m.groupBy != groupByEndpoint && m.groupBy != groupByStatusClass && m.groupBy != groupByEventType {
		errs = append(errs, FieldError{Field: "group_by", Message: "must be endpoint, status_class or event_type"})
	}
	if m.endpointID != "" && m.cursor != "" {
		errs = append(errs, FieldError{Field: "cursor", Message: "is for the tenant's endpoints: leave it out with endpoint_id"})
	}
	if len(m.cursor) > 2*maxIDBytes {
		errs = append(errs, FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
	}
	if len(errs) > 0 {
		return m, invalid(errs...)
	}
	return m, nil
}

// getMetrics answers GET /v1/metrics/attempts: the attempt counters of
// the tenant's endpoints (a page of MaxMetricsEndpoints, or the one named)
// over the range, read from their hour buckets: one Query of the endpoint
// listing, then store.StatsShards+1 Queries an endpoint; with
// group_by=event_type, store.StatsShards more an endpoint, of its counters
// by type (and only then); no scan.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	m, p := metricsParams(r, s.now())
	if p != nil {
		return p
	}
	ids, next, p := s.metricsEndpoints(r, tenant, m)
	if p != nil {
		return p
	}
	per, err := s.endpointsStats(r.Context(), tenant, ids, m.since, m.until)
	if err != nil {
		return s.internal(r, err)
	}
	v := metricsView(m, ids, next, per)
	if m.groupBy == groupByEventType {
		byType, err := s.endpointsTypeStats(r.Context(), tenant, ids, m.since, m.until)
		if err != nil {
			return s.internal(r, err)
		}
		v.Groups = typeGroups(byType, s.Caps.withDefaults().MaxMetricsEventTypes)
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// metricsEndpoints are the endpoints a metrics request covers, and the
// cursor of the tenant's next ones.
func (s *Server) metricsEndpoints(r *http.Request, tenant string, m metricsQuery) ([]string, string, *Problem) {
	if m.endpointID != "" {
		if _, err := s.Store.Endpoint(r.Context(), tenant, m.endpointID); err != nil {
			return nil, "", s.found(r, "endpoint "+strconv.Quote(m.endpointID), err)
		}
		return []string{m.endpointID}, "", nil
	}
	es, next, err := s.Store.ListEndpoints(r.Context(), tenant, MaxMetricsEndpoints, m.cursor)
	if ce := cursorError(err); ce != nil {
		return nil, "", invalid(*ce)
	}
	if err != nil {
		return nil, "", s.internal(r, err)
	}
	ids := make([]string, 0, len(es))
	for _, e := range es {
		ids = append(ids, e.EndpointID)
	}
	return ids, next, nil
}

// endpointsStats reads each endpoint's hour buckets of [since, until),
// metricsReaders endpoints at a time.
func (s *Server) endpointsStats(ctx context.Context, tenant string, ids []string, since, until time.Time) ([][]domain.StatsBucket, error) {
	out := make([][]domain.StatsBucket, len(ids))
	err := fanout.Each(len(ids), metricsReaders, func(i int) (err error) {
		out[i], err = s.Store.EndpointStats(ctx, tenant, ids[i], since, until)
		return err
	})
	return out, err
}

// endpointsTypeStats reads each endpoint's counters by event type of
// [since, until), metricsReaders endpoints at a time, and adds them up by
// type over the endpoints and hours.
func (s *Server) endpointsTypeStats(ctx context.Context, tenant string, ids []string, since, until time.Time) (map[string]*domain.AttemptStats, error) {
	per := make([][]domain.TypeStatsBucket, len(ids))
	err := fanout.Each(len(ids), metricsReaders, func(i int) (err error) {
		per[i], err = s.Store.EndpointTypeStats(ctx, tenant, ids[i], since, until)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := map[string]*domain.AttemptStats{}
	for _, buckets := range per {
		for _, b := range buckets {
			if out[b.EventType] == nil {
				out[b.EventType] = &domain.AttemptStats{}
			}
			out[b.EventType].Merge(b.AttemptStats)
		}
	}
	return out, nil
}

// typeGroups are the groups of group_by=event_type: one a type with
// attempts, the most attempted first (then by type), at most limit; the
// other types' counters summed into one last group that says how many
// types it holds (other_types). However many types a tenant's events
// have, the answer has at most limit+1 groups.
func typeGroups(byType map[string]*domain.AttemptStats, limit int) []MetricsGroupView {
	type typed struct {
		typ string
		st  *domain.AttemptStats
	}
	all := make([]typed, 0, len(byType))
	for typ, st := range byType {
		all = append(all, typed{typ, st})
	}
	slices.SortFunc(all, func(a, b typed) int {
		if a.st.Attempts != b.st.Attempts {
			return cmp.Compare(b.st.Attempts, a.st.Attempts)
		}
		return strings.Compare(a.typ, b.typ)
	})
	out := make([]MetricsGroupView, 0, min(len(all), limit+1))
	var other domain.AttemptStats
	for i, t := range all {
		if i < limit {
			out = append(out, MetricsGroupView{EventType: t.typ, CountsView: countsView(*t.st)})
			continue
		}
		other.Merge(*t.st)
	}
	if len(all) > limit {
		out = append(out, MetricsGroupView{OtherTypes: len(all) - limit, CountsView: countsView(other)})
	}
	return out
}

// metricsView adds the endpoints' buckets up into the answer.
func metricsView(m metricsQuery, ids []string, next string, per [][]domain.StatsBucket) MetricsView {
	v := MetricsView{
		Since: m.since, Until: m.until, Granularity: m.granularity, GroupBy: m.groupBy,
		EndpointIDs: ids, NextCursor: next, Series: []MetricsPeriodView{}, Groups: []MetricsGroupView{},
	}
	first := m.since.UTC().Truncate(time.Hour)
	if first.Before(m.since) {
		first = first.Add(time.Hour)
	}
	periods := map[time.Time]*domain.AttemptStats{}
	var total domain.AttemptStats
	for i, buckets := range per {
		var ep domain.AttemptStats
		for _, b := range buckets {
			start := periodStart(first, b.Start, m.granularity)
			if periods[start] == nil {
				periods[start] = &domain.AttemptStats{}
			}
			periods[start].Merge(b.AttemptStats)
			ep.Merge(b.AttemptStats)
		}
		total.Merge(ep)
		if m.groupBy == groupByEndpoint {
			v.Groups = append(v.Groups, MetricsGroupView{EndpointID: ids[i], CountsView: countsView(ep)})
		}
	}
	for start, st := range periods {
		v.Series = append(v.Series, MetricsPeriodView{Start: start, CountsView: countsView(*st)})
	}
	slices.SortFunc(v.Series, func(a, b MetricsPeriodView) int { return a.Start.Compare(b.Start) })
	v.Totals = countsView(total)
	if m.groupBy == groupByStatusClass {
		v.Groups = classGroups(total)
	}
	return v
}

// periodStart is the start of the period holding the hour starting at
// hour: the hour itself, or the 24 hours from first it falls in.
func periodStart(first, hour time.Time, granularity string) time.Time {
	if granularity != granularityDay {
		return hour
	}
	const day = 24 * time.Hour
	return first.Add(hour.Sub(first) / day * day)
}

// classGroups counts st's attempts by status class (delivered, then each
// failure class, those with attempts only).
func classGroups(st domain.AttemptStats) []MetricsGroupView {
	out := []MetricsGroupView{}
	add := func(c domain.AttemptClass, n int64) {
		if n == 0 {
			return
		}
		one := domain.AttemptStats{Attempts: n}
		if c == domain.ClassDelivered {
			one.Delivered = n
		} else {
			one.Failures = map[domain.AttemptClass]int64{c: n}
		}
		out = append(out, MetricsGroupView{StatusClass: string(c), CountsView: countsView(one)})
	}
	add(domain.ClassDelivered, st.Delivered)
	for _, c := range domain.FailureClasses {
		add(c, st.Failures[c])
	}
	return out
}
