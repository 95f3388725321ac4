// Command infra is hookline's standalone CDK app: `cdk deploy` runs it (see
// cdk.json). It is a thin user of the construct (package hookline): it reads
// the context, builds one stack of its own holding one hookline instance,
// and adds the outputs the scripts, the tooling and the tests read
// (internal/stackoutputs).
//
// Context values (cdk deploy -c key=value) configure a deployment:
//
//	architecture    arm64 (default) | x86_64 | host (the machine's own, for a local cloud)
//	assetDir        folder of built bootstraps (default dist/<architecture>, from `make build`)
//	retrySchedule   delays before each attempt, e.g. "0s,5s,30s,5m" (default the documented schedule)
//	retryJitter     proportional (default, ±20%) | full | none
//	maxAge          age cap of an event, e.g. "24h"
//	requestTimeout  bound on one POST, e.g. "15s"
//	replayRate      sends per second of one replay job (default 10)
//	disableAfter    consecutive failed attempts that disable an endpoint (default 50)
//	disableAfterFor how long those failures must also have lasted, e.g. "120h" (default 5 days;
//	                at least the retry schedule's span, the sum of its delays)
//	breakerCooldown, breakerMaxCooldown
//	                an endpoint's circuit breaker: its first open period and the longest, which
//	                doubles per failed probe, e.g. "10s", "10m" (the defaults; at most 15m)
//	endpointConcurrency
//	                the most deliver invocations sending to one endpoint at once until it shows
//	                itself fast (default 3; below deliverMaxConcurrency)
//	allowCIDRs      comma-separated CIDRs the SSRF guard lets through (default none)
//	allowHTTP       "true" lets tenants register http:// endpoint URLs (default https only)
//	alarmEmail      subscribe this address to the alarm topic (default none)
//	operatorEventsToAlarms  "true" sends the operational events on the operator's bus to the alarm topic (default false)
//	tenantDLQAlarm  per-tenant DLQ depth alarm threshold (default 100)
//	deliverTimeout  the deliver function's timeout, e.g. "20s" (default request timeout + 5s)
//	deliverMaxConcurrency
//	                the deliver mapping's maximum concurrency, the pool; a fast endpoint may have
//	                all of it, up to 100 (default 10; 2 to 1000)
//	sweepInterval   how often the DLQ and the tenant DLQ depths are reconciled with the index (default 5m)
//	apiRateLimit    the HTTP API's requests per second (default 50)
//	apiBurstLimit   the most requests the HTTP API takes at once above the rate (default 100)
//	apiPublishRateLimit, apiPublishBurstLimit
//	                POST /v1/events's own throttle, apart from the rest (defaults 100, 200)
//	apiAdminRateLimit, apiAdminBurstLimit
//	                each operator route's own throttle (defaults 10, 20)
//	adminIAMAuth    "true" puts IAM (SigV4) authorization on the /v1/admin routes in place of
//	                the operator key (default false: the operator key)
//	keyAdmins       comma-separated ARNs of the IAM principals that administer the signing
//	                secrets' key (default the account); include the deploy role
//	deliverReservedConcurrency, apiReservedConcurrency, replayReservedConcurrency
//	                a number, or "none" for an account that cannot spare it (defaults 11, 20, 8)
//	smallAccount    "true": the small-account profile (hookline.Props.SmallAccount): no reservation,
//	                every SQS mapping capped at 2, for an account with a concurrency limit of 10
//	faults          soak tests only: "deliver_crash:0.01,enqueue_fail:0.05"
//	stackName       default "Hookline"
//
// `go run ./infra reservations -c key=value ...` synthesizes nothing: it
// prints, as JSON, the stack's name and the concurrency its functions
// reserve for those context values (and cdk.json's), which `make deploy`
// hands to its preflight (scripts/preflight) before cdk deploy.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/retry"
)

