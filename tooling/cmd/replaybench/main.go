// Command replaybench measures replay on the stack deployed in the local
// cloud: it makes -n deliveries of one tenant dead (its receiver answers 400),
// with -background dead deliveries of another tenant in the same DLQ, brings
// the receiver back, replays the tenant by filter through the API, and
// reports the time until every replayed delivery arrived, the sends per
// second, and the time of the tenant's DLQ listing. Run it twice with
// different -background values to see how a tenant's replay grows with the
// size of the whole DLQ. `make bench-replay` runs both. With -since it
// instead delivers -n events, then replays every delivery since a time
// (POST /v1/replays: each rebuilt from its outbox item as a resend) and
// reports the time until every resend arrived.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
)

func main() {
	n := flag.Int("n", 1000, "dead deliveries of the replaying tenant")
	background := flag.Int("background", 0, "dead deliveries of another tenant in the same DLQ")
	since := flag.Bool("since", false, "replay -n delivered deliveries since a time instead (rebuilt from the outbox)")
	settle := flag.Duration("settle", 0, "wait this long after the deaths before the replay, so that their aftermath (the delivery.dead notices and their events) is not measured with it")
	flag.Parse()
	do := func(ctx context.Context) error { return run(ctx, *n, *background, *settle) }
	if *since {
		do = func(ctx context.Context) error { return runSince(ctx, *n) }
	}
	if err := do(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "replaybench:", err)
		os.Exit(1)
	}
}

type env struct{ *harness.Env }

// tenantWithDead creates a tenant whose n events all die (400), and returns
// its client, receiver switch and request counter.
func (e *env) tenantWithDead(ctx context.Context, name string, n int) (*apiclient.Client, *atomic.Bool, *atomic.Int64, func(), error) {
	up, hits := &atomic.Bool{}, &atomic.Int64{}
	client, stop, err := e.tenantWith(ctx, name, n, up, hits)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	start := time.Now()
	for {
		dead, _, err := countDead(ctx, client)
		if err != nil {
			stop()
			return nil, nil, nil, nil, err
		}
		if dead >= n {
			fmt.Printf("  %s: %d deliveries dead in %s\n", name, dead, time.Since(start).Round(time.Second))
			return client, up, hits, stop, nil
		}
		if time.Since(start) > 10*time.Minute {
			stop()
			return nil, nil, nil, nil, fmt.Errorf("only %d of %d deliveries died in 10 minutes", dead, n)
		}
		time.Sleep(2 * time.Second)
	}
}

// tenantWith creates a tenant with n events written to its outbox, over
// endpoints of a receiver that answers 200 while up (counting hits) and
// 400 while not, and returns its client and the receiver's stop.
func (e *env) tenantWith(ctx context.Context, name string, n int, up *atomic.Bool, hits *atomic.Int64) (*apiclient.Client, func(), error) {
	id, _, client, err := e.Tenant(ctx, name, name)
	if err != nil {
		return nil, nil, err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if up.Load() {
			hits.Add(1)
			w.WriteHeader(200)
			return
		}
		w.WriteHeader(400)
	}))
	// At most 40 deaths per endpoint: 50 consecutive failures would disable
	// it (and the events after that would find no endpoint).
	var endpoints []string
	for i := 0; i < (n+39)/40; i++ {
		var ep api.EndpointView
		if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]string{"url": fmt.Sprintf("%s/ep%d", srv.URL, i)}, &ep); err != nil {
			srv.Close()
			return nil, nil, err
		}
		endpoints = append(endpoints, ep.ID)
	}
	for i := 0; i < n; i += 25 {
		var reqs []types.WriteRequest
		for k := i; k < min(n, i+25); k++ {
			item, err := outbox.Event{ID: fmt.Sprintf("%s_evt_%d", id, k), TenantID: id, Type: "bench.event", EndpointID: endpoints[k%len(endpoints)],
				Payload: json.RawMessage(`{"k":1}`), OccurredAt: time.Now()}.Item()
			if err != nil {
				srv.Close()
				return nil, nil, err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		if _, err := e.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.Out.OutboxTableName: reqs}}); err != nil {
			srv.Close()
			return nil, nil, err
		}
	}
	return client, srv.Close, nil
}

