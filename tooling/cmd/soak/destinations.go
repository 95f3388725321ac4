package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
)

// destinations is the -destinations flag: the AWS destination types that
// get an endpoint each beside the HTTP receivers, all at one customer's
// account (harness.Customer).
var destinations string

// parseDestinations reads the -destinations flag.
func parseDestinations(s string) ([]domain.EndpointType, error) {
	var ts []domain.EndpointType
	for _, f := range strings.Split(s, ",") {
		switch t := domain.EndpointType(strings.TrimSpace(f)); t {
		case "":
		case domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge:
			ts = append(ts, t)
		default:
			return nil, fmt.Errorf("-destinations: %q is not sqs, sns or eventbridge", f)
		}
	}
	return ts, nil
}

// customerInboxes are the AWS destinations' endpoints: each one's receipts
// are read from the customer's account by a poller, into a chaotic without
// a server (the customer's queue, topic and bus do not fail at random; the
// deployment's injected faults and the kills still hit the functions).
type customerInboxes struct {
	customer *harness.Customer
	byType   map[domain.EndpointType]*chaotic
	wg       sync.WaitGroup
	stop     context.CancelFunc
}

// addDestinations creates an endpoint of each type in ts for the tenant
// behind client, trusts their external ids, and starts reading what
// arrives; the endpoints join receivers.
func addDestinations(ctx context.Context, e *harness.Env, client *apiclient.Client, ts []domain.EndpointType, receivers map[string]*chaotic) (*customerInboxes, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	cust, err := e.NewCustomer(ctx, fmt.Sprintf("soakcust-%d", time.Now().UnixNano()%1e9))
	if err != nil {
		return nil, err
	}
	in := &customerInboxes{customer: cust, byType: map[domain.EndpointType]*chaotic{}}
	var externalIDs []string
	for _, t := range ts {
		var ep struct {
			ID         string `json:"id"`
			Secret     string `json:"secret"`
			ExternalID string `json:"external_id"`
		}
		body := map[string]any{"type": t, "target": cust.Target(t), "role_arn": cust.RoleARN}
		if err := client.Do(ctx, "POST", "/v1/endpoints", body, &ep); err != nil {
			return nil, fmt.Errorf("create the %s endpoint: %w", t, err)
		}
		v, err := signing.NewVerifier(ep.Secret)
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", ep.ID, err)
		}
		c := &chaotic{faults: map[string]int{}}
		c.verifier.Store(v)
		receivers[ep.ID], in.byType[t] = c, c
		externalIDs = append(externalIDs, ep.ExternalID)
	}
	if err := cust.Trust(ctx, externalIDs...); err != nil {
		return nil, err
	}
	pollCtx, stop := context.WithCancel(ctx)
	in.stop = stop
	for t, c := range in.byType {
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			for pollCtx.Err() == nil {
				in.read(pollCtx, t, c, 2*time.Second)
			}
		}()
	}
	return in, nil
}

// read records what arrives for type t within wait, and how many came.
func (in *customerInboxes) read(ctx context.Context, t domain.EndpointType, c *chaotic, wait time.Duration) int {
	got, err := in.customer.Receive(ctx, t, 10, wait)
	if err != nil && ctx.Err() == nil {
		fmt.Printf("  %s inbox: %v\n", t, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range got {
		signed := c.verifier.Load().VerifyRequest(r.Header(), []byte(r.Body)) == nil
		c.faults["ok"]++
		c.receipts = append(c.receipts, receipt{webhookID: r.WebhookID, eventID: r.EventID, ok: true,
			at: time.Now(), attempt: r.Attempt, signed: signed})
	}
	return len(got)
}

// drain stops the pollers and reads each inbox until it stays empty, so
// every message sent before the tally is counted; then deletes the
// customer.
func (in *customerInboxes) drain(ctx context.Context) {
	if in == nil {
		return
	}
	in.stop()
	in.wg.Wait()
	for t, c := range in.byType {
		for empty := 0; empty < 2 && ctx.Err() == nil; {
			if in.read(ctx, t, c, 2*time.Second) == 0 {
				empty++
			} else {
				empty = 0
			}
		}
	}
	if err := in.customer.Delete(ctx); err != nil {
		fmt.Printf("  customer %s: delete: %v\n", in.customer.Name, err)
	}
}
