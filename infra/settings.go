package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/hookline/hookline/infra/hookline"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/retry"
)

// config is what the app's context configures: the instance's props and
// the stack's name.
type config struct {
	hookline.Props
	stackName string
}

// DefaultStackName is the stack's name when the context gives none.
const DefaultStackName = "Hookline"

// setting is one context key of the app: how its value, when it is given,
// sets the configuration, and its line of the package comment. An unset
// (empty) key leaves the construct's default: no default is written here.
type setting struct {
	key string
	field
	doc string
}

// field is how a setting reads and writes its field of the configuration.
type field struct {
	set   func(c *config, value string) error // parse value into the field
	value func(c *config) any                 // the field's value
}

// settings are the app's context keys, in the order the package comment
// lists them (TestPackageCommentListsEverySetting keeps the two the same).
// Adding a setting is adding a row.
var settings = []setting{
	{"architecture", to(architecture, func(c *config) *string { return &c.Architecture }),
		"arm64 (default) | x86_64 | host (the machine's own, for a local cloud)"},
	{"assetDir", to(assetDir, func(c *config) *hookline.Code { return &c.Code }),
		"folder of built bootstraps (default dist/<architecture>, from `make build`)"},
	{"stackName", to(text, func(c *config) *string { return &c.stackName }),
		`the stack's name (default "Hookline")`},

	{"retrySchedule", to(retry.ParseSchedule, func(c *config) *[]time.Duration { return &c.Retry.Schedule }),
		`delays before each attempt, e.g. "0s,5s,30s,5m" (default the documented schedule)`},
	{"retryJitter", to(jitterMode, func(c *config) *retry.JitterMode { return &c.Retry.Mode }),
		"proportional (default, ±20%) | full | none"},
	{"maxAge", to(time.ParseDuration, func(c *config) *time.Duration { return &c.Retry.MaxAge }),
		`age cap of an event, e.g. "24h"`},
	{"requestTimeout", to(time.ParseDuration, func(c *config) *time.Duration { return &c.RequestTimeout }),
		"bound on one POST (default 15s)"},
	{"maxRequestTimeout", to(time.ParseDuration, func(c *config) *time.Duration { return &c.MaxRequestTimeout }),
		`the longest request timeout an endpoint may set for itself (timeout_seconds), e.g. "30s"; the deliver ` +
			"function's timeout is sized for it (default the request timeout)"},
	{"deliverTimeout", to(time.ParseDuration, func(c *config) *time.Duration { return &c.DeliverTimeout }),
		`the deliver function's timeout, e.g. "20s" (default max request timeout + 5s)`},
	{"replayRate", to(number, func(c *config) *float64 { return &c.ReplayRate }),
		"sends per second of one replay job (default 10)"},

	{"failingAfter", to(whole, func(c *config) *int { return &c.FailingAfter }),
		"consecutive failed attempts that raise endpoint.failing and open the endpoint's circuit breaker " +
			"(default 10; negative: never; below disableAfter)"},
	{"disableAfter", to(whole, func(c *config) *int { return &c.DisableAfter }),
		"consecutive failed attempts that disable an endpoint (default 50; negative: never)"},
	{"disableAfterFor", to(time.ParseDuration, func(c *config) *time.Duration { return &c.DisableAfterFor }),
		`how long those failures must also have lasted, e.g. "120h" (default 5 days; ` +
			"at least the retry schedule's span, the sum of its delays)"},
	{"breakerCooldown", to(time.ParseDuration, func(c *config) *time.Duration { return &c.BreakerCooldown }),
		"an endpoint's circuit breaker's first open period (default 10s; at most 15m)"},
	{"breakerMaxCooldown", to(time.ParseDuration, func(c *config) *time.Duration { return &c.BreakerMaxCooldown }),
		"the breaker's longest open period, which doubles per failed probe (default 10m; at most 15m)"},
	{"endpointConcurrency", to(whole, func(c *config) *int { return &c.EndpointConcurrency }),
		"the most deliver invocations sending to one endpoint at once until it shows itself fast " +
			"(default 3; below deliverMaxConcurrency)"},
	{"tenantConcurrency", to(whole, func(c *config) *int { return &c.TenantConcurrency }),
		"a tenant's share of the deliver pool: the most deliver invocations sending to one tenant's endpoints " +
			"not shown fast at once, however many (default 6; below deliverMaxConcurrency)"},
	{"deadNoticeWindow", to(time.ParseDuration, func(c *config) *time.Duration { return &c.DeadNoticeWindow }),
		"the window that coalesces one endpoint's delivery.dead notices (default 5m; 1s to 15m)"},
	{"statsFlushEvery", to(time.ParseDuration, func(c *config) *time.Duration { return &c.StatsFlushEvery }),
		"how often a deliver instance writes the endpoints' attempt counters it gathered, and at its shutdown " +
			"(default 10s; at most 5m; negative: every batch's)"},

	{"allowCIDRs", to(list, func(c *config) *[]string { return &c.AllowCIDRs }),
		"comma-separated CIDRs the SSRF guard lets through (default none)"},
	{"allowHTTP", to(boolean, func(c *config) *bool { return &c.AllowHTTP }),
		`"true" lets tenants register http:// endpoint URLs (default https only)`},

	{"destinationRegions", to(list, func(c *config) *[]string { return &c.DestinationRegions }),
		"comma-separated regions an sqs, sns or eventbridge endpoint's target may be in (default the stack's own region)"},
	{"destinationRoles", to(list, func(c *config) *[]string { return &c.DestinationRoles }),
		`comma-separated ARN patterns of the customers' roles the deliver function may assume, e.g. ` +
			`"arn:aws:iam::111122223333:role/hookline-*"; registration refuses a role none matches ` +
			"(default arn:<partition>:iam::*:role/hookline-*, a role named hookline-* in any account)"},
	{"destinationOwnAccount", to(boolean, func(c *config) *bool { return &c.DestinationOwnAccount }),
		`"true" accepts destinations and roles in the stack's own account, hookline's own resources still refused ` +
			"(default false; the local cloud sets it)"},
	{"destinationRoleProbe", to(disabled, func(c *config) *bool { return &c.DisableDestinationRoleProbe }),
		`"false" stops probing each AWS destination's role with a wrong external ID, which disables an endpoint whose ` +
			"role accepts one (default true; the local cloud, which evaluates no trust policy, sets false)"},

	{"messageLog", to(disabled, func(c *config) *bool { return &c.DisableMessageLog }),
		`"false" turns the message log off: no by_tenant index, GET /v1/events answers 503 (default true)`},
	{"messageLogLegacyIndex", to(boolean, func(c *config) *bool { return &c.KeepLegacyMessageLogIndex }),
		`"true" keeps the message log's unsharded index by_tenant and reads it, for a stack upgraded from before by_tenant_shard, until no outbox item lacks log_pk (default false)`},
	{"deliveryLogIndex", to(disabled, func(c *config) *bool { return &c.DeferDeliveryLogIndex }),
		`"false" leaves the state table's by_log index out, for the first deploy of an upgrade from a stack with gsi1 only ` +
			"(docs/deploying.md); GET /v1/deliveries answers 503 until a deploy without it adds by_log (default true)"},
	{"payloadRetention", to(time.ParseDuration, func(c *config) *time.Duration { return &c.PayloadRetention }),
		`how long after its occurred_at the API serves an event's payload, e.g. "72h" (default 15 days; 1h to 16 days)`},
	{"deliveryRetention", to(time.ParseDuration, func(c *config) *time.Duration { return &c.DeliveryRetention }),
		`how long delivery records, rejected items and jobs are kept, e.g. "720h" ` +
			"(default 15 days; at least dlqRetention + 1 day)"},
	{"dlqRetention", to(time.ParseDuration, func(c *config) *time.Duration { return &c.DLQRetention }),
		`how long the dead-letter queue keeps a message, e.g. "168h" (default 14 days, the SQS maximum)`},
	{"consoleFrameAncestors", to(fnenv.ParseFrameAncestors, func(c *config) *[]string { return &c.ConsoleFrameAncestors }),
		`the pages that may frame the console: 'self' or origins, e.g. "'self', https://app.example.com" (default none)`},
	{"portalMinTTL", to(time.ParseDuration, func(c *config) *time.Duration { return &c.PortalMinTTL }),
		`the shortest life a portal link may be minted with, e.g. "1s" (default 60s)`},

	{"maxEndpoints", to(whole, func(c *config) *int { return &c.MaxEndpoints }),
		"endpoints one tenant may have; one more answers 409 (default 100)"},
	{"maxEndpointBytes", to(whole, func(c *config) *int { return &c.MaxEndpointBytes }),
		"bytes a tenant writes into one endpoint (url, description, types, headers, filter, target, role) (default 16384; at least 8192)"},
	{"maxMetricsEventTypes", to(whole, func(c *config) *int { return &c.MaxMetricsEventTypes }),
		"event types group_by=event_type answers, the rest summed as one group (default 50)"},

	{"alarmEmail", to(text, func(c *config) *string { return &c.AlarmEmail }),
		"subscribe this address to the alarm topic (default none)"},
	{"operatorEventsToAlarms", to(boolean, func(c *config) *bool { return &c.OperatorEventsToAlarms }),
		`"true" sends the operational events on the operator's bus to the alarm topic (default false)`},
	{"tracing", to(boolean, func(c *config) *bool { return &c.Tracing }),
		`"true" turns on X-Ray active tracing: the functions also send their spans to X-Ray (default false: span log lines only)`},
	{"tracingSampleRate", to(number, func(c *config) *float64 { return &c.TracingSampleRate }),
		`with tracing on, the share of traces whose spans go to X-Ray, above 0 and at most 1, e.g. "1" for every trace (default 0.05)`},
	{"tenantDLQAlarm", to(positive, func(c *config) *int { return &c.TenantDLQAlarmThreshold }),
		"per-tenant DLQ depth alarm threshold (default 100)"},
	{"sweepInterval", to(time.ParseDuration, func(c *config) *time.Duration { return &c.SweepInterval }),
		"how often the DLQ and the tenant DLQ depths are reconciled with the index (default 5m)"},

	{"deliverMaxConcurrency", to(whole, func(c *config) *int { return &c.DeliverMaxConcurrency }),
		"the deliver mapping's maximum concurrency, the pool; a fast endpoint may have all of it, " +
			"up to 100 (default 25; 2 to 1000)"},
	{"laneMaxConcurrency", to(whole, func(c *config) *int { return &c.LaneMaxConcurrency }),
		"the tenant lane's deliver mapping's maximum concurrency, what tenants over their share take of the pool together " +
			"(default 6, or deliverMaxConcurrency when smaller, at least 2; 2 in the small-account profile; 2 to 1000)"},
	{"laneAfter", to(whole, func(c *config) *int { return &c.LaneAfter }),
		"how many of one tenant's messages an enqueue invocation sends to the delivery queue before the rest go to " +
			"the tenant lane (default 60; at least 1)"},
	{"deliverReservedConcurrency", to(reservation, func(c *config) *int { return &c.DeliverReservedConcurrency }),
		`the deliver function's reserved concurrency: a number, or "none" for an account that cannot spare it ` +
			"(default deliverMaxConcurrency + laneMaxConcurrency + 1, 32; above those two together)"},
	{"apiReservedConcurrency", to(reservation, func(c *config) *int { return &c.APIReservedConcurrency }),
		`the api function's reserved concurrency, its cap: a number, or "none" (default 60); the API's ` +
			"throttles, bursts whole, must fit in it at apiRequestDuration"},
	{"replayReservedConcurrency", to(reservation, func(c *config) *int { return &c.ReplayReservedConcurrency }),
		`the replay function's reserved concurrency: a number, or "none" (default 8)`},
	{"enqueueParallelization", to(whole, func(c *config) *int { return &c.EnqueueParallelization }),
		"the outbox stream mapping's parallelization factor: enqueue invocations per shard at once " +
			"(default 2, 1 in the small-account profile; 1 to 10)"},
	{"enqueueSendConcurrency", to(whole, func(c *config) *int { return &c.EnqueueSendConcurrency }),
		"SendMessageBatch requests one enqueue invocation has in flight at once (default 4; 1 to 10)"},
	{"batchingWindow", to(time.ParseDuration, func(c *config) *time.Duration { return &c.BatchingWindow }),
		`how long the outbox stream's mapping waits to fill enqueue's batch, whole seconds, e.g. "1s": sparse ` +
			"traffic costs about a third as much a delivery for up to the window's wait (default 0s: none; up to 300s)"},
	{"staticEgressAZs", to(whole, func(c *config) *int { return &c.StaticEgressAZs }),
		"static egress: the deliver function sends from one NAT gateway's Elastic IP per availability zone, this many " +
			"(the EgressIPs output, GET /v1/egress-ips), $36.50 a month each (default 0: off, AWS's shared ranges; 1 to 3)"},
	{"notifyFrom", to(text, func(c *config) *string { return &c.NotifyFrom }),
		"notices by e-mail: the address (of a verified SES identity) hookline e-mails tenants' operational events from " +
			"(default none: no e-mail)"},
	{"notifyIdentity", to(text, func(c *config) *string { return &c.NotifyIdentity }),
		"the SES identity notifyFrom sends through, the address or its domain (default the domain)"},
	{"notifyConfigurationSet", to(text, func(c *config) *string { return &c.NotifyConfigurationSet }),
		"the SES configuration set of every e-mail (default none)"},
	{"eventTypesDir", to(hookline.LoadEventTypes, func(c *config) *[]hookline.EventType { return &c.EventTypes }),
		"the event-type catalog: a folder of JSON files, one event type each (name, description, schema, example, " +
			"deprecated, validation off|warn|reject), e.g. events/catalog (default none: no catalog, any event type)"},
	{"smallAccount", to(boolean, func(c *config) *bool { return &c.SmallAccount }),
		`"true": the small-account profile (hookline.Props.SmallAccount): no reservation, ` +
			"every SQS mapping capped at 2, for an account with a concurrency limit of 10"},

	{"apiRateLimit", to(number, func(c *config) *float64 { return &c.APIRateLimit }),
		"the HTTP API's requests per second (default 50)"},
	{"apiBurstLimit", to(whole, func(c *config) *int { return &c.APIBurstLimit }),
		"the most requests the HTTP API takes at once above the rate (default 10)"},
	{"apiPublishRateLimit", to(number, func(c *config) *float64 { return &c.APIPublishRateLimit }),
		"POST /v1/events's own requests per second, apart from the rest (default 100)"},
	{"apiPublishBurstLimit", to(whole, func(c *config) *int { return &c.APIPublishBurstLimit }),
		"POST /v1/events's own burst (default 20)"},
	{"apiAdminRateLimit", to(number, func(c *config) *float64 { return &c.APIAdminRateLimit }),
		"each operator route's own requests per second (default 2)"},
	{"apiAdminBurstLimit", to(whole, func(c *config) *int { return &c.APIAdminBurstLimit }),
		"each operator route's own burst (default 1)"},
	{"apiTenantExpensiveRate", to(whole, func(c *config) *int { return &c.APITenantExpensiveRate }),
		"the most expensive API requests (listings, metrics, event lookups, JWKS, replays) a second per tenant " +
			"(default 5; negative: no limit)"},
	{"apiExpensiveBudget", to(time.ParseDuration, func(c *config) *time.Duration { return &c.APIExpensiveBudget }),
		`the longest an expensive API request may run before it is stopped (503), e.g. "3s" (default 2s; negative: none)`},
	{"apiRequestDuration", to(time.ParseDuration, func(c *config) *time.Duration { return &c.APIRequestDuration }),
		"an API request's p99 duration in the api function, e.g. \"60ms\": the API's throttles' bursts together, plus " +
			"their rates (apiRateLimit + apiPublishRateLimit + apiAdminRateLimit per operator route) times it, must fit in " +
			"apiReservedConcurrency (default 100ms)"},
	{"adminIAMAuth", to(boolean, func(c *config) *bool { return &c.AdminIAMAuth }),
		`"true" puts IAM (SigV4) authorization on the /v1/admin routes in place of the operator key ` +
			"(default false: the operator key)"},
	{"keyAdmins", to(list, func(c *config) *[]string { return &c.KeyAdmins }),
		"comma-separated ARNs of the IAM principals that administer the signing secrets' key " +
			"(default the account); include the deploy role"},

	{"faults", to(text, func(c *config) *string { return &c.Faults }),
		`soak tests only: "deliver_crash:0.01,enqueue_fail:0.05"`},
}

