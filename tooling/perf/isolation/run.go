package isolation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

// Defaults of Config.
const (
	QuietEventsDefault   = 40
	QuietIntervalDefault = 250 * time.Millisecond // 4 events a second
	BacklogDefault       = 300
	SlowDelayDefault     = 2500 * time.Millisecond
	HangDefault          = 5 * time.Second
	QuietWaitDefault     = 3 * time.Minute
	DrainWaitDefault     = 3 * time.Minute
	CleanupWaitDefault   = time.Minute
)

// Config is the workload. Every zero field takes its default.
type Config struct {
	// QuietEvents is how many events the quiet tenant writes in each
	// situation. Default 40.
	QuietEvents int
	// QuietInterval is the time between two of its writes. Default 250 ms
	// (4 a second), so that they arrive while a backlog drains.
	QuietInterval time.Duration
	// Backlog is how many events the noisy tenant writes at once, just
	// before the quiet tenant's first. Default 300.
	Backlog int
	// SlowDelay is how long the slow endpoint takes to answer 200: just
	// under the local request timeout (3 s, scripts/deploy-local.sh).
	// Default 2.5 s.
	SlowDelay time.Duration
	// Hang is how long the hanging endpoint holds a request unless the
	// client goes first: past the request timeout. Default 5 s.
	Hang time.Duration
	// QuietWait bounds the wait for the quiet tenant's events after its last
	// write; those not received by then are counted missing. Default 3 min.
	QuietWait time.Duration
	// DrainWait bounds the wait, from the backlog's write, for every
	// delivery of the backlog to be delivered or dead. Default 3 min.
	DrainWait time.Duration
	// CleanupWait bounds the wait for a backlog cut short (its endpoint
	// deleted at DrainWait) to go dead. Default 1 min.
	CleanupWait time.Duration
	// Situations are the situations Run measures, in order; Alone first
	// (the others are measured against it). Default Alone, Slow, Hanging;
	// Abuse is the abuse section's.
	Situations []Situation
	// HostileEvents is how many events the HostileFilter tenant writes at
	// once, HostileEndpoints how many filtered endpoints it has, and
	// HostileDepth how deep its payload nests. Defaults 60, 5, and
	// HostileDepthDefault (2).
	HostileEvents, HostileEndpoints, HostileDepth int
	// CapBacklog is how many events the AtCaps tenant writes at once, each
	// to all of its endpoints. Default 20.
	CapBacklog int
	// Log receives progress lines. Default io.Discard.
	Log io.Writer
}

// Abuse is the abuse section's situations (issue 34).
var Abuse = []Situation{Alone, HostileFilter, AtCaps}

func (c Config) withDefaults() Config {
	or := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	if c.QuietEvents <= 0 {
		c.QuietEvents = QuietEventsDefault
	}
	if c.Backlog <= 0 {
		c.Backlog = BacklogDefault
	}
	c.QuietInterval = or(c.QuietInterval, QuietIntervalDefault)
	c.SlowDelay = or(c.SlowDelay, SlowDelayDefault)
	c.Hang = or(c.Hang, HangDefault)
	c.QuietWait = or(c.QuietWait, QuietWaitDefault)
	c.DrainWait = or(c.DrainWait, DrainWaitDefault)
	c.CleanupWait = or(c.CleanupWait, CleanupWaitDefault)
	if c.Log == nil {
		c.Log = io.Discard
	}
	if len(c.Situations) == 0 {
		c.Situations = []Situation{Alone, Slow, Hanging}
	}
	c.HostileEvents = cmp.Or(c.HostileEvents, HostileEventsDefault)
	c.HostileEndpoints = cmp.Or(c.HostileEndpoints, HostileEndpointsDefault)
	if c.HostileDepth <= 0 {
		c.HostileDepth = HostileDepthDefault
	}
	c.CapBacklog = cmp.Or(c.CapBacklog, CapBacklogDefault)
	return c
}

// Situation names what the quiet tenant runs beside.
type Situation string

// The situations, in the order Run measures them.
const (
	Alone   Situation = "alone"
	Slow    Situation = "slow"
	Hanging Situation = "hanging"
)

// Drain is what became of the noisy tenant's backlog.
type Drain struct {
	// Events is the backlog's size.
	Events int
	// Delivered is how many of its events its receiver answered 200 while
	// hookline waited; Dead how many are in its DLQ listing.
	Delivered, Dead int
	// Drained is true when every event was delivered or dead within
	// Config.DrainWait; Elapsed is the time from the backlog's write until
	// then, or until the wait gave up.
	Drained bool
	Elapsed time.Duration
	// Requests is how many requests its receiver got, MaxInFlight the most
	// it held at once.
	Requests, MaxInFlight int
	// Disabled is whether the endpoint was disabled when the drain ended.
	Disabled bool
}

// Result is one situation's figures.
type Result struct {
	Situation Situation
	// Quiet is the quiet tenant's outbox-write-to-POST-received latencies.
	Quiet Sample
	// Noisy is the noisy tenant's backlog; zero when alone.
	Noisy Drain
}

