// Command bench runs hookline's performance suite and prints one table:
// every figure beside the baseline it was measured against in the same run,
// and the ratio, so that a noisy machine moves both sides alike (see
// docs/performance.md).
//
//   - deliver path: a signed, classified attempt against a bare net/http POST
//     (BenchmarkSendVsBarePost);
//   - enqueue path: a stream record through the handler against decoding it
//     alone (BenchmarkEnqueueVsDecode);
//   - cold start and size of each bootstrap against a hello-world Go Lambda
//     (package coldstart);
//   - with -cloud (make bench: the stack deployed in the local cloud):
//     outbox write to POST received against the local cloud's floor (do-
//     nothing functions on the same two hops), a burst's throughput, the
//     cost per million deliveries from what the burst's logs say (and the
//     latency events', one at a time), sparse traffic's latency and cost
//     without a batching window and with one of a second on the stream
//     mapping (its price beside its saving), and
//     POST /v1/events's throughput against the API floor (an HTTP API route
//     whose function does nothing), at the same concurrency, and the
//     isolation section: a quiet tenant's p50 and p95 beside a slow and
//     beside a hanging endpoint against the same tenant alone (package
//     isolation; -isolation-only runs it alone), the abuse section: the
//     same quiet tenant beside a tenant with the worst filter and payload
//     the API accepts and beside one at every cap (-abuse-only), and the
//     throughput curve:
//     deliveries a second at increasing deliver concurrency against the
//     floor's at the same (package curve; -curve-only runs it alone), and
//     the API abuse section: a quiet tenant's and the operator's API p50
//     and p95 beside a tenant flooding the expensive routes against alone
//     (package apiabuse; -api-abuse-only runs it alone);
//   - the console's page weight (HTML+JS+CSS, gzip) against a hello-world
//     page served the same way, and against console.BudgetGzipBytes: from
//     the deployed API's /console/ and /console-hello/ with -cloud, else
//     from the files embedded in the api function.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/apiabuse"
	"github.com/hookline/hookline/tooling/perf/coldstart"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/hookline/hookline/tooling/perf/curve"
	"github.com/hookline/hookline/tooling/perf/isolation"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

type row struct {
	area, measure, value, baseline, ratio, target string
}

