package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/coldstart"
	"github.com/hookline/hookline/tooling/perf/curve"
)

// curveSection runs the throughput curve (package curve) and returns its
// rows. An interrupt cancels it, and the settings it changed are set back
// before it returns.
func curveSection(ctx context.Context, cfg curve.Config) ([]row, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := harness.Load(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hookline-curve")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if cfg.FloorBootstrap, _, err = coldstart.Build(ctx, dir, "./tooling/perf/pipeline/floor"); err != nil {
		return nil, err
	}
	cfg.Log = os.Stderr
	start := time.Now()
	points, err := curve.Run(ctx, e, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "curve: section took %s\n", time.Since(start).Round(time.Second))
	if len(points) > 0 {
		fmt.Fprintf(os.Stderr, "curve: %s\n", curve.Flattening(points).Verdict())
	}
	return curveRows(points, cfg.Delay), nil
}

// curveRows prints the curve: one row a step (hookline's deliveries a
// second, the floor's, each with the most messages seen waiting in its
// queue and the most POSTs in flight at the receiver, the ratio, and the capacity model's ceiling C×B/L), then where
// each flattens and what limits it.
func curveRows(points []curve.Point, delay time.Duration) []row {
	var rows []row
	for _, p := range points {
		rows = append(rows, row{"curve",
			fmt.Sprintf("deliveries/s at C=%d, burst of %d, receiver %s (model C×B/L: %.0f/s)", p.Concurrency, p.Hookline.N, delay, curve.Model(p.Concurrency, delay)),
			fmt.Sprintf("%.0f/s, queue ≤ %d, in flight ≤ %d", p.Hookline.PerSecond(), p.HooklineQueuePeak, p.HooklineInFlight),
			fmt.Sprintf("%.0f/s floor, queue ≤ %d, in flight ≤ %d", p.Floor.PerSecond(), p.FloorQueuePeak, p.FloorInFlight), x(p.Ratio()), "(info)"})
	}
	if len(points) > 0 {
		s := curve.Flattening(points)
		h, f := s.Knees()
		rows = append(rows, row{"curve", "where each curve flattens (a step bringing < 1/4 of the proportional gain)", h, f + " floor", "", "limit: " + s.Limit()})
	}
	return rows
}
