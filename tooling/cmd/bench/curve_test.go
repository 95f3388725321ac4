package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/tooling/perf/curve"
	"github.com/hookline/hookline/tooling/perf/pipeline"
	"github.com/stretchr/testify/require"
)

func TestCurveRows(t *testing.T) {
	burst := func(perS float64) pipeline.BurstResult {
		return pipeline.BurstResult{N: 1000, Elapsed: time.Duration(1000 / perS * float64(time.Second))}
	}
	points := []curve.Point{
		{Concurrency: 2, Hookline: burst(150), Floor: burst(200), HooklineQueuePeak: 40, FloorQueuePeak: 3, HooklineInFlight: 20, FloorInFlight: 19},
		{Concurrency: 5, Hookline: burst(160), Floor: burst(450), HooklineQueuePeak: 600},
	}
	rows := curveRows(points, 50*time.Millisecond)
	require.Equal(t, []row{
		{"curve", "deliveries/s at C=2, burst of 1000, receiver 50ms (model C×B/L: 400/s)", "150/s, queue ≤ 40, in flight ≤ 20", "200/s floor, queue ≤ 3, in flight ≤ 19", "0.75x", "(info)"},
		{"curve", "deliveries/s at C=5, burst of 1000, receiver 50ms (model C×B/L: 1000/s)", "160/s, queue ≤ 600, in flight ≤ 0", "450/s floor, queue ≤ 0, in flight ≤ 0", "0.36x", "(info)"},
		{"curve", "where each curve flattens (a step bringing < 1/4 of the proportional gain)", "from C=2", "not up to C=5 floor", "", "limit: hookline's work"},
	}, rows)
	require.Empty(t, curveRows(nil, time.Second))
}

func TestCurveTablePrints(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	printTable(curveRows([]curve.Point{{Concurrency: 2, Hookline: pipeline.BurstResult{N: 10, Elapsed: time.Second}, Floor: pipeline.BurstResult{N: 10, Elapsed: time.Second}}}, 50*time.Millisecond))
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(r)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Contains(t, lines[0], "ratios: hookline / baseline")
	require.Regexp(t, `^curve\s+deliveries/s at C=2, burst of 10, receiver 50ms \(model C×B/L: 400/s\)\s+10/s, queue ≤ 0, in flight ≤ 0\s+10/s floor, queue ≤ 0, in flight ≤ 0\s+1.00x\s+\(info\)$`, lines[len(lines)-2])
	require.Regexp(t, `^curve\s+where each curve flattens .*\s+not up to C=2\s+not up to C=2 floor\s+limit: neither yet$`, lines[len(lines)-1])
}
