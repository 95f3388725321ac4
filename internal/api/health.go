package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// Stats reads an endpoint's hourly attempt counters (kept 35 days), its
// newest success and failure among them, and its hourly counters by event
// type.
type Stats interface {
	EndpointStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error)
	LastAttempts(ctx context.Context, tenantID, endpointID string) (*time.Time, *domain.AttemptFailure, error)
	EndpointTypeStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error)
}

// MaxStatsRange is the longest since..until the stats route reads: 31 days
// of hour buckets (744 at most).
const MaxStatsRange = 31 * 24 * time.Hour

// DefaultStatsRange is the stats route's range without since: the 24 hours
// before until.
const DefaultStatsRange = 24 * time.Hour

// FailureCountsView counts failed attempts by class.
type FailureCountsView struct {
	Timeout   int64 `json:"timeout"`
	Network   int64 `json:"network"`
	HTTP4xx   int64 `json:"http_4xx"`
	HTTP429   int64 `json:"http_429"`
	HTTP5xx   int64 `json:"http_5xx"`
	HTTPOther int64 `json:"http_other"`
	Refused   int64 `json:"refused"`
}

// LatencyView are latency percentiles in milliseconds, read from the
// counters' histogram (log-scale buckets about 1.5x apart, interpolated);
// null when nothing was counted.
type LatencyView struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// CountsView are an endpoint's attempt counters over an hour or a range.
type CountsView struct {
	Attempts  int64 `json:"attempts"`
	Delivered int64 `json:"delivered"`
	// SuccessRate is Delivered / Attempts; null without attempts.
	SuccessRate *float64          `json:"success_rate"`
	Failures    FailureCountsView `json:"failures"`
	LatencyMS   LatencyView       `json:"latency_ms"`
}

// StatsBucketView is one hour's counters.
type StatsBucketView struct {
	Start time.Time `json:"start"`
	CountsView
}

// EndpointStatsView answers the stats route: the hours of [since, until)
// that had attempts, oldest first, and their totals.
type EndpointStatsView struct {
	EndpointID string            `json:"endpoint_id"`
	Since      time.Time         `json:"since"`
	Until      time.Time         `json:"until"`
	Buckets    []StatsBucketView `json:"buckets"`
	Totals     CountsView        `json:"totals"`
}

// LastFailureView is an endpoint's newest failed attempt.
type LastFailureView struct {
	At time.Time `json:"at"`
	// Status is the HTTP status; null when no answer came.
	Status *int   `json:"status"`
	Error  string `json:"error"`
}

// HealthView is an endpoint's health at a glance (GET /v1/endpoints/{id}).
// The 24 h figures are the current hour's counters and the 23 hours' before.
type HealthView struct {
	Attempts24h         int64                 `json:"attempts_24h"`
	SuccessRate24h      *float64              `json:"success_rate_24h"`
	P95LatencyMS24h     *float64              `json:"p95_latency_ms_24h"`
	ConsecutiveFailures int                   `json:"consecutive_failures"`
	LastSuccessAt       *time.Time            `json:"last_success_at"`
	LastFailure         *LastFailureView      `json:"last_failure"`
	DisabledAt          *time.Time            `json:"disabled_at"`
	DisabledReason      *domain.DisableReason `json:"disabled_reason"`
	// FailuresSince is when the current run of consecutive failures
	// began; null after a success.
	FailuresSince *time.Time `json:"failures_since"`
	// Breaker is the endpoint's circuit breaker.
	Breaker BreakerView `json:"breaker"`
	// DegradedSince is when the endpoint's failure-rate alert found it
	// degraded (the episode endpoint.degraded was raised for); null while
	// it is not, or has no alert.
	DegradedSince *time.Time `json:"degraded_since"`
}

// BreakerView is an endpoint's circuit breaker: closed (deliveries are
// sent), open (they wait until next_probe_at) or half_open (one probe is
// sent at a time; its success closes the breaker).
type BreakerView struct {
	State domain.BreakerState `json:"state"`
	// OpenedAt is when the breaker opened (the failure episode began);
	// null while closed.
	OpenedAt *time.Time `json:"opened_at"`
	// NextProbeAt is when the next probe may go; null while closed.
	NextProbeAt *time.Time `json:"next_probe_at"`
	// FailedProbes counts the probes that failed since it opened: each
	// doubles the wait for the next.
	FailedProbes int `json:"failed_probes"`
}

// breakerView shows e's breaker at now.
func breakerView(e domain.Endpoint, now time.Time) BreakerView {
	v := BreakerView{State: e.Breaker(now)}
	if v.State != domain.BreakerClosed {
		v.OpenedAt, v.NextProbeAt, v.FailedProbes = e.FailingSince, e.BreakerUntil, e.BreakerTrips
	}
	return v
}

