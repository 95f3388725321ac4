package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/retry"
)

// HooklineStackProps configures one hookline deployment. Every field states
// its default; the zero value deploys the documented defaults to AWS on arm64.
type HooklineStackProps struct {
	awscdk.StackProps

	// Architecture of the function binaries: "arm64" (default, for AWS) or
	// "x86_64" (for a local cloud on an amd64 host).
	Architecture string
	// AssetDir holds one folder per function (enqueue/, deliver/), each with
	// the `bootstrap` binary built by `make build`. Default "dist/<Architecture>".
	AssetDir string

	// Retry is the delivery retry policy. Its schedule sets both the deliver
	// function's backoff and the delivery queue's maxReceiveCount, so the two
	// cannot disagree. Zero value: retry.DefaultSchedule, ±20% jitter, 24 h age cap.
	Retry retry.Policy
	// RequestTimeout bounds one POST to an endpoint. Default 15 s.
	RequestTimeout time.Duration
	// DeliverTimeout is the deliver function's timeout. Default 60 s; it must
	// leave room for RequestTimeout. The delivery queue's visibility timeout is
	// six times this value, as AWS recommends for SQS event sources.
	DeliverTimeout time.Duration
	// DeliverMaxConcurrency caps concurrent deliver invocations on the SQS
	// event source mapping (AWS minimum 2). Default 10.
	DeliverMaxConcurrency int
	// DeliverReservedConcurrency reserves concurrency for the deliver function.
	// It must exceed DeliverMaxConcurrency so throttling never burns attempts.
	// Default 0: unreserved (new AWS accounts may not have room to reserve).
	DeliverReservedConcurrency int
	// AllowCIDRs lets the deliver function reach addresses the SSRF guard
	// refuses otherwise (loopback, private ranges, ...). Default none. The
	// local cloud sets 127.0.0.0/8 so tests can reach receivers on loopback.
	AllowCIDRs []string
	// AllowHTTP lets tenants register plain http endpoint URLs. Default
	// false: https only. The local cloud sets it for loopback receivers.
	AllowHTTP bool
	// ReplayRate is the sends per second of one replay job, so that a
	// receiver that has just come back is not flooded. Default 10.
	ReplayRate float64
	// DisableAfter disables an endpoint after this many consecutive failed
	// attempts. Default 50; negative: never.
	DisableAfter int
	// DLQAlarmThreshold: the DLQ depth alarm fires when more messages than
	// this are visible in the dead-letter queue. Default 100.
	DLQAlarmThreshold int
	// TenantDLQAlarmThreshold: the per-tenant alarm fires when any tenant's
	// DLQ depth exceeds this. Default 100.
	TenantDLQAlarmThreshold int
	// OldestMessageAgeThreshold: the delivery queue's oldest message older
	// than this for 5 minutes alarms. Default 15 min.
	OldestMessageAgeThreshold time.Duration
	// IteratorAgeThreshold: the enqueue mapping this far behind the outbox
	// stream for 5 minutes alarms. Default 5 min.
	IteratorAgeThreshold time.Duration
	// RejectedItemsThreshold: more rejected outbox items than this in 5
	// minutes alarms. Default 0 (any).
	RejectedItemsThreshold int
	// EnqueueFailuresThreshold: more stream batches than this parked in the
	// enqueue failure queue alarms. Default 0 (any).
	EnqueueFailuresThreshold int
	// StuckReplayThreshold: more replay job messages than this parked in the
	// jobs' dead-letter queue alarms. Default 0 (any).
	StuckReplayThreshold int
	// FunctionErrorsThreshold and ThrottlesThreshold: more invocation errors
	// or throttles of any function in 5 minutes alarm. Default 0 (any).
	FunctionErrorsThreshold, ThrottlesThreshold int
	// SweepInterval is how often the DLQ is reconciled with the index (stale
	// copies deleted, missed deaths recorded), besides after each replay,
	// and the tenant DLQ depth counters with the index. Default 5 min;
	// whole minutes.
	SweepInterval time.Duration
	// AlarmEmail, when set, subscribes this address to the alarm topic.
	// Default: none (subscribe your pager to the AlarmTopicARN output).
	AlarmEmail string
	// Faults injects failures into deliver and enqueue, for the soak test
	// only: "deliver_crash:0.01,enqueue_fail:0.05" (package fault). Default
	// none; never set it on a production deployment.
	Faults string
	// LogLevel of the functions' JSON logs: DEBUG, INFO (default), WARN, ERROR.
	LogLevel string
}

