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
package metrics

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Namespace holds every hookline metric.
const Namespace = "Hookline"

// Metric names.
const (
	Delivered        = "Delivered"
	AttemptFailed    = "AttemptFailed"
	RetryScheduled   = "RetryScheduled"
	AttemptLatency   = "AttemptLatency"
	DeadLettered     = "DeadLettered"
	RejectedItems    = "RejectedOutboxItems"
	Replayed         = "Replayed"
	TenantDLQDepth   = "TenantDLQDepth"
	MaxTenantDLQ     = "MaxTenantDLQDepth"
	DimensionTenant  = "TenantId"
	DimensionReason  = "Reason"
	unitCount        = "Count"
	unitMilliseconds = "Milliseconds"
)

// Spec documents one metric: its unit and the dimension sets it is
// published under (an empty set is the stack-wide total).
type Spec struct {
	Unit       string
	Dimensions [][]string
}

// Catalog lists every metric hookline publishes.
var Catalog = map[string]Spec{
	Delivered:      {unitCount, [][]string{{}}},
	AttemptFailed:  {unitCount, [][]string{{}}},
	RetryScheduled: {unitCount, [][]string{{}}},
	AttemptLatency: {unitMilliseconds, [][]string{{}}},
	DeadLettered:   {unitCount, [][]string{{}, {DimensionReason}, {DimensionTenant}}},
	RejectedItems:  {unitCount, [][]string{{}, {DimensionReason}}},
	Replayed:       {unitCount, [][]string{{}, {DimensionTenant}}},
	TenantDLQDepth: {unitCount, [][]string{{DimensionTenant}}},
	MaxTenantDLQ:   {unitCount, [][]string{{}}},
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

// Put records value for metric with the dimension values given (TenantId,
// Reason) under every dimension set the catalog lists for it. A nil Writer
// does nothing, so tests and tools may leave metrics out.
func (w *Writer) Put(metric string, value float64, dims map[string]string) {
	if w == nil {
		return
	}
	spec, ok := Catalog[metric]
	if !ok {
		panic("metrics: " + metric + " is not in the catalog")
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	line := map[string]any{metric: value}
	sets := make([][]string, 0, len(spec.Dimensions))
	for _, set := range spec.Dimensions {
		complete := true
		for _, d := range set {
			v, ok := dims[d]
			if !ok || v == "" {
				complete = false
				break
			}
			line[d] = v
		}
		if complete {
			sets = append(sets, set)
		}
	}
	if len(sets) == 0 {
		return
	}
	line["_aws"] = map[string]any{
		"Timestamp": now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": sets,
			"Metrics":    []any{map[string]string{"Name": metric, "Unit": spec.Unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.out.Write(append(b, '\n'))
}
