package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/apiabuse"
	"github.com/hookline/hookline/tooling/perf/isolation"
)

// apiAbuseTarget is the most the quiet tenant's (and the operator's) API
// p95 may grow beside a tenant flooding the expensive routes, as a
// multiple of alone in the same run (issue 34, point 5).
const apiAbuseTarget = 1.5

// apiAbuseRows runs the API abuse section (package apiabuse) on the
// deployed stack: a quiet tenant's GET /v1/endpoints and the operator's
// GET /v1/admin/stats, alone and beside a tenant flooding the expensive
// routes, alternated in the same run; and what became of the flood.
func apiAbuseRows(ctx context.Context, cfg apiabuse.Config) ([]row, error) {
	e, err := harness.Load(ctx)
	if err != nil {
		return nil, err
	}
	_, _, quiet, err := e.Tenant(ctx, "benchquiet", "bench api quiet")
	if err != nil {
		return nil, err
	}
	_, _, noisy, err := e.Tenant(ctx, "benchflood", "bench api flood")
	if err != nil {
		return nil, err
	}
	cfg.BaseURL, cfg.QuietKey, cfg.NoisyKey, cfg.OperatorKey = e.BaseURL, quiet.Key, noisy.Key, e.Operator.Key
	start := time.Now()
	// Bounded: the quiet requests' count, each request's timeout, and
	// this deadline over the whole section.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	res, err := apiabuse.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "api abuse: section took %s; %s\n", time.Since(start).Round(time.Second), res.Describe())
	var rows []row
	for _, who := range []struct {
		name          string
		alone, beside isolation.Sample
	}{{"quiet tenant's GET /v1/endpoints", res.QuietAlone, res.QuietBeside}, {"operator's GET /v1/admin/stats", res.OperatorAlone, res.OperatorBeside}} {
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", 0.50}, {"p95", 0.95}} {
			base, baseOK := who.alone.Percentile(q.q)
			v, ok := who.beside.Percentile(q.q)
			ratioText := "—"
			if ok && baseOK {
				ratioText = x(ratio(v, base))
			}
			rows = append(rows, row{"api abuse", fmt.Sprintf("%s %s beside a tenant flooding expensive routes (%d requests, %d lost)", who.name, q.name, who.beside.N(), who.beside.Missing),
				pct(v, ok), pct(base, baseOK) + fmt.Sprintf(" alone (%d lost)", who.alone.Missing), ratioText, fmt.Sprintf("≤ %.2fx", apiAbuseTarget)})
		}
	}
	rows = append(rows, row{"api abuse", "the flood", res.Describe(), "", "", "(info)"})
	return rows, nil
}
