// Package curve measures hookline's throughput curve on the local cloud:
// at each step of increasing concurrency, the deliver mapping's maximum
// concurrency (its SQS event source mapping's ScalingConfig.
// MaximumConcurrency) and the floor's (package pipeline's do-nothing
// pipeline, its SQS hop's mapping) are set to the same value with the Lambda
// API, and a burst of events goes through each, to a receiver answering
// after a fixed delay so that concurrency matters. Each step prints
// hookline's deliveries a second beside the floor's, measured in the same
// run, and the curve says where it flattens: if hookline flattens where the
// floor still grows, hookline's own work is the limit there; if both
// flatten together, the machine is (docs/performance.md, "Throughput
// curve").
//
// Run restores both settings it changes (the deliver mapping's maximum
// concurrency, and the deliver function's reserved concurrency when a step
// needs more than it holds) when it returns, on failure too. The package
// reports figures; it asserts nothing.
package curve

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/tooling/perf/pipeline"
)

const (
	// MinStep is the smallest maximum concurrency an SQS event source
	// mapping takes (AWS: 2 to 1000).
	MinStep = 2
	// MaxStep bounds a step: the local cloud runs each concurrent
	// invocation as a process on the same machine.
	MaxStep = 100
	// StepsDefault are the steps of make bench-curve.
	StepsDefault = "2,5,10,20"
	// BatchSize is B, the messages of one deliver invocation (and of the
	// floor's SQS hop): infra/hookline's deliverBatchSize.
	BatchSize = 10
	// FlatGain is how much of the proportional gain a step must bring to
	// count as growth: going from C1 to C2 concurrency, a rate that grows by
	// less than FlatGain × (C2/C1 − 1) has flattened.
	FlatGain = 0.25
)

// ParseSteps reads a comma-separated list of concurrencies, e.g. "2,5,10":
// whole numbers from MinStep to MaxStep, strictly ascending.
func ParseSteps(s string) ([]int, error) {
	var steps []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < MinStep || n > MaxStep {
			return nil, fmt.Errorf("curve step %q: want a whole number from %d to %d", f, MinStep, MaxStep)
		}
		if len(steps) > 0 && n <= steps[len(steps)-1] {
			return nil, fmt.Errorf("curve steps %q: want them ascending, each once", s)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// Model is the capacity model's ceiling at concurrency c (docs/capacity.md):
// c × B / L deliveries a second, L the receiver's answer delay, hookline's
// own work and the machine's counted as nothing.
func Model(c int, delay time.Duration) float64 {
	if delay <= 0 {
		return 0
	}
	return float64(c*BatchSize) / delay.Seconds()
}

// Point is one step of the curve: a burst through hookline and one through
// the floor, both at Concurrency.
type Point struct {
	Concurrency     int
	Hookline, Floor pipeline.BurstResult
	// HooklineQueuePeak and FloorQueuePeak are the most messages seen
	// waiting in each side's queue during its burst (sampled): a backlog
	// there means the SQS hop is the slower one.
	HooklineQueuePeak, FloorQueuePeak int
	// HooklineInFlight and FloorInFlight are the most POSTs the receiver
	// was answering at once during each side's burst: with its delay, about
	// the invocations at work × their batch.
	HooklineInFlight, FloorInFlight int
}

// Ratio is hookline's deliveries a second over the floor's (0 if either
// burst was not measured).
func (p Point) Ratio() float64 {
	if p.Floor.Elapsed <= 0 || p.Hookline.Elapsed <= 0 {
		return 0
	}
	return p.Hookline.PerSecond() / p.Floor.PerSecond()
}

// Knee is where a series of rates (one per concurrency, ascending) stops
// growing: the concurrency of the last step before the first one that
// brought less than FlatGain of the proportional gain, and true; false if
// every step grew.
func Knee(conc []int, rates []float64) (int, bool) {
	for i := 1; i < len(conc) && i < len(rates); i++ {
		if rates[i-1] <= 0 {
			continue
		}
		want := float64(conc[i])/float64(conc[i-1]) - 1
		got := rates[i]/rates[i-1] - 1
		if got < FlatGain*want {
			return conc[i-1], true
		}
	}
	return 0, false
}

// Shape is where each curve flattens.
type Shape struct {
	HooklineKnee, FloorKnee int  // 0 when it did not flatten
	HooklineFlat, FloorFlat bool // whether it flattened within the steps
	Last                    int  // the last step's concurrency
}

// Flattening reads the shape of the measured points.
func Flattening(points []Point) Shape {
	var conc []int
	var h, f []float64
	for _, p := range points {
		conc = append(conc, p.Concurrency)
		h = append(h, p.Hookline.PerSecond())
		f = append(f, p.Floor.PerSecond())
	}
	var s Shape
	s.HooklineKnee, s.HooklineFlat = Knee(conc, h)
	s.FloorKnee, s.FloorFlat = Knee(conc, f)
	if len(conc) > 0 {
		s.Last = slices.Max(conc)
	}
	return s
}

// Knees says where each side flattens, for the table: "from C=5", or "not
// up to C=20".
func (s Shape) Knees() (hookline, floor string) {
	say := func(flat bool, knee int) string {
		if flat {
			return fmt.Sprintf("from C=%d", knee)
		}
		return fmt.Sprintf("not up to C=%d", s.Last)
	}
	return say(s.HooklineFlat, s.HooklineKnee), say(s.FloorFlat, s.FloorKnee)
}

// Limit names what limits the curve, in a few words: "hookline's work"
// when hookline flattens before the floor (or alone), "the machine" when
// the floor flattens first or with it, "neither yet" when neither does.
func (s Shape) Limit() string {
	switch {
	case !s.HooklineFlat && !s.FloorFlat:
		return "neither yet"
	case s.HooklineFlat && (!s.FloorFlat || s.HooklineKnee < s.FloorKnee):
		return "hookline's work"
	default:
		return "the machine"
	}
}

// Verdict says in one line where the curve is limited, and by what.
func (s Shape) Verdict() string {
	switch {
	case !s.HooklineFlat && !s.FloorFlat:
		return fmt.Sprintf("neither flattens up to C=%d: more concurrency still helps both", s.Last)
	case s.HooklineFlat && !s.FloorFlat:
		return fmt.Sprintf("hookline flattens from C=%d while the floor still grows to C=%d: hookline's own work is the limit", s.HooklineKnee, s.Last)
	case s.HooklineFlat && s.HooklineKnee < s.FloorKnee:
		return fmt.Sprintf("hookline flattens from C=%d, the floor from C=%d: hookline's own work is the limit between them", s.HooklineKnee, s.FloorKnee)
	case s.HooklineFlat && s.HooklineKnee == s.FloorKnee:
		return fmt.Sprintf("both flatten from C=%d: the machine (the local cloud) is the limit, not hookline's work", s.FloorKnee)
	case s.HooklineFlat:
		return fmt.Sprintf("the floor flattens from C=%d, hookline from C=%d: the machine is the limit first", s.FloorKnee, s.HooklineKnee)
	default:
		return fmt.Sprintf("the floor flattens from C=%d, hookline still grows to C=%d: the machine is the limit (for the floor first)", s.FloorKnee, s.Last)
	}
}
