// Package metrics writes CloudWatch metrics as Embedded Metric Format (EMF)
// log lines: the functions print them to stdout with their logs, and
// CloudWatch Logs turns them into metrics, with no API call and no extra
// latency on the delivery path.
//
// Every metric is in the namespace Namespace. Dimensions are chosen to stay
// affordable: per tenant only where a tenant must be paged about (dead
// letters and DLQ depth), by reason where the reason is a small fixed set,
// never per endpoint (per-endpoint figures are in the API and the logs).
// The names and dimensions are listed in Catalog, which the documentation in
// docs/operations.md repeats and a test keeps equal.
//
// A function that publishes per message (deliver, enqueue) gathers an
// invocation's values in a Batch and prints them at its end, one document
// per combination of dimension values with each metric's values as an
// array, instead of a line per value: the same metrics and statistics for a
// fraction of the log bytes, which CloudWatch Logs bills.
package metrics

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Namespace holds every hookline metric.
const Namespace = "Hookline"

// Metric names.
const (
	Delivered      = "Delivered"
	AttemptFailed  = "AttemptFailed"
	RetryScheduled = "RetryScheduled"
	AttemptLatency = "AttemptLatency"
	DeadLettered   = "DeadLettered"
	RejectedItems  = "RejectedOutboxItems"
	Replayed       = "Replayed"
	TenantDLQDepth = "TenantDLQDepth"
	MaxTenantDLQ   = "MaxTenantDLQDepth"
	// DLQDepthCorrections counts tenant DLQ depth counters the
	// reconciliation found off and corrected.
	DLQDepthCorrections = "DLQDepthCorrections"
	// StatsWriteFailed counts endpoint attempt counter writes that failed
	// (the deliver function's one write per endpoint and hour per batch);
	// the counters of those attempts are lost, nothing else.
	StatsWriteFailed = "StatsWriteFailed"
	// Deferred counts delivery messages the deliver function sent again,
	// delayed, without spending an attempt, by reason (Reason): rate_limited,
	// breaker_open, endpoint_busy, tenant_busy (the tenant has its share of
	// the pool), dependency (hookline's own DynamoDB or
	// KMS failed), backoff (the further hops of a retry delay longer than
	// SQS's 900 s; a retry's first hop is counted as RetryScheduled).
	Deferred = "Deferred"
	// GateUnavailable counts batches whose endpoint gate could not be read
	// or written: their requests went out without it (isolation, not
	// delivery, is what fails).
	GateUnavailable = "GateUnavailable"
	// OperatorEventsParked counts operational events enqueue could not put
	// on the operator's EventBridge bus after its tries, and parked on the
	// enqueue failure queue instead (make reprocess-enqueue puts them again).
	OperatorEventsParked = "OperatorEventsParked"
	DimensionTenant      = "TenantId"
	DimensionReason      = "Reason"
	unitCount            = "Count"
	unitMilliseconds     = "Milliseconds"
)

// The payload filters' metrics (enqueue).
const (
	// FilteredOut counts deliveries enqueue did not create because the
	// endpoint's payload filter (package filter) did not match the event's
	// data.
	FilteredOut = "FilteredOut"
	// FilterErrors counts deliveries enqueue created although the
	// endpoint's stored filter could not be parsed (registration validates
	// filters, so this should stay 0): such an endpoint gets every event it
	// subscribes to, as if it had no filter.
	FilterErrors = "FilterErrors"
	// FilterOverBudget counts the deliveries of FilterErrors whose filter
	// ran over its work budget on the event's payload (filter.Budget, or
	// the record's share of it), delivered unfiltered.
	FilterOverBudget = "FilterOverBudget"
	// Laned counts the delivery messages enqueue sent to the tenant lane
	// (a tenant's past its LaneAfter in an invocation) and deliver moved
	// there (a tenant over its share, tenant_busy).
	Laned = "Laned"
	// FanOutsDeferred counts the records whose fan-out past their
	// tenant's share of a stream invocation enqueue deferred to the
	// fan-out queue (one message a record).
	FanOutsDeferred = "FanOutsDeferred"
	// SchemaMismatches counts events delivered although their payload
	// does not validate against their type's schema in the event-type
	// catalog, whose validation for the type is warn (enqueue), by type
	// (EventType: the catalog's types, a set the operator declares). A
	// reject type's are RejectedOutboxItems (schema_mismatch).
	SchemaMismatches = "SchemaMismatches"
	// DimensionEventType is a catalog event type.
	DimensionEventType = "EventType"
)

