// Command upgrade is the upgrade test's helper (scripts/upgrade.sh, the
// first deploy of `make test`): it prints the chain of deploys the
// upgrade plan of docs/deploying.md gives through the earlier releases,
// writes data of every kind through an earlier release once it is
// deployed (the fixture the end-to-end test TestUpgradeKeptEverything
// checks after the upgrade), and waits until the tables' indexes are
// ACTIVE, as the documented steps do between two deploys.
//
//	go run ./tooling/cmd/upgrade plan -chain 52e80f2,c4d38bf,94033e1
//	go run ./tooling/cmd/upgrade write -release 52e80f2 [-context k=v,...]
//	go run ./tooling/cmd/upgrade wait-active
//	go run ./tooling/cmd/upgrade stack-exists
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/stackoutputs"
	"github.com/hookline/hookline/internal/upgradeplan"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/apiclient"
	"github.com/hookline/hookline/tooling/harness"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("want a command: plan, write, wait-active, stack-exists")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	chain := fs.String("chain", "52e80f2,c4d38bf,94033e1", "the earlier releases to upgrade through, oldest first")
	doc := fs.String("doc", "docs/deploying.md", "the document holding the upgrade plan")
	release := fs.String("release", "", "write: the release deployed")
	contextKey := fs.String("context", "", "write: the context it was deployed with (k=v,...)")
	stack := fs.String("stack", "Hookline", "stack-exists: the stack's name")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "plan":
		return printPlan(w, *doc, strings.Split(*chain, ","))
	case "write":
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		return write(ctx, *release, *contextKey)
	case "wait-active":
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		return waitActive(ctx, w)
	case "stack-exists":
		return stackExists(ctx, *stack)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// printPlan prints the chain's deploys, one a line: "release COMMIT
// [-c k=v ...]" for an earlier release, "checkout [-c k=v ...]" for this
// version. The last line is always "checkout" (the defaults).
func printPlan(w io.Writer, doc string, chain []string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	plan, err := upgradeplan.Parse(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	actions, err := upgradeplan.Chain(plan, chain...)
	if err != nil {
		return err
	}
	for _, a := range actions {
		line := []string{"checkout"}
		if a.Release != "" {
			line = []string{"release", a.Release}
		}
		fmt.Fprintln(w, strings.Join(append(line, a.Context.Args()...), " "))
	}
	return nil
}

// stackExists succeeds when the stack is deployed in the local cloud.
func stackExists(ctx context.Context, name string) error {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &name})
	if err != nil || len(out.Stacks) == 0 {
		return fmt.Errorf("stack %s is not deployed: %v", name, err)
	}
	return nil
}

// waitActive waits until every global secondary index of the outbox and
// the state table (.local/outputs.json) is ACTIVE and not backfilling:
// the documented check between two deploys (describe-table's IndexStatus).
func waitActive(ctx context.Context, w io.Writer) error {
	out, err := stackoutputs.Load(".local/outputs.json")
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	db := harness.DynamoDB(cfg)
	last := ""
	for {
		var waiting []string
		for _, table := range []string{out.OutboxTableName, out.StateTableName} {
			d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			if err != nil {
				return fmt.Errorf("describe %s: %w", table, err)
			}
			for _, g := range d.Table.GlobalSecondaryIndexes {
				// A cloud that reports no status (ministack 1.5.x applies an
				// index change at once) has nothing to wait for.
				if (g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive) || aws.ToBool(g.Backfilling) {
					waiting = append(waiting, fmt.Sprintf("%s/%s %s", table, aws.ToString(g.IndexName), g.IndexStatus))
				}
			}
		}
		if len(waiting) == 0 {
			fmt.Fprintln(w, "upgrade: every index ACTIVE")
			return nil
		}
		if msg := strings.Join(waiting, ", "); msg != last {
			fmt.Fprintln(w, "upgrade: waiting for", msg)
			last = msg
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("indexes not ACTIVE: %v", waiting)
		case <-time.After(2 * time.Second):
		}
	}
}

