// Package fault injects failures into the functions, for the soak test only.
// Every rate is zero unless a deployment sets HOOKLINE_FAULT_* (the CDK
// context value "faults"), which no production deployment does: with the
// rates at zero, Point always answers nil.
package fault

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// Injected is returned by a point that fails.
var Injected = errors.New("injected fault")

// Points a deployment can fail at.
const (
	// DeliverCrash: the deliver process exits after an attempt's POST and
	// before recording it or answering for its batch.
	DeliverCrash = "deliver_crash"
	// EnqueueFail: enqueue fails its invocation after sending part of its
	// messages: after its first SendMessageBatch request, before the next.
	EnqueueFail = "enqueue_fail"
)

// Env is the environment variable holding the rates: "point:rate,...".
const Env = "HOOKLINE_FAULTS"

// Rates maps a point to the probability that it fails.
type Rates map[string]float64

// Parse reads "deliver_crash:0.02,enqueue_fail:0.05" ("" is no faults).
func Parse(s string) (Rates, error) {
	r := Rates{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, v, ok := strings.Cut(part, ":")
		rate, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || rate < 0 || rate > 1 {
			return nil, fmt.Errorf("%s: %q is not point:rate with a rate from 0 to 1", Env, part)
		}
		if name != DeliverCrash && name != EnqueueFail {
			return nil, fmt.Errorf("%s: unknown fault point %q", Env, name)
		}
		r[name] = rate
	}
	return r, nil
}

// Point answers Injected with the point's probability (never, by default).
// A crash point ends the process instead, as a crash would.
func (r Rates) Point(name string) error {
	rate := r[name]
	if rate <= 0 || rand.Float64() >= rate {
		return nil
	}
	if name == DeliverCrash {
		fmt.Fprintln(os.Stderr, `{"level":"WARN","msg":"injected fault: process exits","point":"`+name+`"}`)
		os.Exit(3)
	}
	return fmt.Errorf("%w at %s", Injected, name)
}
