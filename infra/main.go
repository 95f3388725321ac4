// Command infra is hookline's standalone CDK app: `cdk deploy` runs it (see
// cdk.json). It is a thin user of the construct (package hookline): it reads
// the context, builds one stack of its own holding one hookline instance,
// and adds the outputs the scripts, the tooling and the tests read
// (internal/stackoutputs).
//
// The list below is rendered from the settings table (settings.go), which
// parses the keys: edit a key's row there, then rewrite the list with
// `go test ./infra -run TestPackageCommentListsEverySetting -update`. An
// unset key keeps the construct's default (hookline.Props).
//
// Context values (cdk deploy -c key=value) configure a deployment:
//
//	architecture    arm64 (default) | x86_64 | host (the machine's own, for a local cloud)
//	assetDir        folder of built bootstraps (default dist/<architecture>, from `make build`)
//	stackName       the stack's name (default "Hookline")
//	retrySchedule   delays before each attempt, e.g. "0s,5s,30s,5m" (default the documented schedule)
//	retryJitter     proportional (default, ±20%) | full | none
//	maxAge          age cap of an event, e.g. "24h"
//	requestTimeout  bound on one POST (default 15s)
//	maxRequestTimeout
//	                the longest request timeout an endpoint may set for itself (timeout_seconds), e.g. "30s";
//	                the deliver function's timeout is sized for it (default the request timeout)
//	deliverTimeout  the deliver function's timeout, e.g. "20s" (default max request timeout + 5s)
//	replayRate      sends per second of one replay job (default 10)
//	failingAfter    consecutive failed attempts that raise endpoint.failing and open the endpoint's circuit
//	                breaker (default 10; negative: never; below disableAfter)
//	disableAfter    consecutive failed attempts that disable an endpoint (default 50; negative: never)
//	disableAfterFor how long those failures must also have lasted, e.g. "120h" (default 5 days; at least the
//	                retry schedule's span, the sum of its delays)
//	breakerCooldown an endpoint's circuit breaker's first open period (default 10s; at most 15m)
//	breakerMaxCooldown
//	                the breaker's longest open period, which doubles per failed probe (default 10m; at most
//	                15m)
//	endpointConcurrency
//	                the most deliver invocations sending to one endpoint at once until it shows itself fast
//	                (default 3; below deliverMaxConcurrency)
//	tenantConcurrency
//	                a tenant's share of the deliver pool: the most deliver invocations sending to one tenant's
//	                endpoints not shown fast at once, however many (default 6; below deliverMaxConcurrency)
//	deadNoticeWindow
//	                the window that coalesces one endpoint's delivery.dead notices (default 5m; 1s to 15m)
//	statsFlushEvery how often a deliver instance writes the endpoints' attempt counters it gathered, and at
//	                its shutdown (default 10s; at most 5m; negative: every batch's)
//	allowCIDRs      comma-separated CIDRs the SSRF guard lets through (default none)
//	allowHTTP       "true" lets tenants register http:// endpoint URLs (default https only)
//	destinationRegions
//	                comma-separated regions an sqs, sns or eventbridge endpoint's target may be in (default
//	                the stack's own region)
//	destinationRoles
//	                comma-separated ARN patterns of the customers' roles the deliver function may assume, e.g.
//	                "arn:aws:iam::111122223333:role/hookline-*"; registration refuses a role none matches
//	                (default arn:<partition>:iam::*:role/hookline-*, a role named hookline-* in any account)
//	destinationOwnAccount
//	                "true" accepts destinations and roles in the stack's own account, hookline's own resources
//	                still refused (default false; the local cloud sets it)
//	destinationRoleProbe
//	                "false" stops probing each AWS destination's role with a wrong external ID, which disables
//	                an endpoint whose role accepts one (default true; the local cloud, which evaluates no
//	                trust policy, sets false)
//	messageLog      "false" turns the message log off: no by_tenant index, GET /v1/events answers 503 (default
//	                true)
//	messageLogLegacyIndex
//	                "true" keeps the message log's unsharded index by_tenant and reads it, for a stack
//	                upgraded from before by_tenant_shard, until no outbox item lacks log_pk (default false)
//	deliveryLogIndex
//	                "false" leaves the state table's by_log index out, for the first deploy of an upgrade from
//	                a stack with gsi1 only (docs/deploying.md); GET /v1/deliveries answers 503 until a deploy
//	                without it adds by_log (default true)
//	payloadRetention
//	                how long after its occurred_at the API serves an event's payload, e.g. "72h" (default 15
//	                days; 1h to 16 days)
//	deliveryRetention
//	                how long delivery records, rejected items and jobs are kept, e.g. "720h" (default 15 days;
//	                at least dlqRetention + 1 day)
//	dlqRetention    how long the dead-letter queue keeps a message, e.g. "168h" (default 14 days, the SQS
//	                maximum)
//	consoleFrameAncestors
//	                the pages that may frame the console: 'self' or origins, e.g. "'self',
//	                https://app.example.com" (default none)
//	portalMinTTL    the shortest life a portal link may be minted with, e.g. "1s" (default 60s)
//	maxEndpoints    endpoints one tenant may have; one more answers 409 (default 100)
//	maxEndpointBytes
//	                bytes a tenant writes into one endpoint (url, description, types, headers, filter, target,
//	                role) (default 16384; at least 8192)
//	maxMetricsEventTypes
//	                event types group_by=event_type answers, the rest summed as one group (default 50)
//	alarmEmail      subscribe this address to the alarm topic (default none)
//	operatorEventsToAlarms
//	                "true" sends the operational events on the operator's bus to the alarm topic (default
//	                false)
//	tracing         "true" turns on X-Ray active tracing: the functions also send their spans to X-Ray
//	                (default false: span log lines only)
//	tracingSampleRate
//	                with tracing on, the share of traces whose spans go to X-Ray, above 0 and at most 1, e.g.
//	                "1" for every trace (default 0.05)
//	tenantDLQAlarm  per-tenant DLQ depth alarm threshold (default 100)
//	sweepInterval   how often the DLQ and the tenant DLQ depths are reconciled with the index (default 5m)
//	deliverMaxConcurrency
//	                the deliver mapping's maximum concurrency, the pool; a fast endpoint may have all of it,
//	                up to 100 (default 25; 2 to 1000)
//	laneMaxConcurrency
//	                the tenant lane's deliver mapping's maximum concurrency, what tenants over their share
//	                take of the pool together (default 6, or deliverMaxConcurrency when smaller, at least 2; 2
//	                in the small-account profile; 2 to 1000)
//	laneAfter       how many of one tenant's messages an enqueue invocation sends to the delivery queue before
//	                the rest go to the tenant lane (default 60; at least 1)
//	deliverReservedConcurrency
//	                the deliver function's reserved concurrency: a number, or "none" for an account that
//	                cannot spare it (default deliverMaxConcurrency + laneMaxConcurrency + 1, 32; above those
//	                two together)
//	apiReservedConcurrency
//	                the api function's reserved concurrency, its cap: a number, or "none" (default 60); the
//	                API's throttles, bursts whole, must fit in it at apiRequestDuration
//	replayReservedConcurrency
//	                the replay function's reserved concurrency: a number, or "none" (default 8)
//	enqueueParallelization
//	                the outbox stream mapping's parallelization factor: enqueue invocations per shard at once
//	                (default 2, 1 in the small-account profile; 1 to 10)
//	enqueueSendConcurrency
//	                SendMessageBatch requests one enqueue invocation has in flight at once (default 4; 1 to
//	                10)
//	batchingWindow  how long the outbox stream's mapping waits to fill enqueue's batch, whole seconds, e.g.
//	                "1s": sparse traffic costs about a third as much a delivery for up to the window's wait
//	                (default 0s: none; up to 300s)
//	staticEgressAZs static egress: the deliver function sends from one NAT gateway's Elastic IP per
//	                availability zone, this many (the EgressIPs output, GET /v1/egress-ips), $36.50 a month
//	                each (default 0: off, AWS's shared ranges; 1 to 3)
//	notifyFrom      notices by e-mail: the address (of a verified SES identity) hookline e-mails tenants'
//	                operational events from (default none: no e-mail)
//	notifyIdentity  the SES identity notifyFrom sends through, the address or its domain (default the domain)
//	notifyConfigurationSet
//	                the SES configuration set of every e-mail (default none)
//	eventTypesDir   the event-type catalog: a folder of JSON files, one event type each (name, description,
//	                schema, example, deprecated, validation off|warn|reject), e.g. events/catalog (default
//	                none: no catalog, any event type)
//	smallAccount    "true": the small-account profile (hookline.Props.SmallAccount): no reservation, every SQS
//	                mapping capped at 2, for an account with a concurrency limit of 10
//	apiRateLimit    the HTTP API's requests per second (default 50)
//	apiBurstLimit   the most requests the HTTP API takes at once above the rate (default 10)
//	apiPublishRateLimit
//	                POST /v1/events's own requests per second, apart from the rest (default 100)
//	apiPublishBurstLimit
//	                POST /v1/events's own burst (default 20)
//	apiAdminRateLimit
//	                each operator route's own requests per second (default 2)
//	apiAdminBurstLimit
//	                each operator route's own burst (default 1)
//	apiTenantExpensiveRate
//	                the most expensive API requests (listings, metrics, event lookups, JWKS, replays) a second
//	                per tenant (default 5; negative: no limit)
//	apiExpensiveBudget
//	                the longest an expensive API request may run before it is stopped (503), e.g. "3s"
//	                (default 2s; negative: none)
//	apiRequestDuration
//	                an API request's p99 duration in the api function, e.g. "60ms": the API's throttles'
//	                bursts together, plus their rates (apiRateLimit + apiPublishRateLimit + apiAdminRateLimit
//	                per operator route) times it, must fit in apiReservedConcurrency (default 100ms)
//	adminIAMAuth    "true" puts IAM (SigV4) authorization on the /v1/admin routes in place of the operator key
//	                (default false: the operator key)
//	keyAdmins       comma-separated ARNs of the IAM principals that administer the signing secrets' key
//	                (default the account); include the deploy role
//	faults          soak tests only: "deliver_crash:0.01,enqueue_fail:0.05"
//
// `go run ./infra reservations -c key=value ...` synthesizes nothing: it
// prints, as JSON, the stack's name and the concurrency its functions
// reserve for those context values (and cdk.json's), which `make deploy`
// hands to its preflight (scripts/preflight) before cdk deploy.
//
// `go run ./infra tables TEMPLATE...` prints the tables' global secondary
// indexes (name, key schema, projection) of synthesized templates, as the
// upgrade steps' template test compares them (docs/deploying.md).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
)