// write writes through the deployed release (.local/outputs.json): a
// tenant and its key, an endpoint whose receiver answers 200 and one
// whose receiver answers 400 (dead at once), three events to both (three
// delivered, three dead, endpoint stats counted), a replay job of one
// dead delivery (which dies again); then appends what it wrote to the
// fixture. Events written through a release before by_tenant_shard are
// written as its producers wrote them, without log_pk.
func write(ctx context.Context, release, contextKey string) error {
	if release == "" {
		return errors.New("write: -release is required")
	}
	env, err := harness.Load(ctx)
	if err != nil {
		return err
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	defer bad.Close()

	tenantID, _, client, err := env.Tenant(ctx, "upgrade_"+release, "written through "+release)
	if err != nil {
		return err
	}
	phase := harness.UpgradePhase{Release: release, Context: contextKey, TenantID: tenantID, APIKey: client.Key}
	for _, ep := range []struct {
		url string
		to  *harness.UpgradeEndpoint
	}{{ok.URL, &phase.OK}, {bad.URL, &phase.Dead}} {
		var v api.EndpointView
		if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]any{"url": ep.url + "/hook", "description": "upgrade " + release}, &v); err != nil {
			return fmt.Errorf("create endpoint: %w", err)
		}
		*ep.to = harness.UpgradeEndpoint{ID: v.ID, Secret: v.Secret}
	}
	logged, err := releaseHasShardedLog(ctx, env)
	if err != nil {
		return err
	}
	phase.LoggedEvents = logged
	for i := range 3 {
		e := outbox.Event{
			ID: fmt.Sprintf("evt_upgrade_%s_%d_%d", release, time.Now().UnixNano(), i), TenantID: tenantID,
			Type: "upgrade.written", Payload: []byte(fmt.Sprintf(`{"release":%q,"n":%d}`, release, i)), OccurredAt: time.Now().UTC(),
		}
		item, err := releaseItem(e, logged)
		if err != nil {
			return err
		}
		put := outbox.PutIfNew(env.Out.OutboxTableName, item)
		if _, err := env.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &put}}}); err != nil {
			return fmt.Errorf("write event: %w", err)
		}
		phase.Events = append(phase.Events, e.ID)
	}
	// Every event's two deliveries settle: delivered to ok, dead at bad.
	for _, id := range phase.Events {
		for {
			var v api.EventView
			err := client.Do(ctx, "GET", "/v1/events/"+id, nil, &v)
			settled := 0
			for _, d := range v.Deliveries {
				if d.State == domain.StateDelivered || d.State == domain.StateDead {
					settled++
				}
			}
			if err == nil && settled == 2 {
				for _, d := range v.Deliveries {
					if d.State == domain.StateDelivered && d.EndpointID == phase.OK.ID {
						phase.Delivered = append(phase.Delivered, d.ID)
					}
					if d.State == domain.StateDead && d.EndpointID == phase.Dead.ID {
						phase.DeadDeliveries = append(phase.DeadDeliveries, d.ID)
					}
				}
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("event %s: its deliveries did not settle (last %+v, %v)", id, v.Deliveries, err)
			}
			time.Sleep(time.Second)
		}
	}
	if len(phase.Delivered) != 3 || len(phase.DeadDeliveries) != 3 {
		return fmt.Errorf("want 3 delivered and 3 dead, got %v and %v", phase.Delivered, phase.DeadDeliveries)
	}
	var job api.JobView
	if err := client.Do(ctx, "POST", "/v1/dlq/replay", map[string]any{"delivery_ids": phase.DeadDeliveries[:1]}, &job); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	phase.ReplayJob = job.ID
	for job.CompletedAt == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("replay job %s did not complete: %+v", job.ID, job)
		}
		time.Sleep(time.Second)
		if err := client.Do(ctx, "GET", "/v1/replays/"+job.ID, nil, &job); err != nil {
			return err
		}
	}
	// The replayed delivery dies again at the 400 receiver.
	for {
		var d api.DeliveryView
		if err := client.Do(ctx, "GET", "/v1/deliveries/"+phase.DeadDeliveries[0], nil, &d); err == nil && d.State == domain.StateDead && d.Attempts >= 2 {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the replayed delivery %s did not die again", phase.DeadDeliveries[0])
		}
		time.Sleep(time.Second)
	}
	if err := writeWaiting(ctx, env, client, &phase); err != nil {
		return err
	}
	if err := harness.AppendUpgradePhase(harness.UpgradeFixturePath, phase); err != nil {
		return err
	}
	fmt.Printf("upgrade: wrote through %s: tenant %s, %d events, %d delivered, %d dead, %d pending, %d cancelled, replay job %s\n",
		release, tenantID, len(phase.Events), len(phase.Delivered), len(phase.DeadDeliveries), len(phase.Pending), len(phase.Cancelled), phase.ReplayJob)
	return nil
}

