package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/coldstart"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

// publishRounds is how many blocks of each side the publish throughput
// alternates, so that a change in the machine's load falls on both sides.
const publishRounds = 4

// publishThroughput measures POST /v1/events on the stack against the API
// floor deployed beside it (an HTTP API route served by a function that
// answers 202 and does nothing): n requests per side at the same
// concurrency, in alternating blocks, the same body and headers on both.
// The publishing tenant has no endpoint, so the events it writes are
// rejected by enqueue (no_endpoint) instead of delivered while the blocks
// run.
func publishThroughput(ctx context.Context, e *harness.Env, n, concurrency int) ([]row, error) {
	_, _, tenant, err := e.Tenant(ctx, "benchpub", "bench publish")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hookline-bench-api")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, _, err := coldstart.Build(ctx, dir, "./tooling/perf/pipeline/floor")
	if err != nil {
		return nil, err
	}
	floor, err := pipeline.DeployAPIFloor(ctx, e.AWS, fmt.Sprintf("hookline-apifloor-%d", time.Now().Unix()), bin)
	if err != nil {
		return nil, err
	}
	defer floor.Close(context.WithoutCancel(ctx))
	body := `{"type":"bench.publish","payload":` + pipeline.Payload + `}`
	request := func(url string) func(int) (*http.Request, error) {
		return func(int) (*http.Request, error) {
			r, err := http.NewRequest("POST", url, strings.NewReader(body))
			if err == nil {
				r.Header.Set("Authorization", "Bearer "+tenant.Key)
				r.Header.Set("Content-Type", "application/json")
			}
			return r, err
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	sides := []struct {
		req  func(int) (*http.Request, error)
		took time.Duration
	}{{req: request(floor.URL)}, {req: request(tenant.BaseURL + "/v1/events")}}
	for i := range sides { // warm: the first requests wait for processes to start
		if _, err := pipeline.Requests(ctx, client, concurrency, concurrency, http.StatusAccepted, sides[i].req); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "bench: %d publishes and %d empty-handler requests, %d at a time\n", n, n, concurrency)
	block := max(n/publishRounds, 1)
	for range publishRounds {
		for i := range sides {
			r, err := pipeline.Requests(ctx, client, block, concurrency, http.StatusAccepted, sides[i].req)
			if err != nil {
				return nil, err
			}
			sides[i].took += r.Elapsed
		}
	}
	total := block * publishRounds
	floorRate, pubRate := float64(total)/sides[0].took.Seconds(), float64(total)/sides[1].took.Seconds()
	return []row{{"api", fmt.Sprintf("publishes per second (POST /v1/events, %d at a time, %d requests)", concurrency, total),
		fmt.Sprintf("%.0f /s", pubRate), fmt.Sprintf("%.0f /s empty handler", floorRate), x(pubRate / floorRate), "≥ 1x"}}, nil
}