func main() {
	defer jsii.Close()
	run := run
	if len(os.Args) > 1 && os.Args[1] == "reservations" {
		run = func() error { return printReservations(os.Stdout, os.Args[2:], "cdk.json", "cdk.context.json") }
	}
	if len(os.Args) > 1 && os.Args[1] == "tables" {
		run = func() error { return printTables(os.Stdout, os.Args[2:]) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hookline infra:", err)
		os.Exit(1)
	}
}

func run() error {
	app := awscdk.NewApp(nil)
	props, name, err := propsFromContext(func(key string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok {
			return v
		}
		return ""
	})
	if err != nil {
		return err
	}
	if err := newStack(app, name, props); err != nil {
		return err
	}
	app.Synth(nil)
	return nil
}

// newStack adds the stack name holding hookline, with its outputs, to app.
// The instance's id is "Default", which CDK leaves out of logical IDs: the
// resources keep the logical IDs they had when the stack built them itself,
// so a deployed stack upgrades in place.
func newStack(app awscdk.App, name string, props *hookline.Props) error {
	stack := awscdk.NewStack(app, &name, &awscdk.StackProps{
		Description: jsii.String("hookline: reliable outbound webhooks"),
	})
	h, err := hookline.New(stack, "Default", props)
	if err != nil {
		return err
	}
	addOutputs(stack, h)
	return nil
}

// Reservations is what the app's reservations command prints: the stack's
// name and what its functions reserve (hookline.Reservations).
type Reservations struct {
	Stack        string         `json:"stack"`
	Reservations map[string]int `json:"reservations"`
}

// printReservations writes to w the Reservations of the stack that the
// context in args (`-c key=value`, `--context key=value`; anything else is
// ignored, so a cdk command line can be passed whole) and in the context
// files (cdk.json's "context", cdk.context.json; those missing are
// skipped) would deploy. Later values win, as in cdk: the files, then args.
func printReservations(w io.Writer, args []string, files ...string) error {
	values := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if ctx, ok := doc["context"].(map[string]any); ok && strings.HasSuffix(f, "cdk.json") {
			doc = ctx
		}
		for k, v := range doc {
			if s, ok := v.(string); ok {
				values[k] = s
			}
		}
	}
	for k, v := range contextArgs(args) {
		values[k] = v
	}
	props, name, err := propsFromContext(func(k string) string { return values[k] })
	if err != nil {
		return err
	}
	r, err := hookline.Reservations(props)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(Reservations{Stack: name, Reservations: r})
}

// contextArgs are the context values of a cdk command line: -c key=value,
// --context key=value, --context=key=value.
func contextArgs(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		kv, ok := "", false
		switch a := args[i]; {
		case (a == "-c" || a == "--context") && i+1 < len(args):
			kv, ok = args[i+1], true
			i++
		case strings.HasPrefix(a, "--context="):
			kv, ok = strings.TrimPrefix(a, "--context="), true
		}
		if k, v, found := strings.Cut(kv, "="); ok && found {
			out[k] = v
		}
	}
	return out
}