// rate says how many sends a second sent in took made, and what share of
// the deployed job rate (the replay function's HOOKLINE_REPLAY_RATE, the
// stack's replayRate) that is: issue 37 asks that a replay run at its
// configured rate, not at what its reads and sends allow.
func (e *env) rate(ctx context.Context, sent int64, took time.Duration) string {
	perSecond := float64(sent) / took.Seconds()
	out, err := lambda.NewFromConfig(e.AWS).GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: &e.Out.ReplayFunctionName})
	if err != nil || out.Environment == nil {
		return fmt.Sprintf("%.1f sends/s (the job's rate unknown: %v)", perSecond, err)
	}
	rate, err := strconv.ParseFloat(out.Environment.Variables["HOOKLINE_REPLAY_RATE"], 64)
	if err != nil || rate <= 0 {
		return fmt.Sprintf("%.1f sends/s (the job's rate unknown)", perSecond)
	}
	return fmt.Sprintf("%.1f sends/s, %.2fx the job's rate of %g/s", perSecond, perSecond/rate, rate)
}

// countDead counts a tenant's DLQ listing and times it.
func countDead(ctx context.Context, c *apiclient.Client) (int, time.Duration, error) {
	start := time.Now()
	all, err := harness.ListDead(ctx, c)
	return len(all), time.Since(start), err
}

func run(ctx context.Context, n, background int, settle time.Duration) error {
	h, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	e := &env{h}
	fmt.Printf("replaybench: %d dead deliveries to replay, %d other dead deliveries in the DLQ\n", n, background)
	if background > 0 {
		_, _, _, stop, err := e.tenantWithDead(ctx, "bench_noise", background)
		if err != nil {
			return err
		}
		defer stop()
	}
	client, up, hits, stop, err := e.tenantWithDead(ctx, "bench", n)
	if err != nil {
		return err
	}
	defer stop()
	_, listTime, err := countDead(ctx, client)
	if err != nil {
		return err
	}
	if settle > 0 {
		fmt.Printf("  waiting %s for the deaths' notices to settle\n", settle)
		time.Sleep(settle)
	}
	up.Store(true)
	job, took, err := timeJob(ctx, client, "/v1/dlq/replay", map[string]string{"event_type": "bench.event"}, hits, n)
	if err != nil {
		return err
	}
	fmt.Printf("replayed %d of %d in %s: %s (job %s: matched %d, replayed %d); tenant DLQ listing (%d items) took %s\n",
		hits.Load(), n, took.Round(100*time.Millisecond), e.rate(ctx, hits.Load(), took),
		job.Status, job.Matched, job.Replayed, n, listTime.Round(time.Millisecond))
	if hits.Load() < int64(n) {
		return fmt.Errorf("only %d of %d replayed deliveries arrived", hits.Load(), n)
	}
	return nil
}

// runSince delivers n events of a tenant, then replays every delivery
// since a time before them (each rebuilt from its outbox item, sent again
// as a resend) and prints the time until every resend arrived.
func runSince(ctx context.Context, n int) error {
	h, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	e := &env{h}
	fmt.Printf("replaybench: %d delivered deliveries to replay since a time\n", n)
	up, hits := &atomic.Bool{}, &atomic.Int64{}
	up.Store(true)
	from := time.Now().Add(-time.Minute).UTC()
	client, stop, err := e.tenantWith(ctx, "bench_since", n, up, hits)
	if err != nil {
		return err
	}
	defer stop()
	for start := time.Now(); hits.Load() < int64(n); time.Sleep(500 * time.Millisecond) {
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("only %d of %d deliveries delivered in 10 minutes", hits.Load(), n)
		}
	}
	time.Sleep(2 * time.Second) // their records written
	hits.Store(0)
	job, took, err := timeJob(ctx, client, "/v1/replays", map[string]string{"since": from.Format(time.RFC3339)}, hits, n)
	if err != nil {
		return err
	}
	fmt.Printf("resent %d of %d in %s: %s (job %s: matched %d, replayed %d)\n",
		hits.Load(), n, took.Round(100*time.Millisecond), e.rate(ctx, hits.Load(), took), job.Status, job.Matched, job.Replayed)
	if hits.Load() < int64(n) {
		return fmt.Errorf("only %d of %d resends arrived", hits.Load(), n)
	}
	return nil
}

// timeJob starts a replay job (POST path with body) and returns it as it
// stands once the receiver counted n hits (or 15 minutes passed), and the
// time that took.
func timeJob(ctx context.Context, client *apiclient.Client, path string, body any, hits *atomic.Int64, n int) (api.JobView, time.Duration, error) {
	start := time.Now()
	var job api.JobView
	if err := client.Do(ctx, "POST", path, body, &job); err != nil {
		return job, 0, err
	}
	for hits.Load() < int64(n) && time.Since(start) < 15*time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	err := client.Do(ctx, "GET", "/v1/replays/"+job.ID, nil, &job)
	return job, took, err
}