// writeWaiting makes the phase's deliveries that are pending across the
// upgrade: an endpoint whose receiver answers 429 with a Retry-After of
// harness.UpgradeRetryAfter, and an event addressed to it, attempted once;
// and, through a release with cancel-pending, a second such endpoint whose
// pending delivery the release cancels. Both endpoints take only the type
// upgrade.pending, so the other events of the check do not reach them.
func writeWaiting(ctx context.Context, env *harness.Env, client *apiclient.Client, phase *harness.UpgradePhase) error {
	waiting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", strconv.Itoa(harness.UpgradeRetryAfter))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer waiting.Close()
	cancels, err := releaseHasCancel(phase.Release)
	if err != nil {
		return err
	}
	type target struct {
		ep  *harness.UpgradeEndpoint
		ids *[]string
	}
	targets := []target{{&phase.Waiting, &phase.Pending}}
	if cancels {
		targets = append(targets, target{&phase.Cancelling, &phase.Cancelled})
	}
	for _, tg := range targets {
		var v api.EndpointView
		if err := client.Do(ctx, "POST", "/v1/endpoints", map[string]any{"url": waiting.URL + "/hook", "event_types": []string{"upgrade.pending"}, "description": "upgrade " + phase.Release}, &v); err != nil {
			return fmt.Errorf("create the waiting endpoint: %w", err)
		}
		*tg.ep = harness.UpgradeEndpoint{ID: v.ID, Secret: v.Secret}
		e := outbox.Event{
			ID: fmt.Sprintf("evt_upgrade_pending_%s_%d", phase.Release, time.Now().UnixNano()), TenantID: phase.TenantID, EndpointID: v.ID,
			Type: "upgrade.pending", Payload: []byte(fmt.Sprintf(`{"release":%q}`, phase.Release)), OccurredAt: time.Now().UTC(),
		}
		item, err := releaseItem(e, phase.LoggedEvents)
		if err != nil {
			return err
		}
		put := outbox.PutIfNew(env.Out.OutboxTableName, item)
		if _, err := env.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &put}}}); err != nil {
			return fmt.Errorf("write the waiting event: %w", err)
		}
		id, err := attemptedOnce(ctx, client, e.ID)
		if err != nil {
			return err
		}
		*tg.ids = append(*tg.ids, id)
	}
	if !cancels {
		return nil
	}
	var job api.JobView
	if err := client.Do(ctx, "POST", "/v1/endpoints/"+phase.Cancelling.ID+"/cancel-pending", map[string]any{}, &job); err != nil {
		return fmt.Errorf("cancel-pending: %w", err)
	}
	for {
		var d api.DeliveryView
		if err := client.Do(ctx, "GET", "/v1/deliveries/"+phase.Cancelled[0], nil, &d); err == nil && d.State == domain.StateCancelled {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the waiting delivery %s was not cancelled (job %s)", phase.Cancelled[0], job.ID)
		}
		time.Sleep(time.Second)
	}
}

// attemptedOnce waits until the event's one delivery was attempted and is
// pending (its Retry-After ahead), and answers its id.
func attemptedOnce(ctx context.Context, client *apiclient.Client, eventID string) (string, error) {
	for {
		var v api.EventView
		if err := client.Do(ctx, "GET", "/v1/events/"+eventID, nil, &v); err == nil && len(v.Deliveries) == 1 {
			if d := v.Deliveries[0]; d.State == domain.StatePending && d.Attempts >= 1 {
				return d.ID, nil
			}
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("event %s: its delivery was not attempted", eventID)
		}
		time.Sleep(time.Second)
	}
}

// releaseHasCancel reports whether the release has the cancel-pending
// route (the cancelled state came with it).
func releaseHasCancel(release string) (bool, error) {
	out, err := exec.Command("git", "show", release+":internal/api/api.go").Output()
	if err != nil {
		return false, fmt.Errorf("read release %s's routes: %w", release, err)
	}
	return strings.Contains(string(out), "cancel-pending"), nil
}

// releaseItem is e's outbox item as a release's producers wrote it: with
// the message log's index keys (log_sk, and log_pk when sharded), which
// the release's message log lists it by (this version's Item writes
// neither: its enqueue lists the item in its pages).
func releaseItem(e outbox.Event, sharded bool) (map[string]types.AttributeValue, error) {
	item, err := e.Item()
	if err != nil {
		return nil, err
	}
	item[outbox.AttrLogKey] = &types.AttributeValueMemberS{Value: outbox.LogKey(e.OccurredAt, e.ID)}
	if sharded {
		item[outbox.AttrLogShard] = &types.AttributeValueMemberS{Value: outbox.LogShard(e.TenantID, e.ID)}
	}
	return item, nil
}

// releaseHasShardedLog reports whether the deployed outbox has the
// sharded message log index (by_tenant_shard): its producers write
// log_pk.
func releaseHasShardedLog(ctx context.Context, env *harness.Env) (bool, error) {
	d, err := env.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(env.Out.OutboxTableName)})
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(d.Table.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
		return aws.ToString(g.IndexName) == outbox.IndexByTenantShard
	}), nil
}
