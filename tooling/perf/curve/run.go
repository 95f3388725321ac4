package curve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

// Defaults of Config.
const (
	EventsDefault    = 1000
	DelayDefault     = 50 * time.Millisecond
	BurstWaitDefault = 2 * time.Minute
	BudgetDefault    = 5 * time.Minute
)

// Config is the workload. Every zero field takes its default.
type Config struct {
	// Steps are the concurrencies, ascending (ParseSteps). Default
	// StepsDefault.
	Steps []int
	// Events is the burst of each side at each step. Default 1,000.
	Events int
	// Delay is how long the receiver takes to answer each POST, hookline's
	// and the floor's alike. Default 50 ms.
	Delay time.Duration
	// BurstWait bounds the wait for one burst. Default 2 min.
	BurstWait time.Duration
	// Budget bounds the whole section. Default 5 min.
	Budget time.Duration
	// FloorBootstrap is the floor function's binary (package
	// pipeline/floor, built for the local cloud). Required.
	FloorBootstrap string
	// Log receives progress lines. Default io.Discard.
	Log io.Writer
}

func (c Config) withDefaults() Config {
	if len(c.Steps) == 0 {
		c.Steps, _ = ParseSteps(StepsDefault)
	}
	c.Events = cmp.Or(c.Events, EventsDefault)
	c.Delay = cmp.Or(c.Delay, DelayDefault)
	c.BurstWait = cmp.Or(c.BurstWait, BurstWaitDefault)
	c.Budget = cmp.Or(c.Budget, BudgetDefault)
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// Run measures the curve on the deployed stack. Whatever it changed is
// set back before it returns, on failure too (a failure to set it back is
// part of the error).
func Run(ctx context.Context, e *harness.Env, cfg Config) (_ []Point, err error) {
	cfg = cfg.withDefaults()
	if cfg.FloorBootstrap == "" {
		return nil, errors.New("curve: no floor bootstrap")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Budget)
	defer cancel()
	fn, q := lambda.NewFromConfig(e.AWS), sqs.NewFromConfig(e.AWS)

	knob, err := deliverKnob(ctx, fn, e.Out.DeliverFunctionName, e.Out.DeliveryQueueURL, e.Out.LaneQueueURL)
	if err != nil {
		return nil, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if rerr := knob.restore(rctx); rerr != nil {
			err = errors.Join(err, fmt.Errorf("curve: setting the deliver mapping back: %w", rerr))
		} else {
			fmt.Fprintf(cfg.Log, "curve: deliver mapping set back (%s)\n", knob)
		}
	}()

	rcv, err := pipeline.NewReceiver()
	if err != nil {
		return nil, err
	}
	defer rcv.Close()
	rcv.SetDelay(cfg.Delay)
	tenant, _, client, err := e.Tenant(ctx, "curve", "curve")
	if err != nil {
		return nil, err
	}
	if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]string{"url": rcv.URL + "/hook"}, &api.EndpointView{}); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("hookline-curve-%d", time.Now().Unix())
	floor, err := pipeline.DeployFloor(ctx, e.AWS, name, cfg.FloorBootstrap, rcv.URL+"/floor")
	if err != nil {
		return nil, err
	}
	defer floor.Close(context.WithoutCancel(ctx))
	hook := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant}

	var points []Point
	for i, c := range cfg.Steps {
		if err := knob.set(ctx, c); err != nil {
			return points, err
		}
		if err := setMax(ctx, fn, floor.QueueMapping, c); err != nil {
			return points, fmt.Errorf("curve: the floor's mapping: %w", err)
		}
		// Warm both at this concurrency: one round of full batches, so that
		// the step's processes are started before the bursts.
		warm := c * BatchSize
		for _, s := range []struct {
			w      pipeline.Writer
			prefix string
		}{{floor, fmt.Sprintf("%s_c%d_warm", name, c)}, {hook, fmt.Sprintf("%s_c%d_warm", tenant, c)}} {
			if _, err := pipeline.Burst(ctx, rcv, s.w, s.prefix, warm, cfg.BurstWait); err != nil {
				return points, fmt.Errorf("curve: warming C=%d: %w", c, err)
			}
		}
		p := Point{Concurrency: c}
		floorBurst := func() (err error) {
			peak := watchDepth(ctx, q, floor.QueueURL)
			rcv.TakePeak()
			p.Floor, err = pipeline.Burst(ctx, rcv, floor, fmt.Sprintf("%s_c%d", name, c), cfg.Events, cfg.BurstWait)
			p.FloorQueuePeak, p.FloorInFlight = peak(), rcv.TakePeak()
			if err != nil {
				err = fmt.Errorf("curve: floor burst at C=%d: %w", c, err)
			}
			return err
		}
		hookBurst := func() (err error) {
			peak := watchDepth(ctx, q, e.Out.DeliverQueueURLs()...)
			rcv.TakePeak()
			p.Hookline, err = pipeline.Burst(ctx, rcv, hook, fmt.Sprintf("%s_c%d", tenant, c), cfg.Events, cfg.BurstWait)
			p.HooklineQueuePeak, p.HooklineInFlight = peak(), rcv.TakePeak()
			if err != nil {
				err = fmt.Errorf("curve: hookline burst at C=%d: %w", c, err)
			}
			return err
		}
		// Alternate which side goes first, so that neither always follows
		// the other's leftovers.
		first, second := floorBurst, hookBurst
		if i%2 == 1 {
			first, second = hookBurst, floorBurst
		}
		if err := first(); err != nil {
			return points, err
		}
		if err := second(); err != nil {
			return points, err
		}
		fmt.Fprintf(cfg.Log, "curve: C=%d: hookline %.0f/s (queue peak %d, in flight peak %d), floor %.0f/s (queue peak %d, in flight peak %d): %.2fx\n",
			c, p.Hookline.PerSecond(), p.HooklineQueuePeak, p.HooklineInFlight, p.Floor.PerSecond(), p.FloorQueuePeak, p.FloorInFlight, p.Ratio())
		points = append(points, p)
	}
	return points, nil
}