// Spec documents one metric: its unit, the dimension sets it is published
// under (an empty set is the stack-wide total), and whether it is a gauge.
type Spec struct {
	Unit       string
	Dimensions [][]string
	// Gauge: the metric is a level published on a schedule whatever
	// happens, so no value means its publisher stopped, not zero; an alarm
	// on it must not read missing data as OK. A metric that is not a gauge
	// is published per occurrence (a count, a latency): no value means
	// nothing happened.
	Gauge bool
}

// Catalog lists every metric hookline publishes.
var Catalog = map[string]Spec{
	Delivered:            {unitCount, [][]string{{}}, false},
	AttemptFailed:        {unitCount, [][]string{{}}, false},
	RetryScheduled:       {unitCount, [][]string{{}}, false},
	AttemptLatency:       {unitMilliseconds, [][]string{{}}, false},
	DeadLettered:         {unitCount, [][]string{{}, {DimensionReason}, {DimensionTenant}}, false},
	RejectedItems:        {unitCount, [][]string{{}, {DimensionReason}}, false},
	Replayed:             {unitCount, [][]string{{}, {DimensionTenant}}, false},
	TenantDLQDepth:       {unitCount, [][]string{{DimensionTenant}}, true},
	MaxTenantDLQ:         {unitCount, [][]string{{}}, true},
	DLQDepthCorrections:  {unitCount, [][]string{{}, {DimensionTenant}}, false},
	StatsWriteFailed:     {unitCount, [][]string{{}}, false},
	Deferred:             {unitCount, [][]string{{}, {DimensionReason}}, false},
	GateUnavailable:      {unitCount, [][]string{{}}, false},
	OperatorEventsParked: {unitCount, [][]string{{}}, false},
	FilteredOut:          {unitCount, [][]string{{}}, false},
	FilterErrors:         {unitCount, [][]string{{}}, false},
	FilterOverBudget:     {unitCount, [][]string{{}}, false},
	Laned:                {unitCount, [][]string{{}}, false},
	FanOutsDeferred:      {unitCount, [][]string{{}}, false},
	SchemaMismatches:     {unitCount, [][]string{{}, {DimensionEventType}}, false},
}

// Writer prints EMF lines. Safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// New returns a writer printing to out (os.Stdout in a function).
func New(out io.Writer) *Writer { return &Writer{out: out} }

