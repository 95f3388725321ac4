// Command demo runs hookline's main job against the stack deployed in the
// local cloud: receivers on 127.0.0.1 (one healthy, one flaky, one down, one
// that rejects), a handful of outbox events written the way a producer writes
// them, and a summary of what was delivered, retried and dead-lettered.
// `make demo` deploys the stack first.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// receiver is a demo webhook endpoint that verifies every signature.
type receiver struct {
	name     string
	behave   string
	answer   func(attempt int) int
	server   *httptest.Server
	verifier atomic.Pointer[signing.Verifier]
	hits     atomic.Int32
	verified atomic.Int32
}

func newReceiver(name, behave string, answer func(attempt int) int) *receiver {
	r := &receiver{name: name, behave: behave, answer: answer}
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if v := r.verifier.Load(); v != nil && v.VerifyRequest(req.Header, body) == nil {
			r.verified.Add(1)
		}
		r.hits.Add(1)
		attempt, _ := strconv.Atoi(req.Header.Get("X-Attempt"))
		w.WriteHeader(r.answer(attempt))
	}))
	return r
}

func run(ctx context.Context) error {
	e, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	out, cfg, db, baseURL := e.Out, e.AWS, e.DB, e.BaseURL
	st := store.New(db, out.StateTableName)

	var ledgerUp atomic.Bool
	receivers := []struct {
		name   string
		types  []string
		behave string
		answer func(attempt int) int
	}{
		{"orders", []string{"order.*"}, "answers 200", func(int) int { return 200 }},
		{"payments", []string{"payment.*"}, "fails attempts 1-2 (503), then 200", func(attempt int) int {
			if attempt <= 2 {
				return 503
			}
			return 200
		}},
		{"ledger", []string{"payment.succeeded"}, "is down (500) until it comes back", func(int) int {
			if ledgerUp.Load() {
				return 200
			}
			return 500
		}},
		{"legacy", []string{"invoice.*"}, "rejects the request (400)", func(int) int { return 400 }},
	}
	fmt.Printf("hookline demo, through the HTTP API at %s\n", baseURL)
	tenant, keyID, client, err := e.Tenant(ctx, "acme", "Acme demo")
	if err != nil {
		return err
	}
	fmt.Printf("  operator created tenant %s and API key %s\n", tenant, keyID)
	byEndpoint := map[string]*receiver{}
	endpointTypes := map[string][]string{}
	for _, r := range receivers {
		rc := newReceiver(r.name, r.behave, r.answer)
		defer rc.server.Close()
		var ep api.EndpointView
		if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]any{
			"url": rc.server.URL + "/webhooks/" + r.name, "description": r.name, "event_types": r.types,
		}, &ep); err != nil {
			return fmt.Errorf("create endpoint %s: %w", r.name, err)
		}
		v, err := signing.NewVerifier(ep.Secret)
		if err != nil {
			return err
		}
		rc.verifier.Store(v)
		byEndpoint[ep.ID] = rc
		endpointTypes[ep.ID] = r.types
		fmt.Printf("  endpoint %-9s %s  %-34s subscribes to %-18s %s\n", r.name, ep.ID, rc.server.URL, strings.Join(r.types, ","), r.behave)
	}

	events := []outbox.Event{
		{ID: "order_1001", Type: "order.created", Payload: json.RawMessage(`{"order":1001,"total":"42.00"}`)},
		{ID: "order_1002", Type: "order.shipped", Payload: json.RawMessage(`{"order":1002,"carrier":"DHL"}`)},
		{ID: "pay_2001", Type: "payment.succeeded", Payload: json.RawMessage(`{"payment":2001,"amount":4200}`)},
		{ID: "pay_2002", Type: "payment.refunded", Payload: json.RawMessage(`{"payment":2002,"amount":1500}`)},
		{ID: "inv_3001", Type: "invoice.paid", Payload: json.RawMessage(`{"invoice":3001}`)},
	}
	fmt.Printf("\nwriting %d events to the outbox (TransactWriteItems), and one malformed item\n", len(events))
	for i := range events {
		events[i].ID = tenant + "_" + events[i].ID
		events[i].TenantID, events[i].OccurredAt = tenant, time.Now().UTC()
		put, err := outbox.TransactPut(out.OutboxTableName, events[i])
		if err != nil {
			return err
		}
		if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}}); err != nil {
			return fmt.Errorf("write %s: %w", events[i].ID, err)
		}
	}
	badID := tenant + "_broken_item"
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &out.OutboxTableName, Item: map[string]types.AttributeValue{
		outbox.AttrID: &types.AttributeValueMemberS{Value: badID}, outbox.AttrTenantID: &types.AttributeValueMemberS{Value: tenant},
		outbox.AttrType: &types.AttributeValueMemberS{Value: "order.created"}, outbox.AttrPayload: &types.AttributeValueMemberS{Value: "{not json"},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}}); err != nil {
		return err
	}

	// Every (event, endpoint) pair the filters select.
	type pair struct {
		event, endpoint string
		at              time.Time
	}
	var pairs []pair
	for _, ev := range events {
		for id, types := range endpointTypes {
			if (domain.Endpoint{EventTypes: types}).Accepts(ev.Type) {
				pairs = append(pairs, pair{ev.ID, id, ev.OccurredAt})
			}
		}
	}
	fmt.Printf("waiting for %d deliveries to reach a final state (retry schedule: %d attempts)\n", len(pairs), out.MaxReceiveCount)
	final := map[pair]domain.Delivery{}
	deadline := time.Now().Add(90 * time.Second)
	for len(final) < len(pairs) && time.Now().Before(deadline) {
		for _, p := range pairs {
			if _, done := final[p]; done {
				continue
			}
			d, err := st.Delivery(ctx, domain.DeliveryID(tenant, p.event, p.endpoint, p.at))
			// Dead from just before the last attempt (so that a stop during it
			// leaves the death recorded): final once that attempt is recorded.
			lastInFlight := d.State == domain.StateDead && d.DeadReason == domain.ReasonAttemptsExhausted && d.Attempts < out.MaxReceiveCount
			if err == nil && d.State != domain.StatePending && !lastInFlight {
				final[p] = d
				fmt.Printf("  %-9s %-11s -> %-9s after %d attempt(s)\n", d.State, strings.TrimPrefix(p.event, tenant+"_"), byEndpoint[p.endpoint].name, d.Attempts)
			} else if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		time.Sleep(500 * time.Millisecond)
	}

	fmt.Println("\nsummary")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  EVENT\tENDPOINT\tSTATE\tATTEMPTS\tLAST\tDEAD REASON")
	var delivered, retried, dead, pending int
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].event+pairs[i].endpoint < pairs[j].event+pairs[j].endpoint })
	for _, p := range pairs {
		d, ok := final[p]
		if !ok {
			pending++
			fmt.Fprintf(tw, "  %s\t%s\tstill pending\t\t\t\n", strings.TrimPrefix(p.event, tenant+"_"), byEndpoint[p.endpoint].name)
			continue
		}
		last := d.LastError
		if last == "" {
			last = fmt.Sprint(d.LastStatus)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\n", strings.TrimPrefix(p.event, tenant+"_"), byEndpoint[p.endpoint].name, d.State, d.Attempts, last, d.DeadReason)
		switch {
		case d.State == domain.StateDelivered:
			delivered++
		case d.State == domain.StateDead:
			dead++
		}
		if d.Attempts > 1 {
			retried++
		}
	}
	tw.Flush()

	var verified, hits int32
	for _, r := range byEndpoint {
		verified += r.verified.Load()
		hits += r.hits.Load()
	}
	fmt.Printf("\n  delivered %d, dead-lettered %d, retried %d, still pending %d\n", delivered, dead, retried, pending)
	fmt.Printf("  %d requests received, %d with a valid Standard Webhooks signature\n", hits, verified)
	if r, err := st.Rejection(ctx, badID); err == nil {
		fmt.Printf("  malformed outbox item rejected: %s (%s: %s)\n", strings.TrimPrefix(r.Key, tenant+"_"), r.Reason, r.Detail)
	} else {
		fmt.Printf("  malformed outbox item: not recorded yet (%v)\n", err)
	}
	if depth, err := dlqDepth(ctx, sqs.NewFromConfig(cfg), out.DeadLetterQueueURL); err == nil {
		fmt.Printf("  dead-letter queue depth (all tenants, this stack): %s\n", depth)
	}

	replayed, err := replayLedger(ctx, client, st, byEndpoint, &ledgerUp)
	if err != nil {
		return err
	}
	if err := printConsole(ctx, e, tenant); err != nil {
		return err
	}
	fmt.Println("\nThe local cloud is still running: `make local-down` stops it.")
	if pending > 0 || hits != verified || !replayed {
		return fmt.Errorf("%d deliveries never reached a final state, %d requests failed verification", pending, hits-verified)
	}
	return nil
}