func main() {
	cloud := flag.Bool("cloud", false, "also measure end to end on the stack deployed in the local cloud (make deploy-local)")
	runs := flag.Int("starts", 20, "cold starts per binary")
	latencyN := flag.Int("latency", 200, "events for the latency percentiles (each side)")
	burstN := flag.Int("burst", 2000, "events in the burst (each side)")
	publishN := flag.Int("publish", 400, "requests per side for the publish throughput")
	publishC := flag.Int("publish-concurrency", 8, "requests at a time for the publish throughput (each side)")
	pageOnly := flag.Bool("page-weight", false, "measure only the console's page weight (quick; with -cloud, as the deployed API serves it)")
	isolationOnly := flag.Bool("isolation-only", false, "with -cloud, run only the isolation section (a quiet tenant alone, beside a slow and beside a hanging endpoint; a few minutes)")
	isoEvents := flag.Int("isolation-events", isolation.QuietEventsDefault, "the quiet tenant's events in each isolation situation")
	isoBacklog := flag.Int("isolation-backlog", isolation.BacklogDefault, "the noisy tenant's backlog in each isolation situation")
	abuseOnly := flag.Bool("abuse-only", false, "with -cloud, run only the abuse section (a quiet tenant alone, beside a tenant with the worst filter and payload the API accepts, and beside a tenant at every cap with a backlog to endpoints that do not answer; several minutes)")
	curveOnly := flag.Bool("curve-only", false, "with -cloud, run only the throughput curve (deliveries/s at each deliver concurrency against the floor's; a few minutes)")
	curveSteps := flag.String("curve-steps", curve.StepsDefault, "the throughput curve's concurrencies (the deliver mapping's and the floor's maximum concurrency), ascending")
	curveEvents := flag.Int("curve-events", curve.EventsDefault, "events in each burst of the throughput curve (each side, each step)")
	curveDelay := flag.Duration("curve-delay", curve.DelayDefault, "how long the throughput curve's receiver takes to answer")
	destN := flag.Int("destinations-events", 300, "events in each destination type's burst (the destinations section: http, sqs, sns, eventbridge)")
	destOnly := flag.Bool("destinations-only", false, "with -cloud, run only the destinations section (a burst per endpoint type and each type's cost per million)")
	endToEndOnly := flag.Bool("end-to-end-only", false, "with -cloud, run only the end-to-end section (the latency's events one at a time, the burst, and the cost rows measured on them; a few minutes)")
	apiAbuseOnly := flag.Bool("api-abuse-only", false, "with -cloud, run only the API abuse section (a quiet tenant's and the operator's API p50/p95 alone and beside a tenant flooding the expensive routes; a few minutes)")
	abuseN := flag.Int("api-abuse-requests", apiabuse.RequestsDefault, "the quiet tenant's requests in each API abuse situation")
	abuseFlood := flag.Int("api-abuse-flood", apiabuse.FloodDefault, "the flooding tenant's requests in flight at once")
	flag.Parse()
	ctx := context.Background()
	var rows []row
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", what, err)
		os.Exit(1)
	}

	isoCfg := isolation.Config{QuietEvents: *isoEvents, Backlog: *isoBacklog}
	steps, err := curve.ParseSteps(*curveSteps)
	if err != nil {
		fail("curve", err)
	}
	curveCfg := curve.Config{Steps: steps, Events: *curveEvents, Delay: *curveDelay}
	if *curveOnly {
		if !*cloud {
			fail("curve", fmt.Errorf("-curve-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := curveSection(ctx, curveCfg)
		if err != nil {
			fail("curve", err)
		}
		printTable(rows)
		return
	}
	if *destOnly {
		if !*cloud {
			fail("destinations", fmt.Errorf("-destinations-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := destinationRows(ctx, *destN)
		if err != nil {
			fail("destinations", err)
		}
		printTable(rows)
		return
	}
	abuseCfg := isoCfg
	abuseCfg.Situations = isolation.Abuse
	if *abuseOnly {
		if !*cloud {
			fail("abuse", fmt.Errorf("-abuse-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := isolationRows(ctx, abuseCfg)
		if err != nil {
			fail("abuse", err)
		}
		printTable(rows)
		return
	}
	apiAbuseCfg := apiabuse.Config{Requests: *abuseN, Flood: *abuseFlood}
	if *apiAbuseOnly {
		if !*cloud {
			fail("api abuse", fmt.Errorf("-api-abuse-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := apiAbuseRows(ctx, apiAbuseCfg)
		if err != nil {
			fail("api abuse", err)
		}
		printTable(rows)
		return
	}
	if *endToEndOnly {
		if !*cloud {
			fail("end to end", fmt.Errorf("-end-to-end-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := endToEnd(ctx, *latencyN, *burstN)
		if err != nil {
			fail("end to end", err)
		}
		printTable(rows)
		return
	}
	if *isolationOnly {
		if !*cloud {
			fail("isolation", fmt.Errorf("-isolation-only needs -cloud (the stack deployed in the local cloud: make deploy-local)"))
		}
		rows, err := isolationRows(ctx, isoCfg)
		if err != nil {
			fail("isolation", err)
		}
		printTable(rows)
		return
	}

	if *pageOnly {
		rows, err := consoleWeight(ctx, *cloud)
		if err != nil {
			fail("console page weight", err)
		}
		printTable(rows)
		return
	}

	m, err := goBench("./internal/sender", "SendVsBarePost")
	if err != nil {
		fail("deliver path", err)
	}
	d := m["BenchmarkSendVsBarePost"]
	rows = append(rows,
		row{"deliver path", "CPU time per delivery (sign, POST, read, classify)", us(d["send-cpu-ns/op"]), us(d["bare-cpu-ns/op"]) + " bare POST", x(d["time-x"]), "≤ 1.3x"},
		row{"deliver path", "allocations per delivery", num(d["send-allocs/op"]), num(d["bare-allocs/op"]) + " bare POST", x(d["allocs-x"]), "≤ 1.5x"})
	tr, err := tracingRows()
	if err != nil {
		fail("deliver path, tracing", err)
	}
	rows = append(rows, tr...)

	if m, err = goBench("./internal/enqueue", "EnqueueVsDecode"); err != nil {
		fail("enqueue path", err)
	}
	for _, eps := range []string{"1", "2"} {
		e := m["BenchmarkEnqueueVsDecode/endpoints="+eps]
		target := "≤ 2x"
		if eps != "1" {
			target = "(info)"
		}
		rows = append(rows,
			row{"enqueue path", "CPU time per stream record, " + eps + " endpoint(s)", us(e["enqueue-cpu-ns/op"]), us(e["decode-cpu-ns/op"]) + " decode only", x(e["time-x"]), target},
			row{"enqueue path", "allocations per stream record, " + eps + " endpoint(s)", num(e["enqueue-allocs/op"]), num(e["decode-allocs/op"]) + " decode only", x(e["allocs-x"]), target})
	}

	sr, err := schemaRows()
	if err != nil {
		fail("enqueue path, schema validation", err)
	}
	rows = append(rows, sr...)

	root, _ := os.Getwd()
	cs, err := coldstart.Suite(ctx, root, *runs)
	if err != nil {
		fail("cold start", err)
	}
	for _, r := range cs {
		rows = append(rows,
			row{"cold start", r.Name + " bootstrap size", mb(r.SizeBytes), mb(r.HelloSizeBytes) + " hello", x(r.SizeX()), "≤ 2x"},
			row{"cold start", r.Name + " start to first /next", ms(r.StartMedian), ms(r.HelloStartMedian) + " hello", x(r.StartX()), "≤ 2x"})
	}

	pw, err := consoleWeight(ctx, *cloud)
	if err != nil {
		fail("console page weight", err)
	}
	rows = append(rows, pw...)

	if *cloud {
		more, err := endToEnd(ctx, *latencyN, *burstN)
		if err != nil {
			fail("end to end", err)
		}
		rows = append(rows, more...)
		e, err := harness.Load(ctx)
		if err != nil {
			fail("publish throughput", err)
		}
		pub, err := publishThroughput(ctx, e, *publishN, *publishC)
		if err != nil {
			fail("publish throughput", err)
		}
		rows = append(rows, pub...)
		iso, err := isolationRows(ctx, isoCfg)
		if err != nil {
			fail("isolation", err)
		}
		rows = append(rows, iso...)
		abuse, err := isolationRows(ctx, abuseCfg)
		if err != nil {
			fail("abuse", err)
		}
		rows = append(rows, abuse...)
		apiAbuse, err := apiAbuseRows(ctx, apiAbuseCfg)
		if err != nil {
			fail("api abuse", err)
		}
		rows = append(rows, apiAbuse...)
		cur, err := curveSection(ctx, curveCfg)
		if err != nil {
			fail("curve", err)
		}
		rows = append(rows, cur...)
		dest, err := destinationRows(ctx, *destN)
		if err != nil {
			fail("destinations", err)
		}
		rows = append(rows, dest...)
	}

	printTable(rows)
}

// printTable prints the suite's one table.
func printTable(rows []row) {
	fmt.Printf("\nhookline performance, %s (ratios: hookline / baseline, measured in the same run)\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "area\tmeasure\thookline\tbaseline\tratio\ttarget")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.area, r.measure, r.value, r.baseline, r.ratio, r.target)
	}
	tw.Flush()
}

// tracingRows are deliver's attempt with tracing on (its span's ids on
// its line and the traceparent header; with X-Ray, its segment sent too)
// against the same attempt with tracing off, and Send with tracing and
// X-Ray on against the bare POST of the deliver path's target, at the
// default X-Ray sample rate and with every trace sent, in one run.
func tracingRows() ([]row, error) {
	m, err := goBench("./internal/sender", "TracedSendVs")
	if err != nil {
		return nil, err
	}
	logs, xray := m["BenchmarkTracedSendVsSend/logs"], m["BenchmarkTracedSendVsSend/xray"]
	def, every := m["BenchmarkTracedSendVsBarePost/default-rate"], m["BenchmarkTracedSendVsBarePost/every-trace"]
	rate := fmt.Sprintf("%g%% of traces", 100*domain.DefaultTracingSampleRate)
	return []row{
		{"deliver path", "CPU time per attempt, tracing on (trace ids on its line, traceparent sent) / off", us(logs["traced-cpu-ns/op"]), us(logs["send-cpu-ns/op"]) + " tracing off", x(logs["time-x"]), "(info)"},
		{"deliver path", "allocations per attempt, tracing on / off", num(logs["traced-allocs/op"]), num(logs["send-allocs/op"]) + " tracing off", x(logs["allocs-x"]), "(info)"},
		{"deliver path", "CPU time per attempt, tracing on with X-Ray, every trace's segment sent / off", us(xray["traced-cpu-ns/op"]), us(xray["send-cpu-ns/op"]) + " tracing off", x(xray["time-x"]), "(info)"},
		{"deliver path", "CPU time per delivery, tracing and X-Ray on, the default share (" + rate + ") sent", us(def["traced-cpu-ns/op"]), us(def["bare-cpu-ns/op"]) + " bare POST", x(def["time-x"]), "≤ 1.3x"},
		{"deliver path", "allocations per delivery, tracing and X-Ray on, the default share sent", num(def["traced-allocs/op"]), num(def["bare-allocs/op"]) + " bare POST", x(def["allocs-x"]), "≤ 1.5x"},
		{"deliver path", "CPU time per delivery, tracing and X-Ray on, every trace sent (tracingSampleRate 1)", us(every["traced-cpu-ns/op"]), us(every["bare-cpu-ns/op"]) + " bare POST", x(every["time-x"]), "(info)"},
	}, nil
}

// schemaRows are the enqueue path with an event-type catalog
// (BenchmarkEnqueueSchemaValidation): the record's type with validation
// off against decoding the record (the enqueue path's own target), and
// with warn and reject (a 1 KB payload validated against its schema)
// against off, in the same run.
func schemaRows() ([]row, error) {
	m, err := goBench("./internal/enqueue", "EnqueueSchemaValidation")
	if err != nil {
		return nil, err
	}
	off := m["BenchmarkEnqueueSchemaValidation/validation=off"]
	rows := []row{{"enqueue path", "CPU time per stream record, catalog type with validation off", us(off["enqueue-cpu-ns/op"]), us(off["decode-cpu-ns/op"]) + " decode only", x(off["time-x"]), "≤ 2x"}}
	for _, v := range []string{"warn", "reject"} {
		e := m["BenchmarkEnqueueSchemaValidation/validation="+v]
		rows = append(rows,
			row{"enqueue path", "CPU time per stream record, validation " + v + " (1 KB payload validated) / off", us(e["enqueue-cpu-ns/op"]), us(e["off-cpu-ns/op"]) + " validation off", x(e["time-x"]), "(info)"},
			row{"enqueue path", "allocations per stream record, validation " + v + " / off", num(e["enqueue-allocs/op"]), num(e["off-allocs/op"]) + " validation off", x(e["allocs-x"]), "(info)"})
	}
	return rows, nil
}

// goBench runs one benchmark of a package and returns each benchmark's
// reported metrics by unit.
func goBench(pkg, name string) (map[string]map[string]float64, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", name, "-benchtime", "50x", pkg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	res := map[string]map[string]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		bench := f[0]
		if i := strings.LastIndex(bench, "-"); i > 0 {
			bench = bench[:i] // the -GOMAXPROCS suffix
		}
		metrics := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				metrics[f[i+1]] = v
			}
		}
		res[bench] = metrics
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("%s printed no benchmark:\n%s", strings.Join(cmd.Args, " "), out.String())
	}
	return res, nil
}

// endToEnd measures the deployed stack against the floor deployed beside it.
func endToEnd(ctx context.Context, latencyN, burstN int) ([]row, error) {
	e, err := harness.Load(ctx)
	if err != nil {
		return nil, err
	}
	rcv, err := pipeline.NewReceiver()
	if err != nil {
		return nil, err
	}
	defer rcv.Close()
	tenant, _, client, err := e.Tenant(ctx, "bench", "bench")
	if err != nil {
		return nil, err
	}
	if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]string{"url": rcv.URL + "/hook"}, &api.EndpointView{}); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hookline-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, _, err := coldstart.Build(ctx, dir, "./tooling/perf/pipeline/floor")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("hookline-floor-%d", time.Now().Unix())
	floor, err := pipeline.DeployFloor(ctx, e.AWS, name, bin, rcv.URL+"/floor")
	if err != nil {
		return nil, err
	}
	defer floor.Close(context.WithoutCancel(ctx))
	hook := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant}

	// Warm both: the first event of each waits for mappings to start and
	// processes to launch.
	warm := func(w pipeline.Writer, id string) error {
		if err := w.Write(ctx, []string{id}); err != nil {
			return err
		}
		_, err := rcv.WaitAll(ctx, []string{id}, 90*time.Second)
		return err
	}
	if err := warm(floor, name+"_warm"); err != nil {
		return nil, fmt.Errorf("floor warm-up: %w", err)
	}
	if err := warm(hook, tenant+"_warm"); err != nil {
		return nil, fmt.Errorf("hookline warm-up: %w", err)
	}
	fmt.Fprintf(os.Stderr, "bench: latency over %d events each, alternating\n", latencyN)
	latencyStart := time.Now()
	lat, err := pipeline.Latency(ctx, rcv, hook, floor, tenant, latencyN)
	if err != nil {
		return nil, err
	}
	// The latency's events go one at a time, each its own batch: what
	// light traffic costs.
	single, err := costRows(ctx, e, latencyStart, latencyN, "batches of one: the latency's events, one at a time", "(info: no window batches these)")
	if err != nil {
		return nil, err
	}
	sparse, err := sparseRows(ctx, e, rcv, hook, tenant)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: burst of %d events each\n", burstN)
	fb, err := pipeline.Burst(ctx, rcv, floor, name+"_burst", burstN, 10*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("floor burst: %w", err)
	}
	burstStart := time.Now()
	hb, err := pipeline.Burst(ctx, rcv, hook, tenant+"_burst", burstN, 10*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("hookline burst: %w", err)
	}
	rows := []row{
		{"end to end", fmt.Sprintf("outbox write to POST received, p50 (%d events)", latencyN), ms(lat.Hookline.P50), ms(lat.Floor.P50) + " floor", x(ratio(lat.Hookline.P50, lat.Floor.P50)), "≤ 1.2x"},
		{"end to end", fmt.Sprintf("outbox write to POST received, p99 (%d events)", latencyN), ms(lat.Hookline.P99), ms(lat.Floor.P99) + " floor", x(ratio(lat.Hookline.P99, lat.Floor.P99)), "(info)"},
		{"end to end", fmt.Sprintf("burst of %d events, written at once", burstN), fmt.Sprintf("%.0f events/s (%s)", hb.PerSecond(), hb.Elapsed.Round(100*time.Millisecond)),
			fmt.Sprintf("%.0f events/s floor", fb.PerSecond()), x(ratio(hb.Elapsed, fb.Elapsed)) + " the time", "(info)"},
	}

	full, err := costRows(ctx, e, burstStart, burstN, "full batches: the burst", "≤ $1.20")
	if err != nil {
		return nil, err
	}
	return append(append(append(rows, full...), single...), sparse...), nil
}

// Sparse traffic: sparseN events, one every sparseEvery, written without
// waiting for any; at that pace each is its own batch without a window.
const (
	sparseN      = 40
	sparseEvery  = 250 * time.Millisecond
	sparseWindow = 1 // seconds: the least window Lambda takes
)

// sparseRows measures sparse traffic without a batching window and with
// one of sparseWindow seconds on the stream's mapping
// (hookline.Props.BatchingWindow, set for the run and set back after): the
// latency each gives, and what each costs.
func sparseRows(ctx context.Context, e *harness.Env, rcv *pipeline.Receiver, hook pipeline.Writer, tenant string) (_ []row, err error) {
	w, err := pipeline.FindWindow(ctx, lambda.NewFromConfig(e.AWS), e.Out.EnqueueFunctionName)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := w.Restore(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	var rows []row
	var without pipeline.Percentiles
	for _, window := range []int32{0, sparseWindow} {
		if err := w.Set(ctx, window); err != nil {
			return nil, err
		}
		what := fmt.Sprintf("sparse traffic, an event every %s, no batching window", sparseEvery)
		target := "(info)"
		if window > 0 {
			what = fmt.Sprintf("sparse traffic, an event every %s, batching window %d s", sparseEvery, window)
			target = "≤ $3"
		}
		fmt.Fprintf(os.Stderr, "bench: %s (%d events)\n", what, sparseN)
		start := time.Now()
		lat, err := pipeline.Paced(ctx, rcv, hook, fmt.Sprintf("%s_sparse%d", tenant, window), sparseN, sparseEvery, 2*time.Minute)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if window == 0 {
			without = lat
			rows = append(rows, row{"end to end", what + ": outbox write to POST received, p50 / p95", ms(lat.P50) + " / " + ms(lat.P95), "", "", "(info)"})
		} else {
			rows = append(rows, row{"end to end", what + ": outbox write to POST received, p50 / p95 (the window's price)", ms(lat.P50) + " / " + ms(lat.P95),
				ms(without.P50) + " / " + ms(without.P95) + " without", fmt.Sprintf("+%s / +%s", ms(lat.P50-without.P50), ms(lat.P95-without.P95)), "(info)"})
		}
		more, err := costRows(ctx, e, start, sparseN, what, target)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// costRows are what the events written since since cost, from the
// functions' own reports in their logs (their invocations, durations and
// log bytes), with the rest of the cost model's assumptions: n events to
// one endpoint, 5% retried once.
func costRows(ctx context.Context, e *harness.Env, since time.Time, n int, what, target string) ([]row, error) {
	a, logBytes, err := measuredAssumptions(ctx, e, since, n)
	if err != nil {
		return nil, err
	}
	est := cost.Estimate(cost.Default, a.Inputs())
	return []row{
		{"cost", "enqueue: records per invocation, ms per invocation (" + what + ")", fmt.Sprintf("%.1f, %.1f ms", a.RecordsPerEnqueueInvocation, a.EnqueueDurationMS), "", "", "(measured)"},
		{"cost", "deliver: messages per invocation, ms per invocation (" + what + ")", fmt.Sprintf("%.1f, %.1f ms", a.DeliverBatchSize, a.DeliverOwnMS), "", "", "(measured)"},
		{"cost", "function log bytes per delivery (" + what + ")", fmt.Sprintf("%.0f B", logBytes/float64(n)), "", "", "(measured)"},
		{"cost", "AWS cost per million deliveries (1 endpoint, 5% retried; " + what + ")", fmt.Sprintf("$%.2f", est.Total), "", "", target},
	}, nil
}

// measuredAssumptions are the cost model's assumptions with what the
// functions reported for the n events written since since (their
// invocations, durations and log bytes), and the log bytes in all.
func measuredAssumptions(ctx context.Context, e *harness.Env, since time.Time, n int) (cost.Assumptions, float64, error) {
	time.Sleep(3 * time.Second) // the last invocations' REPORT lines
	fn, logs := lambda.NewFromConfig(e.AWS), cloudwatchlogs.NewFromConfig(e.AWS)
	a := cost.InitialAssumptions
	enq, err := pipeline.FunctionUsage(ctx, fn, logs, e.Out.EnqueueFunctionName, since)
	if err != nil {
		return a, 0, err
	}
	del, err := pipeline.FunctionUsage(ctx, fn, logs, e.Out.DeliverFunctionName, since)
	if err != nil {
		return a, 0, err
	}
	if enq.Invocations > 0 && del.Invocations > 0 {
		a.RecordsPerEnqueueInvocation = float64(n) / float64(enq.Invocations)
		a.EnqueueDurationMS = float64(enq.MeanDuration().Microseconds()) / 1000
		a.DeliverBatchSize = float64(n) / float64(del.Invocations)
		a.DeliverOwnMS = float64(del.MeanDuration().Microseconds()) / 1000
		a.EnqueueLogBytes = float64(enq.OwnLogBytes) / float64(n)
		a.DeliveredLogBytes = float64(del.OwnLogBytes) / float64(n)
	}
	return a, float64(enq.OwnLogBytes + del.OwnLogBytes), nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
func x(v float64) string               { return fmt.Sprintf("%.2fx", v) }
func us(ns float64) string             { return fmt.Sprintf("%.1f µs", ns/1000) }
func num(v float64) string             { return fmt.Sprintf("%.0f", v) }
func mb(b int64) string                { return fmt.Sprintf("%.2f MB", float64(b)/1e6) }
func ms(d time.Duration) string        { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
