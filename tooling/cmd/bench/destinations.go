package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/hookline/hookline/tooling/perf/pipeline"
)

// destinationKinds are the endpoint types the destinations section
// measures, HTTP first: its burst is the others' baseline.
var destinationKinds = []domain.EndpointType{domain.TypeHTTP, domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge}

// destinationResult is one type's burst and what its deliveries cost.
type destinationResult struct {
	burst        pipeline.BurstResult
	bodyBytes    float64 // the mean signed body, as received
	perMillion   float64 // hookline's account
	customerCost float64 // the customer's account
}

// destinationRows bursts n events at an endpoint of each type, one type
// after another (each its own tenant), and prints each type's throughput
// against the HTTP burst's and its cost per million: hookline's, from what
// the functions reported, and the customer's (cost.CustomerPerMillion).
func destinationRows(ctx context.Context, n int) ([]row, error) {
	e, err := harness.Load(ctx)
	if err != nil {
		return nil, err
	}
	cust, err := e.NewCustomer(ctx, fmt.Sprintf("benchcust-%d", time.Now().UnixNano()%1e9))
	if err != nil {
		return nil, err
	}
	defer cust.Delete(context.WithoutCancel(ctx))
	var rows []row
	var base destinationResult
	for _, t := range destinationKinds {
		fmt.Fprintf(os.Stderr, "bench: destinations: burst of %d events to a %s endpoint\n", n, t)
		r, err := destinationBurst(ctx, e, cust, t, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if t == domain.TypeHTTP {
			base = r
		}
		rows = append(rows,
			row{"destinations", fmt.Sprintf("%s: burst of %d events, written at once", t, n), fmt.Sprintf("%.0f deliveries/s", r.burst.PerSecond()),
				fmt.Sprintf("%.0f/s HTTP", base.burst.PerSecond()), x(ratio(r.burst.Elapsed, base.burst.Elapsed)) + " the time", "(info)"},
			row{"destinations", fmt.Sprintf("%s: AWS cost per million deliveries, hookline's account", t), fmt.Sprintf("$%.2f", r.perMillion),
				fmt.Sprintf("$%.2f HTTP", base.perMillion), x(r.perMillion / base.perMillion), "(info)"},
			row{"destinations", fmt.Sprintf("%s: the customer's cost per million (its queue, topic or bus; %.0f B bodies)", t, r.bodyBytes),
				fmt.Sprintf("$%.2f", r.customerCost), "", "", "(info)"})
	}
	return rows, nil
}

// destinationBurst writes n events for a new tenant with one endpoint of
// type t and waits until each has arrived: at a pipeline.Receiver for HTTP,
// in the customer's account for the others.
func destinationBurst(ctx context.Context, e *harness.Env, cust *harness.Customer, t domain.EndpointType, n int) (destinationResult, error) {
	tenant, _, client, err := e.Tenant(ctx, "benchdest", "bench destinations")
	if err != nil {
		return destinationResult{}, err
	}
	body := map[string]any{"type": t, "target": cust.Target(t), "role_arn": cust.RoleARN}
	var rcv *pipeline.Receiver
	if t == domain.TypeHTTP {
		if rcv, err = pipeline.NewReceiver(); err != nil {
			return destinationResult{}, err
		}
		defer rcv.Close()
		body = map[string]any{"url": rcv.URL + "/hook"}
	}
	var ep struct {
		ExternalID string `json:"external_id"`
	}
	if err := client.Do(ctx, "POST", "/v1/endpoints", body, &ep); err != nil {
		return destinationResult{}, err
	}
	if t != domain.TypeHTTP {
		if err := cust.Trust(ctx, ep.ExternalID); err != nil {
			return destinationResult{}, err
		}
	}
	w := pipeline.Outbox{DB: e.DB, Table: e.Out.OutboxTableName, TenantID: tenant}
	start := time.Now()
	var res destinationResult
	if rcv != nil {
		res.burst, err = pipeline.Burst(ctx, rcv, w, tenant+"_burst", n, 10*time.Minute)
		res.bodyBytes = float64(len(pipeline.Payload))
	} else {
		res, err = inboxBurst(ctx, cust, t, w, tenant+"_burst", n, 10*time.Minute)
	}
	if err != nil {
		return res, err
	}
	a, _, err := measuredAssumptions(ctx, e, start, n)
	if err != nil {
		return res, err
	}
	res.perMillion = cost.Estimate(cost.Default, a.ForType(t).Inputs()).Total
	res.customerCost = cost.CustomerPerMillion(cost.Default, t, res.bodyBytes)
	return res, nil
}

// inboxBurst writes n events and reads the customer's inbox of type t until
// each has arrived once, like pipeline.Burst for a receiver.
func inboxBurst(ctx context.Context, cust *harness.Customer, t domain.EndpointType, w pipeline.Writer, prefix string, n int, timeout time.Duration) (destinationResult, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s_%05d", prefix, i)
	}
	start := time.Now()
	if err := w.Write(ctx, ids); err != nil {
		return destinationResult{}, err
	}
	seen, bytes, last := map[string]bool{}, 0, start
	for deadline := start.Add(timeout); len(seen) < n; {
		if time.Now().After(deadline) {
			return destinationResult{}, fmt.Errorf("%d of %d not received after %s", n-len(seen), n, timeout)
		}
		got, err := cust.Receive(ctx, t, n-len(seen), 2*time.Second)
		if err != nil {
			return destinationResult{}, err
		}
		for _, r := range got {
			if !seen[r.EventID] {
				seen[r.EventID], bytes, last = true, bytes+len(r.Body), time.Now()
			}
		}
	}
	return destinationResult{burst: pipeline.BurstResult{N: n, Elapsed: last.Sub(start)}, bodyBytes: float64(bytes) / float64(n)}, nil
}