func dlqDepth(ctx context.Context, c *sqs.Client, url string) (string, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		return "", err
	}
	return out.Attributes["ApproximateNumberOfMessages"], nil
}

// replayLedger brings the ledger receiver back and replays its dead
// deliveries through the API, showing that the idempotency key is kept.
func replayLedger(ctx context.Context, client *apiclient.Client, st *store.Store, byEndpoint map[string]*receiver, up *atomic.Bool) (bool, error) {
	var ledger string
	for id, r := range byEndpoint {
		if r.name == "ledger" {
			ledger = id
		}
	}
	var dead struct {
		Data []api.DeadLetterView `json:"data"`
	}
	if err := client.Do(ctx, "GET", "/v1/dlq?endpoint_id="+ledger, nil, &dead); err != nil {
		return false, fmt.Errorf("list the DLQ: %w", err)
	}
	fmt.Printf("\nthe ledger receiver comes back; GET /v1/dlq?endpoint_id=%s lists %d dead deliveries\n", ledger, len(dead.Data))
	up.Store(true)
	var job api.JobView
	if err := client.Do(ctx, "POST", "/v1/dlq/replay", map[string]string{"endpoint_id": ledger}, &job); err != nil {
		return false, fmt.Errorf("start the replay: %w", err)
	}
	fmt.Printf("  POST /v1/dlq/replay {\"endpoint_id\":%q} -> job %s (%s)\n", ledger, job.ID, job.Status)
	deadline := time.Now().Add(60 * time.Second)
	for job.Status != domain.StatusCompleted && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		if err := client.Do(ctx, "GET", "/v1/replays/"+job.ID, nil, &job); err != nil {
			return false, err
		}
	}
	fmt.Printf("  job %s: matched %d, replayed %d, skipped %v\n", job.Status, job.Matched, job.Replayed, job.Skipped)
	ok := job.Status == domain.StatusCompleted
	for _, d := range dead.Data {
		var got domain.Delivery
		for time.Now().Before(deadline) {
			if got, _ = st.Delivery(ctx, d.ID); got.State == domain.StateDelivered {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		fmt.Printf("  %s (webhook-id %s): %s after %d attempts in all, replayed at %s\n", d.EventID, d.ID, got.State, got.Attempts,
			got.ReplayedAt.Format(time.TimeOnly))
		ok = ok && got.State == domain.StateDelivered
	}
	return ok, nil
}

// printConsole prints the console's address, a portal link (a sign-in link
// for the demo tenant, valid an hour, with the scopes that let its console
// manage endpoints and rotate secrets as well as read and replay) minted
// through the API, and how the operator signs in.
func printConsole(ctx context.Context, e *harness.Env, tenant string) error {
	var link api.PortalLinkView
	mint := map[string]any{"ttl_seconds": 3600, "scopes": []domain.Scope{domain.ScopeEndpointsWrite, domain.ScopeSecretsRotate}}
	if err := e.Operator.Do(ctx, "POST", "/v1/admin/tenants/"+tenant+"/portal-links", mint, &link); err != nil {
		return fmt.Errorf("mint a portal link: %w", err)
	}
	fmt.Println("\nconsole")
	fmt.Printf("  console:          %s/console/\n", e.BaseURL)
	fmt.Printf("  tenant sign-in:   %s\n", link.URL)
	fmt.Printf("                    (portal link %s for %s, valid until %s, scopes %s)\n", link.ID, tenant, link.ExpiresAt.Format(time.RFC3339), strings.Join(link.Scopes, ", "))
	fmt.Printf("  operator console: %s/console/ (sign in with the operator key: aws secretsmanager get-secret-value --secret-id %s --query SecretString --output text)\n",
		e.BaseURL, e.Out.OperatorKeySecretARN)
	return nil
}