// propsFromContext turns CDK context values into hookline's props and the
// stack's name: each setting given a value sets its field, the rest keep
// the construct's defaults. A bad value is an error naming its key.
func propsFromContext(ctx func(string) string) (*hookline.Props, string, error) {
	c := config{Props: hookline.Props{Code: assetDirCode{}}, stackName: DefaultStackName}
	for _, s := range settings {
		if v := ctx(s.key); v != "" {
			if err := s.set(&c, v); err != nil {
				return nil, "", fmt.Errorf("context %s: %w", s.key, err)
			}
		}
	}
	return &c.Props, c.stackName, nil
}

// to is the field of a setting that parses its value with parse.
func to[T any](parse func(string) (T, error), at func(*config) *T) field {
	return field{
		set: func(c *config, s string) error {
			v, err := parse(s)
			if err != nil {
				return err
			}
			*at(c) = v
			return nil
		},
		value: func(c *config) any { return *at(c) },
	}
}

// The settings' parsers.

func text(s string) (string, error) { return s, nil }

// whole is a whole number.
func whole(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return n, nil
}

// positive is a whole number above zero.
func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

// reservation is a reserved concurrency: a positive whole number, or
// "none", which the construct takes as negative (reserve nothing).
func reservation(s string) (int, error) {
	if s == "none" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is neither a positive whole number nor none", s)
	}
	return n, nil
}

