// Package apiabuse measures how much one tenant flooding the API's
// expensive routes delays another tenant's API requests and the
// operator's (docs/performance.md, "API abuse"; DESIGN.md's tenant
// bounds).
//
// A quiet tenant makes paced requests of a route (GET /v1/endpoints by
// default) and the operator of GET /v1/admin/stats; their latencies are
// taken in two situations, alternated in rounds in the same run so that a
// change in the machine's load falls on both:
//
//   - alone: the quiet tenant and the operator only (the baseline);
//   - beside the flood: while a noisy tenant's Flood goroutines send the
//     expensive routes (metrics grouped by event type, the event and
//     delivery listings, the DLQ, JWKS) back to back, without pause and
//     without honouring Retry-After, as a hostile client does.
//
// A quiet request that does not answer 2xx counts as missing (a lost
// request: the percentile it falls on is "not answered"). The noisy
// tenant's answers are counted by status (its 429s are the limit at
// work). Bounded: Requests per side in Rounds, each request at most
// RequestTimeout, the flood stopped when a round's quiet requests are
// done. The package reports figures; it asserts nothing.
package apiabuse

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookline/hookline/tooling/perf/isolation"
)

// Defaults of Config.
const (
	RequestsDefault = 100
	RoundsDefault   = 4
	FloodDefault    = 40
	PaceDefault     = 250 * time.Millisecond
	TimeoutDefault  = 30 * time.Second
)

// FloodRoutes are the expensive routes the noisy tenant sends, in turn.
var FloodRoutes = []string{
	"/v1/metrics/attempts?group_by=event_type",
	"/v1/events?limit=100",
	"/v1/deliveries?limit=100",
	"/v1/dlq?limit=100",
	"/v1/jwks.json",
	"/v1/endpoints?limit=100",
}

// Config is one run's parameters; the zero value is the defaults.
type Config struct {
	// BaseURL is the API's URL; QuietKey, NoisyKey and OperatorKey the
	// credentials of the quiet tenant, the flooding one and the operator
	// ("" for no operator sample).
	BaseURL, QuietKey, NoisyKey, OperatorKey string
	// QuietRoute is what the quiet tenant requests. Default
	// "/v1/endpoints".
	QuietRoute string
	// Requests is the quiet tenant's requests per situation (default
	// RequestsDefault, 100), in Rounds blocks (default 4) alternating
	// alone and beside.
	Requests, Rounds int
	// Flood is how many of the noisy tenant's requests are in flight at
	// once (default 40, twice the api function's reserved executions).
	Flood int
	// Pace is the quiet tenant's interval between requests (default 250
	// ms: 4 a second, under the default limit of 5, so that the quiet
	// tenant never meets its own).
	Pace time.Duration
	// RequestTimeout bounds each request (default 30 s, API Gateway's).
	RequestTimeout time.Duration
	// HTTP is the client (default one with RequestTimeout and enough idle
	// connections for the flood).
	HTTP *http.Client
}

func (c Config) withDefaults() Config {
	c.QuietRoute = cmp.Or(c.QuietRoute, "/v1/endpoints")
	c.Requests = cmp.Or(c.Requests, RequestsDefault)
	c.Rounds = cmp.Or(c.Rounds, RoundsDefault)
	c.Flood = cmp.Or(c.Flood, FloodDefault)
	c.Pace = cmp.Or(c.Pace, PaceDefault)
	c.RequestTimeout = cmp.Or(c.RequestTimeout, TimeoutDefault)
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: c.RequestTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: c.Flood + 4}}
	}
	return c
}

// Result is what a run measured.
type Result struct {
	// Quiet and Operator are the quiet tenant's and the operator's
	// latencies, alone and beside the flood.
	QuietAlone, QuietBeside       isolation.Sample
	OperatorAlone, OperatorBeside isolation.Sample
	// Noisy counts the flooding tenant's answers by status (0: no answer).
	Noisy map[int]int
}