// countsView shows counters.
func countsView(st domain.AttemptStats) CountsView {
	f := st.Failures
	v := CountsView{
		Attempts: st.Attempts, Delivered: st.Delivered,
		Failures: FailureCountsView{
			Timeout: f[domain.ClassTimeout], Network: f[domain.ClassNetwork], HTTP4xx: f[domain.ClassHTTP4xx],
			HTTP429: f[domain.ClassHTTP429], HTTP5xx: f[domain.ClassHTTP5xx], HTTPOther: f[domain.ClassHTTPOther], Refused: f[domain.ClassRefused],
		},
	}
	if st.Attempts > 0 {
		v.SuccessRate = ptr(round(float64(st.Delivered)/float64(st.Attempts), 4))
	}
	v.LatencyMS.P50, v.LatencyMS.P95, v.LatencyMS.P99 = percentile(st, 0.50), percentile(st, 0.95), percentile(st, 0.99)
	return v
}

// percentile is st's latency q-quantile in ms, to 0.1 ms; nil with none.
func percentile(st domain.AttemptStats, q float64) *float64 {
	ms, ok := st.Latency.Percentile(q)
	if !ok {
		return nil
	}
	return ptr(round(ms, 1))
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func ptr[T any](v T) *T { return &v }

// statsRange reads since and until: RFC 3339, until by default now, since
// by default DefaultStatsRange before until; since before until, at most
// MaxStatsRange apart.
func statsRange(r *http.Request, now time.Time) (since, until time.Time, p *Problem) {
	q, errs := queryParams(r, "since", "until")
	parse := func(field string, def time.Time) time.Time {
		if t := timeParam(field, q[field], &errs); !t.IsZero() {
			return t.UTC()
		}
		return def
	}
	until = parse("until", now.UTC())
	since = parse("since", until.Add(-DefaultStatsRange))
	switch {
	case len(errs) > 0:
	case !since.Before(until):
		errs = append(errs, FieldError{Field: "since", Message: "must be before until (" + until.Format(time.RFC3339) + ")"})
	case until.Sub(since) > MaxStatsRange:
		errs = append(errs, FieldError{Field: "since", Message: "is more than 31 days before until: read a longer range in parts"})
	}
	if len(errs) > 0 {
		return since, until, invalid(errs...)
	}
	return since, until, nil
}

func (s *Server) getEndpointStats(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	since, until, p := statsRange(r, s.now())
	if p != nil {
		return p
	}
	if _, err := s.Store.Endpoint(r.Context(), tenant, id); err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	buckets, err := s.Store.EndpointStats(r.Context(), tenant, id, since, until)
	if err != nil {
		return s.internal(r, err)
	}
	out := EndpointStatsView{EndpointID: id, Since: since, Until: until, Buckets: make([]StatsBucketView, 0, len(buckets))}
	var total domain.AttemptStats
	for _, b := range buckets {
		out.Buckets = append(out.Buckets, StatsBucketView{Start: b.Start, CountsView: countsView(b.AttemptStats)})
		total.Merge(b.AttemptStats)
	}
	out.Totals = countsView(total)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// health reads e's health: its last 24 hours' counters, and its newest
// success and failure (from those hours, or older ones when they have
// none).
func (s *Server) health(ctx context.Context, e domain.Endpoint) (*HealthView, error) {
	now := s.now()
	buckets, err := s.Store.EndpointStats(ctx, e.TenantID, e.EndpointID, domain.StatsHour(now).Add(-23*time.Hour), now.Add(time.Hour))
	if err != nil {
		return nil, err
	}
	var day domain.AttemptStats
	for _, b := range buckets {
		day.Merge(b.AttemptStats)
	}
	if day.LastSuccessAt == nil || day.LastFailure == nil {
		ok, fail, err := s.Store.LastAttempts(ctx, e.TenantID, e.EndpointID)
		if err != nil {
			return nil, err
		}
		day.Merge(domain.AttemptStats{LastSuccessAt: ok, LastFailure: fail})
	}
	c := countsView(day)
	v := &HealthView{
		Attempts24h: day.Attempts, SuccessRate24h: c.SuccessRate, P95LatencyMS24h: c.LatencyMS.P95,
		ConsecutiveFailures: e.ConsecutiveFailures, LastSuccessAt: day.LastSuccessAt,
		FailuresSince: e.FailuresSince, Breaker: breakerView(e, now), DegradedSince: e.DegradedSince,
	}
	if f := day.LastFailure; f != nil {
		v.LastFailure = &LastFailureView{At: f.At, Error: f.Error}
		if f.Status != 0 {
			v.LastFailure.Status = &f.Status
		}
	}
	if e.Disabled {
		v.DisabledAt = e.DisabledAt
		if e.DisabledReason != "" {
			v.DisabledReason = &e.DisabledReason
		}
	}
	return v, nil
}