// number is a number.
func number(s string) (float64, error) {
	r, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return r, nil
}

// boolean is "true" or "false".
func boolean(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", s)
}

// disabled is true when s, a boolean (strconv.ParseBool), says off.
func disabled(s string) (bool, error) {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return !on, nil
}

// list is comma-separated, each item trimmed.
func list(s string) ([]string, error) {
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items, nil
}

// jitterMode is a retry jitter mode's name, as the deliver function reads it.
func jitterMode(s string) (retry.JitterMode, error) {
	p, err := retry.FromEnv(func(k string) string {
		if k == retry.EnvJitterMode {
			return s
		}
		return ""
	})
	return p.Mode, err
}

// architecture is a Lambda architecture, or "host": the machine's own.
func architecture(s string) (string, error) {
	if s != "host" {
		return s, nil
	}
	if runtime.GOARCH == "amd64" {
		return "x86_64", nil
	}
	return "arm64", nil
}

// assetDir is the code of the functions built into the folder s.
func assetDir(s string) (hookline.Code, error) { return assetDirCode{dir: s}, nil }

// assetDirCode is hookline.CodeFromDir(dir) (empty: dist/<architecture>),
// its error naming the context key that picks another folder.
type assetDirCode struct{ dir string }

// FunctionDir is hookline.CodeFromDir(dir)'s (hookline.CodeDir), its error
// naming the context key.
func (c assetDirCode) FunctionDir(name, architecture string) (string, error) {
	dir, err := hookline.CodeFromDir(c.dir).(hookline.CodeDir).FunctionDir(name, architecture)
	if err != nil {
		return "", fmt.Errorf("%w (or pass -c assetDir=DIR)", err)
	}
	return dir, nil
}

func (c assetDirCode) FunctionCode(name, architecture string) (awslambda.Code, error) {
	code, err := hookline.CodeFromDir(c.dir).FunctionCode(name, architecture)
	if err != nil {
		return nil, fmt.Errorf("%w (or pass -c assetDir=DIR)", err)
	}
	return code, nil
}
