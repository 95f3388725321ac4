package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/isolation"
)

// isolationTarget is the most a quiet tenant's percentile may grow beside a
// troubled endpoint, as a multiple of the same percentile alone (DESIGN.md,
// "Isolation").
const isolationTarget = 2.0

// abuseTarget is the most a quiet tenant's p95 may grow beside a tenant
// sending the worst the API accepts (issue 34).
const abuseTarget = 1.5

// isolationRows runs the isolation section (package isolation) and returns
// its rows: the quiet tenant's p50 and p95 alone, then beside the slow and
// the hanging endpoint against alone, and what became of each backlog.
func isolationRows(ctx context.Context, cfg isolation.Config) ([]row, error) {
	area, target := "isolation", isolationTarget
	if len(cfg.Situations) > 0 && cfg.Situations[len(cfg.Situations)-1] == isolation.AtCaps {
		area, target = "abuse", abuseTarget
	}
	e, err := harness.Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Log = os.Stderr
	start := time.Now()
	res, err := isolation.Run(ctx, e, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s: section took %s\n", area, time.Since(start).Round(time.Second))
	var alone isolation.Sample
	for _, r := range res {
		if r.Situation == isolation.Alone {
			alone = r.Quiet
		}
	}
	beside := map[isolation.Situation]string{
		isolation.Slow:          "beside a slow endpoint",
		isolation.Hanging:       "beside a hanging endpoint",
		isolation.HostileFilter: "beside the worst filter and payload",
		isolation.AtCaps:        "beside a tenant at every cap",
	}
	var rows []row
	for _, r := range res {
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", 0.50}, {"p95", 0.95}} {
			v, ok := r.Quiet.Percentile(q.q)
			if r.Situation == isolation.Alone {
				rows = append(rows, row{area, fmt.Sprintf("quiet tenant %s alone (%d events)", q.name, r.Quiet.N()), pct(v, ok), "", "", "(baseline)"})
				continue
			}
			base, baseOK := alone.Percentile(q.q)
			ratioText := "—"
			if ok && baseOK {
				ratioText = x(ratio(v, base))
			} else if baseOK {
				ratioText = "> " + x(ratio(cmp.Or(cfg.QuietWait, isolation.QuietWaitDefault), base))
			}
			rows = append(rows, row{area, fmt.Sprintf("quiet tenant %s %s", q.name, beside[r.Situation]), pct(v, ok), pct(base, baseOK) + " alone", ratioText, fmt.Sprintf("≤ %.2fx", target)})
		}
		if r.Situation != isolation.Alone {
			n := r.Noisy
			drained := fmt.Sprintf("drained in %s", n.Elapsed.Round(time.Second))
			if !n.Drained {
				drained = fmt.Sprintf("not drained after %s", n.Elapsed.Round(time.Second))
			}
			rows = append(rows, row{area, fmt.Sprintf("the noisy backlog %s (%d events or deliveries)", beside[r.Situation], n.Events),
				fmt.Sprintf("%d delivered, %d dead, %s; endpoint disabled: %v", n.Delivered, n.Dead, drained, n.Disabled), "", "", "(info)"})
		}
	}
	return rows, nil
}

// pct prints a percentile, or that it fell on events never received.
func pct(d time.Duration, ok bool) string {
	if !ok {
		return "not received"
	}
	return ms(d)
}