// MaxEventAge is the longest age cap a deployment may set: the queues keep
// messages 14 days, less the longest backoff (12 h) and a margin.
const MaxEventAge = 13 * 24 * time.Hour

// withDefaults returns a copy of p with every zero field set to its default,
// or an error naming the field that cannot be deployed.
func (p HooklineStackProps) withDefaults() (HooklineStackProps, error) {
	if p.Architecture == "" {
		p.Architecture = "arm64"
	}
	if p.Architecture != "arm64" && p.Architecture != "x86_64" {
		return p, fmt.Errorf("architecture %q: want arm64 or x86_64", p.Architecture)
	}
	if p.AssetDir == "" {
		p.AssetDir = "dist/" + p.Architecture
	}
	if err := p.Retry.Validate(); err != nil {
		return p, fmt.Errorf("retry policy: %w", err)
	}
	if p.Retry.MaxAge > MaxEventAge {
		return p, fmt.Errorf("retry max age %s exceeds %s: the delivery queue keeps messages 14 days, and an older one would expire silently instead of reaching the DLQ", p.Retry.MaxAge, MaxEventAge)
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = 15 * time.Second
	}
	if p.DeliverTimeout == 0 {
		p.DeliverTimeout = 60 * time.Second
	}
	if p.DeliverTimeout < p.RequestTimeout+5*time.Second {
		return p, fmt.Errorf("deliver timeout %s must exceed request timeout %s by at least 5s", p.DeliverTimeout, p.RequestTimeout)
	}
	if p.DeliverTimeout > 15*time.Minute {
		return p, errors.New("deliver timeout exceeds the Lambda maximum of 15m")
	}
	if p.DeliverMaxConcurrency == 0 {
		p.DeliverMaxConcurrency = 10
	}
	if p.DeliverMaxConcurrency < 2 || p.DeliverMaxConcurrency > 1000 {
		return p, fmt.Errorf("deliver max concurrency %d: SQS event sources take 2 to 1000", p.DeliverMaxConcurrency)
	}
	if p.DeliverReservedConcurrency != 0 && p.DeliverReservedConcurrency <= p.DeliverMaxConcurrency {
		return p, fmt.Errorf("deliver reserved concurrency %d must exceed max concurrency %d, or throttles burn attempts", p.DeliverReservedConcurrency, p.DeliverMaxConcurrency)
	}
	if p.ReplayRate == 0 {
		p.ReplayRate = 10
	}
	if p.ReplayRate < 0 || p.ReplayRate > 1000 {
		return p, fmt.Errorf("replay rate %g: want 0 to 1000 sends per second", p.ReplayRate)
	}
	if p.DisableAfter == 0 {
		p.DisableAfter = 50
	}
	if p.DLQAlarmThreshold == 0 {
		p.DLQAlarmThreshold = 100
	}
	if p.SweepInterval == 0 {
		p.SweepInterval = 5 * time.Minute
	}
	if p.SweepInterval < time.Minute || p.SweepInterval%time.Minute != 0 {
		return p, fmt.Errorf("sweep interval %s: want whole minutes, at least 1m", p.SweepInterval)
	}
	if p.TenantDLQAlarmThreshold == 0 {
		p.TenantDLQAlarmThreshold = 100
	}
	if p.OldestMessageAgeThreshold == 0 {
		p.OldestMessageAgeThreshold = 15 * time.Minute
	}
	if p.IteratorAgeThreshold == 0 {
		p.IteratorAgeThreshold = 5 * time.Minute
	}
	if _, err := fault.Parse(p.Faults); err != nil {
		return p, err
	}
	if p.LogLevel == "" {
		p.LogLevel = "INFO"
	}
	return p, nil
}
