// Command infra is hookline's CDK app: `cdk deploy` runs it (see cdk.json).
//
// Context values (cdk deploy -c key=value) configure a deployment:
//
//	architecture    arm64 (default) | x86_64 | host (the machine's own, for a local cloud)
//	assetDir        folder of built bootstraps (default dist/<architecture>)
//	retrySchedule   delays before each attempt, e.g. "0s,5s,30s,5m" (default the documented schedule)
//	retryJitter     proportional (default, ±20%) | full | none
//	maxAge          age cap of an event, e.g. "24h"
//	requestTimeout  bound on one POST, e.g. "15s"
//	replayRate      sends per second of one replay job (default 10)
//	disableAfter    consecutive failed attempts that disable an endpoint (default 50)
//	allowCIDRs      comma-separated CIDRs the SSRF guard lets through (default none)
//	allowHTTP       "true" lets tenants register http:// endpoint URLs (default https only)
//	alarmEmail      subscribe this address to the alarm topic (default none)
//	tenantDLQAlarm  per-tenant DLQ depth alarm threshold (default 100)
//	deliverTimeout  the deliver function's timeout, e.g. "20s" (default request timeout + 5s)
//	sweepInterval   how often the DLQ and the tenant DLQ depths are reconciled with the index (default 5m)
//	apiRateLimit    the HTTP API's requests per second (default 50)
//	apiBurstLimit   the most requests the HTTP API takes at once above the rate (default 100)
//	deliverReservedConcurrency, apiReservedConcurrency, replayReservedConcurrency
//	                a number, or "none" for an account that cannot spare it (defaults 11, 20, 8)
//	faults          soak tests only: "deliver_crash:0.01,enqueue_fail:0.05"
//	stackName       default "Hookline"
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/retry"
)

func main() {
	defer jsii.Close()
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
	if _, err := NewHooklineStack(app, name, props); err != nil {
		return err
	}
	app.Synth(nil)
	return nil
}

// propsFromContext turns CDK context values into stack props.
func propsFromContext(ctx func(string) string) (*HooklineStackProps, string, error) {
	p := &HooklineStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("hookline: reliable outbound webhooks"),
		},
		Architecture: ctx("architecture"),
		AssetDir:     ctx("assetDir"),
	}
	if p.Architecture == "host" {
		p.Architecture = "arm64"
		if runtime.GOARCH == "amd64" {
			p.Architecture = "x86_64"
		}
	}
	for _, read := range []func(func(string) string, *HooklineStackProps) error{
		retryFromContext, deliveryFromContext, operationsFromContext, capacityFromContext,
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

// retryFromContext reads the retry policy: retrySchedule, retryJitter, maxAge.
func retryFromContext(ctx func(string) string, p *HooklineStackProps) error {
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
	if s := ctx("maxAge"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("context maxAge: %w", err)
		}
		p.Retry.MaxAge = d
	}
	return nil
}

// deliveryFromContext reads how deliveries and replays are made: requestTimeout,
// replayRate, disableAfter, allowCIDRs, allowHTTP.
func deliveryFromContext(ctx func(string) string, p *HooklineStackProps) error {
	if s := ctx("requestTimeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("context requestTimeout: %w", err)
		}
		p.RequestTimeout = d
	}
	if s := ctx("replayRate"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("context replayRate: %q is not a number", s)
		}
		p.ReplayRate = r
	}
	if s := ctx("disableAfter"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("context disableAfter: %q is not a whole number", s)
		}
		p.DisableAfter = n
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

// operationsFromContext reads the operator's settings: alarmEmail, faults,
// sweepInterval, deliverTimeout, tenantDLQAlarm.
func operationsFromContext(ctx func(string) string, p *HooklineStackProps) error {
	p.AlarmEmail = ctx("alarmEmail")
	p.Faults = ctx("faults")
	if s := ctx("sweepInterval"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("context sweepInterval: %w", err)
		}
		p.SweepInterval = d
	}
	if s := ctx("deliverTimeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("context deliverTimeout: %w", err)
		}
		p.DeliverTimeout = d
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

// capacityFromContext reads the functions' reserved concurrency and the API's
// throttling: *ReservedConcurrency, apiRateLimit, apiBurstLimit.
func capacityFromContext(ctx func(string) string, p *HooklineStackProps) error {
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
	if s := ctx("apiRateLimit"); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("context apiRateLimit: %q is not a number", s)
		}
		p.APIRateLimit = r
	}
	if s := ctx("apiBurstLimit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("context apiBurstLimit: %q is not a whole number", s)
		}
		p.APIBurstLimit = n
	}
	return nil
}