// knob is the deliver mapping's maximum concurrency and the deliver
// function's reserved concurrency, as found and as set.
type knob struct {
	fn          *lambda.Client
	function    string
	mapping     string
	origMax     *int32 // nil: the mapping had no ScalingConfig
	origReserve *int32 // nil: no reservation
	laneMax     int    // the tenant lane mapping's cap; 0: no lane
	raised      bool   // the reservation was changed
}

func (k *knob) String() string {
	show := func(v *int32) string {
		if v == nil {
			return "none"
		}
		return fmt.Sprint(*v)
	}
	return fmt.Sprintf("maximum concurrency %s, reserved %s", show(k.origMax), show(k.origReserve))
}

// deliverKnob finds the deliver function's mapping on the delivery queue.
func deliverKnob(ctx context.Context, fn *lambda.Client, function, queueURL, laneURL string) (*knob, error) {
	name := func(url string) string { return url[strings.LastIndex(url, "/")+1:] }
	queue, lane := name(queueURL), name(laneURL)
	out, err := fn.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: &function})
	if err != nil {
		return nil, fmt.Errorf("curve: the deliver mappings: %w", err)
	}
	k := &knob{fn: fn, function: function}
	for _, m := range out.EventSourceMappings {
		arn := aws.ToString(m.EventSourceArn)
		if strings.Contains(arn, ":sqs:") && strings.HasSuffix(arn, ":"+queue) {
			k.mapping = aws.ToString(m.UUID)
			if m.ScalingConfig != nil && m.ScalingConfig.MaximumConcurrency != nil {
				k.origMax = aws.Int32(*m.ScalingConfig.MaximumConcurrency)
			}
		}
		// The tenant lane's mapping runs the same function: the
		// reservation must cover both (the stack's rule).
		if lane != "" && strings.Contains(arn, ":sqs:") && strings.HasSuffix(arn, ":"+lane) &&
			m.ScalingConfig != nil && m.ScalingConfig.MaximumConcurrency != nil {
			k.laneMax = int(*m.ScalingConfig.MaximumConcurrency)
		}
	}
	if k.mapping == "" {
		return nil, fmt.Errorf("curve: no mapping of %s on the queue %s", function, queue)
	}
	rc, err := fn.GetFunctionConcurrency(ctx, &lambda.GetFunctionConcurrencyInput{FunctionName: &function})
	if err != nil {
		return nil, fmt.Errorf("curve: deliver's reserved concurrency: %w", err)
	}
	k.origReserve = rc.ReservedConcurrentExecutions
	return k, nil
}

// set gives the deliver mapping maximum concurrency c, raising the
// function's reservation to c + the lane mapping's cap + 1 (the stack's
// rule: above both mappings together) if it holds less.
func (k *knob) set(ctx context.Context, c int) error {
	if need := c + k.laneMax + 1; k.origReserve != nil && int(*k.origReserve) < need {
		if _, err := k.fn.PutFunctionConcurrency(ctx, &lambda.PutFunctionConcurrencyInput{FunctionName: &k.function, ReservedConcurrentExecutions: aws.Int32(int32(need))}); err != nil {
			return fmt.Errorf("curve: deliver's reserved concurrency to %d: %w", need, err)
		}
		k.raised = true
	}
	if err := setMax(ctx, k.fn, k.mapping, c); err != nil {
		return fmt.Errorf("curve: the deliver mapping: %w", err)
	}
	return nil
}

// restore sets back what set changed.
func (k *knob) restore(ctx context.Context) error {
	var errs []error
	sc := &lambdatypes.ScalingConfig{MaximumConcurrency: k.origMax}
	if _, err := k.fn.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: &k.mapping, ScalingConfig: sc}); err != nil {
		errs = append(errs, err)
	}
	if k.raised {
		if _, err := k.fn.PutFunctionConcurrency(ctx, &lambda.PutFunctionConcurrencyInput{FunctionName: &k.function, ReservedConcurrentExecutions: k.origReserve}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func setMax(ctx context.Context, fn *lambda.Client, mapping string, c int) error {
	_, err := fn.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: &mapping,
		ScalingConfig: &lambdatypes.ScalingConfig{MaximumConcurrency: aws.Int32(int32(c))}})
	return err
}

// watchDepth samples the visible messages of queues (summed: the
// delivery queue and the tenant lane) every 200 ms until the returned
// function is called, which returns the most it saw: a backlog in the
// queues says the SQS hop (deliver, or the floor's) is behind; none says
// the stream hop is what holds the burst back.
func watchDepth(ctx context.Context, q *sqs.Client, urls ...string) func() int {
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		most := 0
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			// A request is not cut short when the watch stops: it ends with
			// its answer, and the watch then returns.
			total, seen := 0, false
			for _, url := range urls {
				a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
					AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
				if err == nil {
					var n int
					fmt.Sscan(a.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)], &n)
					total, seen = total+n, true
				}
			}
			if seen {
				most = max(most, total)
			}
			select {
			case <-stop:
				done <- most
				return
			case <-ctx.Done():
				done <- most
				return
			case <-t.C:
			}
		}
	}()
	return func() int { close(stop); return <-done }
}