// Run measures each situation in turn on the deployed stack e: alone, slow,
// hanging.
func Run(ctx context.Context, e *harness.Env, cfg Config) ([]Result, error) {
	cfg = cfg.withDefaults()
	quiet, err := pipeline.NewReceiver()
	if err != nil {
		return nil, err
	}
	defer quiet.Close()
	if err := warm(ctx, e, quiet); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	var out []Result
	for _, s := range cfg.Situations {
		fmt.Fprintf(cfg.Log, "isolation: %s: %d quiet events, one every %s", s, cfg.QuietEvents, cfg.QuietInterval)
		if s == Slow || s == Hanging {
			fmt.Fprintf(cfg.Log, ", beside a backlog of %d", cfg.Backlog)
		}
		fmt.Fprintln(cfg.Log)
		r, err := situation(ctx, e, cfg, quiet, s)
		if err != nil {
			return out, fmt.Errorf("%s: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// warm sends one event through the pipeline, so that no situation pays for
// functions starting or mappings waking up.
func warm(ctx context.Context, e *harness.Env, rcv *pipeline.Receiver) error {
	tenant, _, client, err := e.Tenant(ctx, "isowarm", "isolation warm-up")
	if err != nil {
		return err
	}
	if _, err := endpoint(ctx, client, rcv.URL+"/warm"); err != nil {
		return err
	}
	id := tenant + "_warm"
	if err := (pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant}).Write(ctx, []string{id}); err != nil {
		return err
	}
	_, err = rcv.WaitAll(ctx, []string{id}, 90*time.Second)
	return err
}

func endpoint(ctx context.Context, c *apiclient.Client, url string) (string, error) {
	var ep api.EndpointView
	if err := c.Do(ctx, "POST", "/v1/endpoints", map[string]string{"url": url}, &ep); err != nil {
		return "", fmt.Errorf("create endpoint: %w", err)
	}
	return ep.ID, nil
}

// noisyTenant is the noisy side of a situation.
type noisyTenant struct {
	rcv         *Noisy
	client      *apiclient.Client
	endpointID  string
	endpointIDs []string // the abuse situations' endpoints
	ids         []string
	writtenAt   time.Time
}

func situation(ctx context.Context, e *harness.Env, cfg Config, quiet *pipeline.Receiver, s Situation) (Result, error) {
	res := Result{Situation: s}
	quietTenant, _, quietClient, err := e.Tenant(ctx, "isoquiet", "isolation quiet "+string(s))
	if err != nil {
		return res, err
	}
	if _, err := endpoint(ctx, quietClient, quiet.URL+"/quiet"); err != nil {
		return res, err
	}

	var noisy *noisyTenant
	switch s {
	case Slow, Hanging:
		delay := cfg.SlowDelay
		if s == Hanging {
			delay = cfg.Hang
		}
		rcv, err := NewNoisy(delay)
		if err != nil {
			return res, err
		}
		defer rcv.Close()
		tenant, _, client, err := e.Tenant(ctx, "isonoisy", "isolation noisy "+string(s))
		if err != nil {
			return res, err
		}
		epID, err := endpoint(ctx, client, rcv.URL+"/noisy")
		if err != nil {
			return res, err
		}
		noisy = &noisyTenant{rcv: rcv, client: client, endpointID: epID}
		for i := range cfg.Backlog {
			noisy.ids = append(noisy.ids, fmt.Sprintf("%s_backlog_%04d", tenant, i))
		}
		noisy.writtenAt = time.Now()
		if err := (pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant}).Write(ctx, noisy.ids); err != nil {
			return res, fmt.Errorf("backlog: %w", err)
		}
	case HostileFilter, AtCaps:
		delay := time.Duration(0) // the hostile tenant's receiver answers at once
		if s == AtCaps {
			delay = cfg.Hang // none of the capped tenant's endpoints answers
		}
		rcv, err := NewNoisy(delay)
		if err != nil {
			return res, err
		}
		defer rcv.Close()
		setup := setupHostile
		if s == AtCaps {
			setup = setupAtCaps
		}
		if noisy, err = setup(ctx, e, cfg, rcv); err != nil {
			return res, err
		}
	}

	// The quiet tenant's events, paced, each timed from just before its write.
	w := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: quietTenant}
	ids := make([]string, cfg.QuietEvents)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s_quiet_%04d", quietTenant, i)
	}
	start, err := pipeline.WritePaced(ctx, w, ids, cfg.QuietInterval)
	if err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		return res, fmt.Errorf("quiet write: %w", err)
	}
	got, err := quiet.WaitAll(ctx, ids, cfg.QuietWait)
	if err != nil && ctx.Err() != nil {
		return res, err
	}
	for _, id := range ids {
		if at, ok := got[id]; ok {
			res.Quiet.Got = append(res.Quiet.Got, at.Sub(start[id]))
		} else {
			res.Quiet.Missing++
		}
	}
	var slowest []string
	for i, d := range res.Quiet.Got {
		if d > 2*cfg.QuietInterval {
			slowest = append(slowest, fmt.Sprintf("#%d %s", i, d.Round(time.Millisecond)))
		}
	}
	if len(slowest) > 0 {
		fmt.Fprintf(cfg.Log, "isolation: %s: quiet events slower than %s: %v\n", s, 2*cfg.QuietInterval, slowest)
	}
	ms := make([]string, len(res.Quiet.Got))
	for i, d := range res.Quiet.Got {
		ms[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	fmt.Fprintf(cfg.Log, "isolation: %s: each quiet event's latency in ms, in the order written: %s\n", s, strings.Join(ms, " "))
	if res.Quiet.Missing > 0 {
		fmt.Fprintf(cfg.Log, "isolation: %s: %d of %d quiet events not received %s after the last write\n", s, res.Quiet.Missing, len(ids), cfg.QuietWait)
	}
	switch s {
	case Alone:
		return res, nil
	case HostileFilter:
		// Its events mostly match no endpoint; what counts is the quiet
		// tenant's latency beside them and that the receiver got what it did.
		res.Noisy = Drain{Events: len(noisy.ids), Delivered: len(noisy.rcv.Answered()), Drained: true,
			Elapsed: time.Since(noisy.writtenAt), Requests: noisy.rcv.Requests(), MaxInFlight: noisy.rcv.MaxInFlight()}
		return res, deleteEndpoints(ctx, noisy.client, noisy.endpointIDs)
	case AtCaps:
		res.Noisy, err = noisy.abuseDrain(ctx, cfg)
		return res, err
	}
	res.Noisy, err = noisy.drain(ctx, cfg, s)
	return res, err
}

// drain waits until every event of the backlog is delivered or dead, up to
// Config.DrainWait from its write; past that it deletes the endpoint, so
// that what is left goes dead (endpoint_not_found) instead of weighing on
// the next situation, and waits up to Config.CleanupWait for that.
func (n *noisyTenant) drain(ctx context.Context, cfg Config, s Situation) (Drain, error) {
	d := Drain{Events: len(n.ids)}
	done := func() (bool, error) {
		dead, err := harness.ListDead(ctx, n.client)
		if err != nil {
			return false, err
		}
		answered := n.rcv.Answered()
		deadIDs := map[string]bool{}
		for _, v := range dead {
			deadIDs[v.EventID] = true
		}
		d.Delivered, d.Dead = 0, 0
		left := 0
		for _, id := range n.ids {
			switch {
			case answered[id]:
				d.Delivered++
			case deadIDs[id]:
				d.Dead++
			default:
				left++
			}
		}
		return left == 0, nil
	}
	wait := func(until time.Time) (bool, error) {
		for {
			ok, err := done()
			if err != nil || ok {
				return ok, err
			}
			if time.Now().After(until) {
				return false, nil
			}
			if err := pipeline.SleepUntil(ctx, time.Now().Add(3*time.Second)); err != nil {
				return false, err
			}
		}
	}
	// The endpoint's state before any cleanup: whether hookline disabled it.
	state := func() error {
		var ep api.EndpointView
		if err := n.client.Do(ctx, "GET", "/v1/endpoints/"+n.endpointID, nil, &ep); err != nil {
			return err
		}
		d.Disabled = ep.Disabled
		return nil
	}
	ok, err := wait(n.writtenAt.Add(cfg.DrainWait))
	if err != nil {
		return d, err
	}
	d.Drained, d.Elapsed = ok, time.Since(n.writtenAt)
	d.Requests, d.MaxInFlight = n.rcv.Requests(), n.rcv.MaxInFlight()
	if err := state(); err != nil {
		return d, err
	}
	fmt.Fprintf(cfg.Log, "isolation: %s: backlog %d delivered, %d dead, drained %v after %s; %d requests, at most %d at once; endpoint disabled %v\n",
		s, d.Delivered, d.Dead, d.Drained, d.Elapsed.Round(time.Second), d.Requests, d.MaxInFlight, d.Disabled)
	if ok {
		return d, nil
	}
	// Cut it short.
	var notFound *api.Problem
	if err := n.client.Do(ctx, "DELETE", "/v1/endpoints/"+n.endpointID, nil, nil); err != nil && !(errors.As(err, &notFound) && notFound.Status == 404) {
		return d, fmt.Errorf("delete the noisy endpoint: %w", err)
	}
	before := d
	cleaned, err := wait(time.Now().Add(cfg.CleanupWait))
	if err != nil {
		return before, err
	}
	fmt.Fprintf(cfg.Log, "isolation: %s: endpoint deleted; the rest gone dead within %s: %v (%d delivered, %d dead)\n", s, cfg.CleanupWait, cleaned, d.Delivered, d.Dead)
	return before, nil
}