// Run measures, alternating Rounds blocks of each situation.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	res := Result{Noisy: map[int]int{}}
	block := max(cfg.Requests/cfg.Rounds, 1)
	for range cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		q, o := sample(ctx, cfg, block)
		res.QuietAlone.Got, res.QuietAlone.Missing = append(res.QuietAlone.Got, q.Got...), res.QuietAlone.Missing+q.Missing
		res.OperatorAlone.Got, res.OperatorAlone.Missing = append(res.OperatorAlone.Got, o.Got...), res.OperatorAlone.Missing+o.Missing

		stop := make(chan struct{})
		counts, done := flood(ctx, cfg, stop)
		q, o = sample(ctx, cfg, block)
		close(stop)
		<-done
		res.QuietBeside.Got, res.QuietBeside.Missing = append(res.QuietBeside.Got, q.Got...), res.QuietBeside.Missing+q.Missing
		res.OperatorBeside.Got, res.OperatorBeside.Missing = append(res.OperatorBeside.Got, o.Got...), res.OperatorBeside.Missing+o.Missing
		for status, n := range counts.snapshot() {
			res.Noisy[status] += n
		}
	}
	return res, nil
}

// sample takes n paced requests of the quiet tenant and, beside each, one
// of the operator's (when there is an operator key).
func sample(ctx context.Context, cfg Config, n int) (quiet, operator isolation.Sample) {
	for i := range n {
		if i > 0 {
			select {
			case <-ctx.Done():
				quiet.Missing += n - i
				return quiet, operator
			case <-time.After(cfg.Pace):
			}
		}
		if d, ok := timed(ctx, cfg, cfg.QuietRoute, cfg.QuietKey); ok {
			quiet.Got = append(quiet.Got, d)
		} else {
			quiet.Missing++
		}
		if cfg.OperatorKey == "" {
			continue
		}
		if d, ok := timed(ctx, cfg, "/v1/admin/stats", cfg.OperatorKey); ok {
			operator.Got = append(operator.Got, d)
		} else {
			operator.Missing++
		}
	}
	return quiet, operator
}

// timed sends one GET and reports its latency, ok when it answered 2xx.
func timed(ctx context.Context, cfg Config, path, key string) (time.Duration, bool) {
	start := time.Now()
	status, err := get(ctx, cfg, path, key)
	return time.Since(start), err == nil && status/100 == 2
}

func get(ctx context.Context, cfg Config, path, key string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", cfg.BaseURL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := cfg.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

// statusCounts counts answers by status.
type statusCounts struct {
	mu sync.Mutex
	m  map[int]int
}

func (c *statusCounts) add(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[status]++
}

func (c *statusCounts) snapshot() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// flood runs cfg.Flood goroutines sending FloodRoutes in turn with the
// noisy key, back to back, until stop is closed; done is closed when they
// have all returned.
func flood(ctx context.Context, cfg Config, stop <-chan struct{}) (*statusCounts, <-chan struct{}) {
	counts := &statusCounts{m: map[int]int{}}
	done := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range cfg.Flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				route := FloodRoutes[int(next.Add(1))%len(FloodRoutes)]
				status, err := get(ctx, cfg, route, cfg.NoisyKey)
				if err != nil {
					status = 0
				}
				counts.add(status)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return counts, done
}

// Describe is one line of a run's noisy counts, for a report.
func (r Result) Describe() string {
	total := 0
	for _, n := range r.Noisy {
		total += n
	}
	return fmt.Sprintf("%d flood requests: %d answered 2xx, %d refused 429, %d 503 (over its budget, or throttled), %d other",
		total, r.count(func(s int) bool { return s/100 == 2 }), r.Noisy[http.StatusTooManyRequests], r.Noisy[http.StatusServiceUnavailable],
		r.count(func(s int) bool {
			return s/100 != 2 && s != http.StatusTooManyRequests && s != http.StatusServiceUnavailable
		}))
}

func (r Result) count(match func(int) bool) int {
	n := 0
	for s, c := range r.Noisy {
		if match(s) {
			n += c
		}
	}
	return n
}
