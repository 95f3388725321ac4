package coldstart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// functions are the hookline functions Suite measures, in its order, each
// with the configuration that passes its loadConfig: fake names and URLs
// that nothing reaches at start. The api function names its operator key's
// secret, as deployed: it reads Secrets Manager on the first admin request,
// not at start.
var functions = []Target{
	{Name: "enqueue", Env: []string{
		"HOOKLINE_STATE_TABLE=t",
		"HOOKLINE_DELIVERY_QUEUE_URL=http://127.0.0.1:1/delivery",
		"HOOKLINE_EVENT_BUS=hookline-operator",
		"HOOKLINE_LOG_LEVEL=INFO",
	}},
	{Name: "deliver", Env: []string{
		"HOOKLINE_STATE_TABLE=t",
		"HOOKLINE_DELIVERY_QUEUE_URL=http://127.0.0.1:1/delivery",
		"HOOKLINE_DLQ_URL=http://127.0.0.1:1/dlq",
		"HOOKLINE_SECRETS_KEY_ARN=arn:aws:kms:us-east-1:000000000000:key/secrets",
		"HOOKLINE_REQUEST_TIMEOUT=15s",
		"HOOKLINE_DISABLE_AFTER=50",
		"HOOKLINE_LOG_LEVEL=INFO",
	}},
	{Name: "api", Env: []string{
		"HOOKLINE_STATE_TABLE=t",
		"HOOKLINE_OPERATOR_KEY_SECRET_ARN=arn:aws:secretsmanager:us-east-1:000000000000:secret:operator",
		"HOOKLINE_SECRETS_KEY_ARN=arn:aws:kms:us-east-1:000000000000:key/secrets",
		"HOOKLINE_ALLOW_HTTP=false",
		"HOOKLINE_REPLAY_QUEUE_URL=http://127.0.0.1:1/replay",
		"HOOKLINE_OUTBOX_TABLE=o",
		"HOOKLINE_LOG_LEVEL=INFO",
	}},
	{Name: "replay", Env: []string{
		"HOOKLINE_STATE_TABLE=t",
		"HOOKLINE_DELIVERY_QUEUE_URL=http://127.0.0.1:1/delivery",
		"HOOKLINE_DLQ_URL=http://127.0.0.1:1/dlq",
		"HOOKLINE_DLQ_ARRIVALS_URL=http://127.0.0.1:1/dlq-arrivals",
		"HOOKLINE_REPLAY_QUEUE_URL=http://127.0.0.1:1/replay",
		"HOOKLINE_REPLAY_RATE=10",
		"HOOKLINE_LOG_LEVEL=INFO",
	}},
}

// HelloDir is the hello-world function's directory in the repository.
const HelloDir = "tooling/perf/coldstart/hello"

// Row compares one function with the hello-world function.
type Row struct {
	// Name of the function.
	Name string
	// SizeBytes and HelloSizeBytes are the sizes of the binaries.
	SizeBytes, HelloSizeBytes int64
	// StartMedian and HelloStartMedian are the median start times.
	StartMedian, HelloStartMedian time.Duration
}

// SizeX is the function's size in multiples of the hello world's.
func (r Row) SizeX() float64 { return float64(r.SizeBytes) / float64(r.HelloSizeBytes) }

// StartX is the function's median start in multiples of the hello world's.
func (r Row) StartX() float64 { return float64(r.StartMedian) / float64(r.HelloStartMedian) }

// Suite builds the hello world and the functions of the repository at repoRoot
// into a temporary directory, measures them interleaved, runs starts each,
// and returns one Row per function, in the order enqueue, deliver, api, replay.
func Suite(ctx context.Context, repoRoot string, runs int) ([]Row, error) {
	dir, err := os.MkdirTemp("", "hookline-coldstart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	hello, _, err := Build(ctx, dir, filepath.Join(repoRoot, HelloDir))
	if err != nil {
		return nil, err
	}
	targets := []Target{{Name: "hello", Bin: hello}}
	for _, f := range functions {
		bin, _, err := Build(ctx, dir, filepath.Join(repoRoot, "functions", f.Name))
		if err != nil {
			return nil, err
		}
		f.Bin = bin
		targets = append(targets, f)
	}
	results, err := MeasureInterleaved(ctx, targets, runs)
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	rows := make([]Row, 0, len(functions))
	for i, f := range functions {
		r := results[i+1]
		rows = append(rows, Row{
			Name:      f.Name,
			SizeBytes: r.Size, HelloSizeBytes: results[0].Size,
			StartMedian: r.Median, HelloStartMedian: results[0].Median,
		})
	}
	return rows, nil
}