func main() {
	defer jsii.Close()
	run := run
	if len(os.Args) > 1 && os.Args[1] == "reservations" {
		run = func() error { return printReservations(os.Stdout, os.Args[2:], "cdk.json", "cdk.context.json") }
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

// propsFromContext turns CDK context values into hookline's props and the
// stack's name.
func propsFromContext(ctx func(string) string) (*hookline.Props, string, error) {
	p := &hookline.Props{Architecture: ctx("architecture")}
	if p.Architecture == "host" {
		p.Architecture = "arm64"
		if runtime.GOARCH == "amd64" {
			p.Architecture = "x86_64"
		}
	}
	p.Code = assetDirCode{dir: ctx("assetDir")}
	for _, read := range []func(func(string) string, *hookline.Props) error{
		retryFromContext, deliveryFromContext, operationsFromContext, capacityFromContext, accessFromContext,
	} {
		if err := read(ctx, p); err != nil {
			return nil, "", err
		}
	}
	name := ctx("stackName")
	if name == "" {
		name = "Hookline"
	}
	return p, name, nil
}

// assetDirCode is hookline.CodeFromDir(dir) (empty: dist/<architecture>),
// its error naming the context key that picks another folder.
type assetDirCode struct{ dir string }

func (c assetDirCode) FunctionCode(name, architecture string) (awslambda.Code, error) {
	code, err := hookline.CodeFromDir(c.dir).FunctionCode(name, architecture)
	if err != nil {
		return nil, fmt.Errorf("%w (or pass -c assetDir=DIR)", err)
	}
	return code, nil
}

// retryFromContext reads the retry policy: retrySchedule, retryJitter, maxAge.
func retryFromContext(ctx func(string) string, p *hookline.Props) error {
	if s := ctx("retrySchedule"); s != "" {
		steps, err := retry.ParseSchedule(s)
		if err != nil {
			return fmt.Errorf("context retrySchedule: %w", err)
		}
		p.Retry.Schedule = steps
	}
	if s := ctx("retryJitter"); s != "" {
		env := p.Retry.Env()
		env[retry.EnvJitterMode] = s
		policy, err := retry.FromEnv(func(k string) string { return env[k] })
		if err != nil {
			return fmt.Errorf("context retryJitter: %w", err)
		}
		p.Retry.Mode = policy.Mode
	}
	return durationContext(ctx, "maxAge", &p.Retry.MaxAge)
}

// deliveryFromContext reads how deliveries and replays are made: requestTimeout,
// replayRate, disableAfter, failingAfter, deadNoticeWindow, allowCIDRs,
// allowHTTP, the endpoints' isolation (isolationFromContext), and the
// console's consoleFrameAncestors and portalMinTTL.
func deliveryFromContext(ctx func(string) string, p *hookline.Props) error {
	if err := isolationFromContext(ctx, p); err != nil {
		return err
	}
	if err := durationContext(ctx, "requestTimeout", &p.RequestTimeout); err != nil {
		return err
	}
	if err := floatContext(ctx, "replayRate", &p.ReplayRate); err != nil {
		return err
	}
	if err := intContext(ctx, "disableAfter", &p.DisableAfter); err != nil {
		return err
	}
	if err := intContext(ctx, "failingAfter", &p.FailingAfter); err != nil {
		return err
	}
	if err := durationContext(ctx, "deadNoticeWindow", &p.DeadNoticeWindow); err != nil {
		return err
	}
	if err := durationContext(ctx, "payloadRetention", &p.PayloadRetention); err != nil {
		return err
	}
	if s := ctx("consoleFrameAncestors"); s != "" {
		fa, err := fnenv.ParseFrameAncestors(s)
		if err != nil {
			return fmt.Errorf("context consoleFrameAncestors: %w", err)
		}
		p.ConsoleFrameAncestors = fa
	}
	if err := durationContext(ctx, "portalMinTTL", &p.PortalMinTTL); err != nil {
		return err
	}
	if err := durationContext(ctx, "deliveryRetention", &p.DeliveryRetention); err != nil {
		return err
	}
	if err := durationContext(ctx, "dlqRetention", &p.DLQRetention); err != nil {
		return err
	}
	if s := ctx("messageLog"); s != "" {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("context messageLog: %q is not true or false", s)
		}
		p.DisableMessageLog = !on
	}
	if s := ctx("allowCIDRs"); s != "" {
		for _, c := range strings.Split(s, ",") {
			p.AllowCIDRs = append(p.AllowCIDRs, strings.TrimSpace(c))
		}
	}
	switch s := ctx("allowHTTP"); s {
	case "", "false":
	case "true":
		p.AllowHTTP = true
	default:
		return fmt.Errorf("context allowHTTP: %q is not true or false", s)
	}
	return nil
}

// isolationFromContext reads what keeps a failing or slow endpoint from
// hurting the others: disableAfterFor, breakerCooldown, breakerMaxCooldown
// (durations) and endpointConcurrency.
func isolationFromContext(ctx func(string) string, p *hookline.Props) error {
	for key, field := range map[string]*time.Duration{
		"disableAfterFor":    &p.DisableAfterFor,
		"breakerCooldown":    &p.BreakerCooldown,
		"breakerMaxCooldown": &p.BreakerMaxCooldown,
	} {
		if err := durationContext(ctx, key, field); err != nil {
			return err
		}
	}
	return intContext(ctx, "endpointConcurrency", &p.EndpointConcurrency)
}

// operationsFromContext reads the operator's settings: alarmEmail,
// operatorEventsToAlarms, faults,
// sweepInterval, deliverTimeout, tenantDLQAlarm.
func operationsFromContext(ctx func(string) string, p *hookline.Props) error {
	p.AlarmEmail = ctx("alarmEmail")
	p.Faults = ctx("faults")
	switch s := ctx("operatorEventsToAlarms"); s {
	case "", "false":
	case "true":
		p.OperatorEventsToAlarms = true
	default:
		return fmt.Errorf("context operatorEventsToAlarms: %q is not true or false", s)
	}
	if err := durationContext(ctx, "sweepInterval", &p.SweepInterval); err != nil {
		return err
	}
	if err := durationContext(ctx, "deliverTimeout", &p.DeliverTimeout); err != nil {
		return err
	}
	if s := ctx("tenantDLQAlarm"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("context tenantDLQAlarm: %q is not a positive whole number", s)
		}
		p.TenantDLQAlarmThreshold = n
	}
	return nil
}