// Put prints value for metric at once, with the dimension values given
// (TenantId, Reason), under every dimension set the catalog lists for it. A
// nil Writer does nothing, so tests and tools may leave metrics out. A
// function that publishes per message gathers its values in a Batch instead.
func (w *Writer) Put(metric string, value float64, dims map[string]string) {
	b := w.Batch()
	b.Put(metric, value, dims)
	b.Flush()
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// MaxValues is the most values one EMF document holds for a metric (the
// format's limit on an array of values).
const MaxValues = 100

// Batch gathers the values an invocation publishes and prints them, at
// Flush, as few EMF documents as the format allows: one per combination of
// dimension values, holding every metric put with those values, each
// metric's values as an array. CloudWatch reads an array of values as that
// many values, so every statistic (Sum, SampleCount, percentiles) is what
// one line per value gave, for a fraction of the log bytes. Values not yet
// flushed are lost if the process dies. Safe for concurrent use. A nil Batch
// (from a nil Writer) does nothing.
type Batch struct {
	w      *Writer
	mu     sync.Mutex
	groups map[string]*group
	order  []string
}

// group is one document in the making: its dimension values, and each
// metric's values with the dimension sets it is published under.
type group struct {
	dims       map[string]string
	at         time.Time
	values     map[string][]float64
	directives []directive
}

type directive struct {
	sets    [][]string
	metrics []string
}

// Batch returns an empty batch printing to w.
func (w *Writer) Batch() *Batch {
	if w == nil {
		return nil
	}
	return &Batch{w: w, groups: map[string]*group{}}
}

// Put adds value for metric with the dimension values given (TenantId,
// Reason), to be published under every dimension set the catalog lists for
// it whose dimensions all have a value. It panics on a metric that is not in
// the catalog.
func (b *Batch) Put(metric string, value float64, dims map[string]string) {
	if b == nil {
		return
	}
	spec, ok := Catalog[metric]
	if !ok {
		panic("metrics: " + metric + " is not in the catalog")
	}
	sets, used := completeSets(spec.Dimensions, dims)
	if len(sets) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groupFor(groupKey(used), metric, used)
	if _, seen := g.values[metric]; !seen {
		g.declare(metric, sets)
	}
	g.values[metric] = append(g.values[metric], value)
}

// completeSets are the dimension sets of sets whose dimensions all have a
// value in dims, and used the values of the dimensions they name.
func completeSets(sets [][]string, dims map[string]string) (complete [][]string, used map[string]string) {
	used = map[string]string{}
	complete = make([][]string, 0, len(sets))
	for _, set := range sets {
		if !slices.ContainsFunc(set, func(d string) bool { return dims[d] == "" }) {
			complete = append(complete, set)
			for _, d := range set {
				used[d] = dims[d]
			}
		}
	}
	return complete, used
}

// groupKey identifies the group of a combination of dimension values.
func groupKey(used map[string]string) string {
	var key strings.Builder
	for _, n := range slices.Sorted(maps.Keys(used)) {
		key.WriteString(n + "=" + used[n] + "\x00")
	}
	return key.String()
}

// groupFor is the group under key that takes another value of metric: the
// one gathering, unless it holds MaxValues of them already (then it is
// written, and a new one started), or a new one (first seen, it takes its
// place in the order groups are flushed). b.mu is held.
func (b *Batch) groupFor(key, metric string, used map[string]string) *group {
	g := b.groups[key]
	if g != nil && len(g.values[metric]) == MaxValues {
		b.w.write(g)
		g = nil
	}
	if g == nil {
		g = &group{dims: used, at: b.w.now(), values: map[string][]float64{}}
		if _, seen := b.groups[key]; !seen {
			b.order = append(b.order, key)
		}
		b.groups[key] = g
	}
	return g
}

// declare lists metric, new to the group, under the directive of its
// dimension sets, which it starts if no metric before it had them.
func (g *group) declare(metric string, sets [][]string) {
	i := slices.IndexFunc(g.directives, func(d directive) bool {
		return slices.EqualFunc(d.sets, sets, slices.Equal[[]string])
	})
	if i < 0 {
		g.directives = append(g.directives, directive{sets: sets})
		i = len(g.directives) - 1
	}
	g.directives[i].metrics = append(g.directives[i].metrics, metric)
}

// Flush prints what the batch gathered, a line per document, and empties it.
func (b *Batch) Flush() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.order {
		if g := b.groups[k]; g != nil && len(g.values) > 0 {
			b.w.write(g)
		}
	}
	b.groups, b.order = map[string]*group{}, nil
}

// write prints one group as an EMF document.
func (w *Writer) write(g *group) {
	doc := make(map[string]any, len(g.dims)+len(g.values)+1)
	for d, v := range g.dims {
		doc[d] = v
	}
	directives := make([]any, 0, len(g.directives))
	for _, d := range g.directives {
		defs := make([]any, 0, len(d.metrics))
		for _, m := range d.metrics {
			defs = append(defs, map[string]string{"Name": m, "Unit": Catalog[m].Unit})
			if vs := g.values[m]; len(vs) == 1 {
				doc[m] = vs[0]
			} else {
				doc[m] = vs
			}
		}
		directives = append(directives, map[string]any{"Namespace": Namespace, "Dimensions": d.sets, "Metrics": defs})
	}
	doc["_aws"] = map[string]any{"Timestamp": g.at.UnixMilli(), "CloudWatchMetrics": directives}
	line, err := json.Marshal(doc)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.out.Write(append(line, '\n'))
}