// capacityFromContext reads the deliver mapping's maximum concurrency, the
// small-account profile, the functions' reserved concurrency and the API's
// throttling: deliverMaxConcurrency, smallAccount, *ReservedConcurrency,
// apiRateLimit, apiBurstLimit.
func capacityFromContext(ctx func(string) string, p *hookline.Props) error {
	if err := intContext(ctx, "deliverMaxConcurrency", &p.DeliverMaxConcurrency); err != nil {
		return err
	}
	switch s := ctx("smallAccount"); s {
	case "", "false":
	case "true":
		p.SmallAccount = true
	default:
		return fmt.Errorf("context smallAccount: %q is not true or false", s)
	}
	for key, field := range map[string]*int{
		"deliverReservedConcurrency": &p.DeliverReservedConcurrency,
		"apiReservedConcurrency":     &p.APIReservedConcurrency,
		"replayReservedConcurrency":  &p.ReplayReservedConcurrency,
	} {
		switch s := ctx(key); s {
		case "":
		case "none":
			*field = -1
		default:
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return fmt.Errorf("context %s: %q is neither a positive whole number nor none", key, s)
			}
			*field = n
		}
	}
	if err := floatContext(ctx, "apiRateLimit", &p.APIRateLimit); err != nil {
		return err
	}
	if err := intContext(ctx, "apiBurstLimit", &p.APIBurstLimit); err != nil {
		return err
	}
	return nil
}

// accessFromContext reads who reaches what and how fast: adminIAMAuth,
// keyAdmins, and the publish and operator routes' throttles
// (apiPublishRateLimit, apiPublishBurstLimit, apiAdminRateLimit,
// apiAdminBurstLimit).
func accessFromContext(ctx func(string) string, p *hookline.Props) error {
	switch s := ctx("adminIAMAuth"); s {
	case "", "false":
	case "true":
		p.AdminIAMAuth = true
	default:
		return fmt.Errorf("context adminIAMAuth: %q is not true or false", s)
	}
	if s := ctx("keyAdmins"); s != "" {
		for _, a := range strings.Split(s, ",") {
			p.KeyAdmins = append(p.KeyAdmins, strings.TrimSpace(a))
		}
	}
	for key, field := range map[string]*float64{"apiPublishRateLimit": &p.APIPublishRateLimit, "apiAdminRateLimit": &p.APIAdminRateLimit} {
		if err := floatContext(ctx, key, field); err != nil {
			return err
		}
	}
	for key, field := range map[string]*int{"apiPublishBurstLimit": &p.APIPublishBurstLimit, "apiAdminBurstLimit": &p.APIAdminBurstLimit} {
		if err := intContext(ctx, key, field); err != nil {
			return err
		}
	}
	return nil
}

// durationContext sets *field from the context value key, a Go duration
// ("15s"), when it is given.
func durationContext(ctx func(string) string, key string, field *time.Duration) error {
	if s := ctx(key); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("context %s: %w", key, err)
		}
		*field = d
	}
	return nil
}

// floatContext sets *field from the context value key, a number, when it is
// given.
func floatContext(ctx func(string) string, key string, field *float64) error {
	if s := ctx(key); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("context %s: %q is not a number", key, s)
		}
		*field = r
	}
	return nil
}

// intContext sets *field from the context value key, a whole number, when it
// is given.
func intContext(ctx func(string) string, key string, field *int) error {
	if s := ctx(key); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("context %s: %q is not a whole number", key, s)
		}
		*field = n
	}
	return nil
}
