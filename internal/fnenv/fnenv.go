// Package fnenv is the environment contract between the stack and the
// functions: one struct per function, which infra renders with Vars into the
// function's environment and the function's main reads back with Load. The
// variable names are written here only (the retry policy's in package retry,
// the fault rates' in package fault, the sealing key's in package sealing, and
// referenced from here), so renaming a field or a variable fails to compile,
// or fails the round-trip test, on both sides at once.
//
// Load validates what it reads with the errors the functions have always
// given: "HOOKLINE_STATE_TABLE is required", "HOOKLINE_REQUEST_TIMEOUT: "soon"
// is not a positive duration".
package fnenv

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/hookline/hookline/internal/retry"
)

// The environment variables, each written once.
const (
	varStateTable           = "HOOKLINE_STATE_TABLE"
	varLogLevel             = "HOOKLINE_LOG_LEVEL"
	varTracing              = "HOOKLINE_TRACING"
	varXRayDaemon           = "AWS_XRAY_DAEMON_ADDRESS" // set by Lambda
	varTracingSampleRate    = "HOOKLINE_TRACING_SAMPLE_RATE"
	tracingXRay             = "xray"
	varDeliveryQueueURL     = "HOOKLINE_DELIVERY_QUEUE_URL"
	varEventBus             = "HOOKLINE_EVENT_BUS"
	varEnqueueFailureQueue  = "HOOKLINE_ENQUEUE_FAILURE_QUEUE_URL"
	varDLQURL               = "HOOKLINE_DLQ_URL"
	varDLQArrivalsURL       = "HOOKLINE_DLQ_ARRIVALS_URL"
	varReplayQueueURL       = "HOOKLINE_REPLAY_QUEUE_URL"
	varReplayOpsQueueURL    = VarReplayOpsQueueURL
	varReplayRate           = "HOOKLINE_REPLAY_RATE"
	varRequestTimeout       = "HOOKLINE_REQUEST_TIMEOUT"
	varMaxRequestTimeout    = "HOOKLINE_MAX_REQUEST_TIMEOUT"
	varMaxEndpoints         = "HOOKLINE_MAX_ENDPOINTS"
	varMaxEndpointBytes     = "HOOKLINE_MAX_ENDPOINT_BYTES"
	varMaxMetricsEventTypes = "HOOKLINE_MAX_METRICS_EVENT_TYPES"
	varDisableAfter         = "HOOKLINE_DISABLE_AFTER"
	varRoleProbe            = "HOOKLINE_DESTINATION_ROLE_PROBE"
	roleProbeOff            = "off"
	varFailingAfter         = "HOOKLINE_FAILING_AFTER"
	varDeadNoticeWindow     = "HOOKLINE_DEAD_NOTICE_WINDOW"
	varStatsFlushEvery      = "HOOKLINE_STATS_FLUSH_EVERY"
	varOutboxTable          = VarOutboxTable
	varPayloadRetention     = "HOOKLINE_PAYLOAD_RETENTION"
	varMessageLog           = "HOOKLINE_MESSAGE_LOG"
	varDeliveryRetention    = "HOOKLINE_DELIVERY_RETENTION"
	varAllowCIDRs           = "HOOKLINE_ALLOW_CIDRS"
	varAllowHTTP            = "HOOKLINE_ALLOW_HTTP"
	varOperatorKey          = "HOOKLINE_OPERATOR_KEY"
	varOperatorKeySecretARN = "HOOKLINE_OPERATOR_KEY_SECRET_ARN"
	varSecretsKeyARN        = VarSecretsKeyARN
	varFaults               = fault.Env
	varFrameAncestors       = "HOOKLINE_CONSOLE_FRAME_ANCESTORS"
	varAlarmNamePrefix      = "HOOKLINE_ALARM_NAME_PREFIX"
	varPortalMinTTL         = "HOOKLINE_PORTAL_MIN_TTL"
	varTenantExpensiveRate  = "HOOKLINE_API_TENANT_EXPENSIVE_RATE"
	varExpensiveBudget      = "HOOKLINE_API_EXPENSIVE_BUDGET"
	varOperatorIAM          = "HOOKLINE_OPERATOR_IAM"
	varDisableAfterFor      = "HOOKLINE_DISABLE_AFTER_FOR"
	varBreakerCooldown      = "HOOKLINE_BREAKER_COOLDOWN"
	varBreakerMaxCooldown   = "HOOKLINE_BREAKER_MAX_COOLDOWN"
	varEndpointConcurrency  = "HOOKLINE_ENDPOINT_CONCURRENCY"
	varTenantConcurrency    = "HOOKLINE_TENANT_CONCURRENCY"
	varFastConcurrency      = "HOOKLINE_ENDPOINT_FAST_CONCURRENCY"
	varSendConcurrency      = "HOOKLINE_ENQUEUE_SEND_CONCURRENCY"
	varLaneQueueURL         = "HOOKLINE_LANE_QUEUE_URL"
	varLaneAfter            = "HOOKLINE_LANE_AFTER"
	varFanOutQueueURL       = "HOOKLINE_FANOUT_QUEUE_URL"
	varEventTypes           = "HOOKLINE_EVENT_TYPES"
)

// VarOutboxTable (the outbox table's name) and VarReplayOpsQueueURL (the
// replay worker's operations queue) are set on the deliver function after
// it is made, when the stack has the queue (DeliverEnv.Notices): the only
// variables infra names outside Vars.
const (
	VarOutboxTable       = "HOOKLINE_OUTBOX_TABLE"
	VarReplayOpsQueueURL = "HOOKLINE_REPLAY_OPS_QUEUE_URL"
)

// VarSecretsKeyARN names the KMS key (its ARN) the signing secrets are
// sealed with: the api function seals under it, the deliver function opens
// only what it sealed. Only those two functions get it, and the template
// tests check that. (Named here, not in package sealing, so that the
// functions that do not seal link no KMS client.)
const VarSecretsKeyARN = "HOOKLINE_SECRETS_KEY_ARN"

// Defaults of the fields that have one.
const (
	// DefaultRequestTimeout bounds one delivery attempt.
	DefaultRequestTimeout = domain.DefaultRequestTimeout
	// DefaultDisableAfter consecutive failed attempts disable an endpoint.
	DefaultDisableAfter = domain.DefaultDisableAfter
	// DefaultReplayRate is the sends per second of one replay job.
	DefaultReplayRate = domain.DefaultReplayRate
	// DefaultFailingAfter consecutive failed attempts mark an endpoint
	// failing (endpoint.failing).
	DefaultFailingAfter = domain.DefaultFailingAfter
	// DefaultStatsFlushEvery is how often a deliver instance writes the
	// endpoints' attempt counters it gathered (deliver.Config.StatsFlushEvery).
	DefaultStatsFlushEvery = 10 * time.Second
	// MaxStatsFlushEvery is the longest: what an instance keeps is lost if
	// it stops without its SIGTERM (a crash, a timeout).
	MaxStatsFlushEvery = 5 * time.Minute
	// DefaultDeadNoticeWindow is delivery.dead's coalescing window.
	DefaultDeadNoticeWindow = domain.DefaultDeadWindow
	// MaxDeadNoticeWindow is the longest coalescing window: SQS delays a
	// window's notice at most 900 s.
	MaxDeadNoticeWindow = 15 * time.Minute
	// DefaultDeliveryRetention is how long a delivery record is kept
	// (store.DefaultRetention).
	DefaultDeliveryRetention = domain.DefaultDeliveryRetention
	// DefaultTenantExpensiveRate is the most expensive API requests a
	// second one tenant may make (api.DefaultTenantExpensiveRate).
	DefaultTenantExpensiveRate = domain.DefaultAPITenantExpensiveRate
	// DefaultExpensiveBudget is the longest an expensive API request may
	// run (api.DefaultExpensiveBudget).
	DefaultExpensiveBudget = domain.DefaultAPIExpensiveBudget
	// DefaultPayloadRetention is how long after its occurred_at an event's
	// payload is served by the API (api.DefaultPayloadRetention).
	DefaultPayloadRetention = domain.DefaultPayloadRetention
	// MaxBreakerCooldown is the longest a circuit breaker may stay open
	// (Breaker.MaxCooldown, and so Breaker.Cooldown): a delivery waiting
	// for the breaker is sent again with an SQS DelaySeconds, at most 900 s.
	MaxBreakerCooldown = 15 * time.Minute
	// DefaultFastConcurrency is the most deliver invocations sending to an
	// endpoint that answers fast: the deliver mapping's default maximum
	// concurrency, 20.
	DefaultFastConcurrency = domain.DefaultDeliverMaxConcurrency
	// MaxFastConcurrency bounds FastConcurrency: 100 invocations sending
	// to one endpoint at once.
	MaxFastConcurrency = 100
	// MaxSendConcurrency bounds EnqueueEnv.SendConcurrency: 10 requests in
	// flight at once, a hundred messages.
	MaxSendConcurrency = 10
)

// Notices is how a function raises operational events: where it writes
// them and how it coalesces delivery.dead.
type Notices struct {
	// OutboxTable (HOOKLINE_OUTBOX_TABLE) receives the operational events.
	// Empty: none are raised.
	OutboxTable string
	// OpsQueueURL (HOOKLINE_REPLAY_OPS_QUEUE_URL) receives the notices of
	// delivery.dead windows. Empty: deaths raise no delivery.dead.
	OpsQueueURL string
	// DeadNoticeWindow (HOOKLINE_DEAD_NOTICE_WINDOW) is delivery.dead's
	// coalescing window: one summary per endpoint per window. Default
	// DefaultDeadNoticeWindow (5m); at most MaxDeadNoticeWindow (15m).
	DeadNoticeWindow time.Duration
}

func (n Notices) vars(v map[string]string) {
	v[varOutboxTable] = n.OutboxTable
	v[varReplayOpsQueueURL] = n.OpsQueueURL
	if n.DeadNoticeWindow != 0 {
		v[varDeadNoticeWindow] = n.DeadNoticeWindow.String()
	}
}

func loadNotices(getenv func(string) string) (Notices, error) {
	n := Notices{OutboxTable: getenv(varOutboxTable), OpsQueueURL: getenv(varReplayOpsQueueURL), DeadNoticeWindow: DefaultDeadNoticeWindow}
	if s := getenv(varDeadNoticeWindow); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > MaxDeadNoticeWindow {
			return n, fmt.Errorf("%s: %q is not a duration above 0 and at most %s", varDeadNoticeWindow, s, MaxDeadNoticeWindow)
		}
		n.DeadNoticeWindow = d
	}
	return n, nil
}

// Common is what every function reads.
type Common struct {
	// StateTable (HOOKLINE_STATE_TABLE) holds tenants, keys, endpoints and
	// deliveries. Required.
	StateTable string
	// LogLevel (HOOKLINE_LOG_LEVEL): DEBUG, INFO (default), WARN or ERROR.
	LogLevel string
	// DeliveryRetention (HOOKLINE_DELIVERY_RETENTION) is how long delivery,
	// rejection and job records are kept (store.Store.Retention; a
	// dead delivery's from its death). Default DefaultDeliveryRetention
	// (15 days). Zero in a Common built by hand: the default.
	DeliveryRetention time.Duration
	// retentionErr is why HOOKLINE_DELIVERY_RETENTION was refused.
	retentionErr error
	// XRay (HOOKLINE_TRACING "xray", the construct's Tracing prop) sends
	// the function's spans to the X-Ray daemon as well as to its log.
	// Default off: span lines only (package trace).
	XRay bool
	// XRayDaemon is the daemon's address Lambda sets
	// (AWS_XRAY_DAEMON_ADDRESS), read when XRay is on.
	XRayDaemon string
	// XRaySampleRate (HOOKLINE_TRACING_SAMPLE_RATE, the construct's
	// TracingSampleRate prop) is the share of traces whose spans go to
	// X-Ray, above 0 and at most 1 (trace.InSample). Default
	// DefaultTracingSampleRate; zero in a Common built by hand: the same.
	XRaySampleRate float64
	// sampleErr is why HOOKLINE_TRACING_SAMPLE_RATE was refused.
	sampleErr error
}

// DefaultTracingSampleRate is XRaySampleRate's default.
const DefaultTracingSampleRate = domain.DefaultTracingSampleRate

// TraceSampleRate is the share of traces the function sends to X-Ray
// (trace.NewTracer).
func (c Common) TraceSampleRate() float64 {
	if c.XRaySampleRate > 0 {
		return c.XRaySampleRate
	}
	return DefaultTracingSampleRate
}

// TraceDaemon is where the function sends X-Ray segments (trace.NewTracer):
// the daemon's address with XRay on and the address set, else "".
func (c Common) TraceDaemon() string {
	if !c.XRay {
		return ""
	}
	return c.XRayDaemon
}

// Retention is the records' retention to give the function's store.
func (c Common) Retention() time.Duration {
	if c.DeliveryRetention > 0 {
		return c.DeliveryRetention
	}
	return DefaultDeliveryRetention
}

// check reports what loadCommon refused.
func (c Common) check() error { return firstErr(c.retentionErr, c.sampleErr) }

// firstErr is the first of errs that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Level is the function's log level (boot.Env).
func (c Common) Level() string { return c.LogLevel }

func (c Common) vars() map[string]string {
	v := map[string]string{varStateTable: c.StateTable, varLogLevel: c.LogLevel}
	if c.XRay {
		v[varTracing] = tracingXRay
		if c.XRaySampleRate != 0 {
			v[varTracingSampleRate] = strconv.FormatFloat(c.XRaySampleRate, 'f', -1, 64)
		}
	}
	if c.DeliveryRetention != 0 {
		v[varDeliveryRetention] = c.DeliveryRetention.String()
	}
	return v
}

func loadCommon(getenv func(string) string) Common {
	c := Common{StateTable: getenv(varStateTable), LogLevel: getenv(varLogLevel), XRay: getenv(varTracing) == tracingXRay}
	if c.XRay {
		c.XRayDaemon = getenv(varXRayDaemon)
		c.XRaySampleRate, c.sampleErr = sampleRate(getenv(varTracingSampleRate))
	}
	if s := getenv(varDeliveryRetention); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 24*time.Hour {
			c.retentionErr = fmt.Errorf("%s: %q is not a duration of at least 24h", varDeliveryRetention, s)
		}
		c.DeliveryRetention = d
	}
	return c
}

// sampleRate reads HOOKLINE_TRACING_SAMPLE_RATE: "" is the default (0).
func sampleRate(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r > 0 && r <= 1) {
		return 0, fmt.Errorf("%s: %q is not a share above 0 and at most 1", varTracingSampleRate, s)
	}
	return r, nil
}

// EnqueueEnv is the enqueue function's environment.
type EnqueueEnv struct {
	Common
	// QueueURL (HOOKLINE_DELIVERY_QUEUE_URL) receives delivery messages. Required.
	QueueURL string
	// EventBus (HOOKLINE_EVENT_BUS) is the name (or ARN) of the operator's
	// EventBridge bus, which receives hookline's operational events.
	// Required: the stack always has the bus, and a function that could not
	// tell the operator would drop those events silently.
	EventBus string
	// FailureQueueURL (HOOKLINE_ENQUEUE_FAILURE_QUEUE_URL) is the enqueue
	// failure queue (the stream mapping's on-failure destination), where
	// the operational events the bus keeps refusing are parked. Default:
	// none, and such events fail the batch instead; the stack always sets it.
	FailureQueueURL string
	// SendConcurrency (HOOKLINE_ENQUEUE_SEND_CONCURRENCY) is how many
	// SendMessageBatch requests one invocation has in flight at once, 1 to
	// MaxSendConcurrency. Zero (the variable unset): the handler's default,
	// domain.DefaultEnqueueSendConcurrency.
	SendConcurrency int
	// LaneQueueURL (HOOKLINE_LANE_QUEUE_URL) is the tenant lane
	// (enqueue.Config.LaneQueueURL). Optional: empty (the variable unset)
	// means no lane, and every message goes to QueueURL.
	LaneQueueURL string
	// LaneAfter (HOOKLINE_LANE_AFTER) is how many of one tenant's messages
	// an invocation sends to QueueURL before the rest go to the lane, at
	// least 1. Zero (the variable unset): the handler's default,
	// enqueue.DefaultLaneAfter.
	LaneAfter int
	// FanOutQueueURL (HOOKLINE_FANOUT_QUEUE_URL) is the deferred fan-out
	// queue (enqueue.Config.FanOutQueueURL), which the function both sends
	// to and consumes. Optional: empty (the variable unset) means no
	// deferral, and every record is fanned out inline.
	FanOutQueueURL string
	// MessageLog (HOOKLINE_MESSAGE_LOG "on") says the message log is on:
	// each stream batch's events are listed in its pages in the state
	// table (enqueue.Handler.MessageLog). Default false: none are.
	MessageLog bool
	// EventTypes (HOOKLINE_EVENT_TYPES) is the event-type catalog's file
	// in the function's code, beside its bootstrap (eventtypes.FileName,
	// which infra bundles there): enqueue validates payloads against it.
	// Default: empty, no catalog (and the variable is not set).
	EventTypes string
	// Faults (HOOKLINE_FAULTS) injects failures, for the soak test only.
	// Default: none (and the variable is not set).
	Faults fault.Rates
}

// Vars renders e as the function's environment.
func (e EnqueueEnv) Vars() map[string]string {
	v := e.Common.vars()
	v[varDeliveryQueueURL] = e.QueueURL
	v[varEventBus] = e.EventBus
	if e.FailureQueueURL != "" {
		v[varEnqueueFailureQueue] = e.FailureQueueURL
	}
	if e.SendConcurrency != 0 {
		v[varSendConcurrency] = strconv.Itoa(e.SendConcurrency)
	}
	if e.LaneQueueURL != "" {
		v[varLaneQueueURL] = e.LaneQueueURL
	}
	if e.LaneAfter != 0 {
		v[varLaneAfter] = strconv.Itoa(e.LaneAfter)
	}
	if e.FanOutQueueURL != "" {
		v[varFanOutQueueURL] = e.FanOutQueueURL
	}
	if e.MessageLog {
		v[varMessageLog] = "on"
	}
	eventTypesVar(v, e.EventTypes)
	setFaults(v, e.Faults)
	return v
}

// eventTypesVar sets HOOKLINE_EVENT_TYPES when there is a catalog.
func eventTypesVar(v map[string]string, name string) {
	if name != "" {
		v[varEventTypes] = name
	}
}

// loadEventTypes reads HOOKLINE_EVENT_TYPES: empty, or a file name
// without a directory (the catalog sits beside the bootstrap).
func loadEventTypes(getenv func(string) string) (string, error) {
	s := getenv(varEventTypes)
	if strings.ContainsAny(s, `/\`) || s == "." || s == ".." {
		return "", fmt.Errorf("%s: %q is not a file name beside the bootstrap", varEventTypes, s)
	}
	return s, nil
}

// LoadEnqueue reads and validates the enqueue function's environment.
func LoadEnqueue(getenv func(string) string) (EnqueueEnv, error) {
	faults, err := fault.Parse(getenv(varFaults))
	if err != nil {
		return EnqueueEnv{}, err
	}
	e := EnqueueEnv{Common: loadCommon(getenv), QueueURL: getenv(varDeliveryQueueURL), EventBus: getenv(varEventBus),
		FailureQueueURL: getenv(varEnqueueFailureQueue), LaneQueueURL: getenv(varLaneQueueURL),
		FanOutQueueURL: getenv(varFanOutQueueURL), MessageLog: messageLogOn(getenv(varMessageLog)), Faults: faults}
	if s := getenv(varSendConcurrency); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxSendConcurrency {
			return e, fmt.Errorf("%s: %q is not a whole number from 1 to %d", varSendConcurrency, s, MaxSendConcurrency)
		}
		e.SendConcurrency = n
	}
	if s := getenv(varLaneAfter); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return e, fmt.Errorf("%s: %q is not a whole number of at least 1", varLaneAfter, s)
		}
		e.LaneAfter = n
	}
	if e.EventTypes, err = loadEventTypes(getenv); err != nil {
		return e, err
	}
	return e, firstErr(e.Common.check(), required(varStateTable, e.StateTable, varDeliveryQueueURL, e.QueueURL, varEventBus, e.EventBus))
}

// DeliverEnv is the deliver function's environment.
type DeliverEnv struct {
	Common
	// QueueURL (HOOKLINE_DELIVERY_QUEUE_URL) is the queue the function consumes. Required.
	QueueURL string
	// LaneQueueURL (HOOKLINE_LANE_QUEUE_URL) is the tenant lane, the second
	// queue the function consumes (deliver.Config.LaneQueueURL). Optional:
	// empty (the variable unset) means no lane.
	LaneQueueURL string
	// DLQURL (HOOKLINE_DLQ_URL) receives permanent failures. Required.
	DLQURL string
	// SecretsKeyARN (HOOKLINE_SECRETS_KEY_ARN) is the KMS key the endpoints'
	// signing secrets are sealed with; only ciphertexts of this key are
	// opened. Required.
	SecretsKeyARN string
	// Retry is the retry policy (HOOKLINE_RETRY_*, HOOKLINE_MAX_AGE; see
	// package retry). Default: the documented schedule. Its
	// VisibilityTimeout (HOOKLINE_QUEUE_VISIBILITY_TIMEOUT, default 2 min)
	// must be the delivery queue's: the longest retry delay, 12 h less it
	// less a minute, is what SQS accepts from a message received that long
	// ago. The stack sets it.
	Retry retry.Policy
	// RequestTimeout (HOOKLINE_REQUEST_TIMEOUT) bounds one attempt.
	// Default DefaultRequestTimeout (15s).
	RequestTimeout time.Duration
	// Guard (HOOKLINE_ALLOW_CIDRS, comma-separated CIDRs) lets deliveries
	// reach otherwise refused addresses. Default: none. Its Deny
	// (HOOKLINE_DENY_CIDRS) refuses the static egress VPC's range even
	// there (egress.go). Default: none.
	Guard netguard.Guard
	// DisableAfter (HOOKLINE_DISABLE_AFTER) consecutive failed attempts
	// disable an endpoint. Default DefaultDisableAfter (50); negative: never.
	DisableAfter int
	// FailingAfter (HOOKLINE_FAILING_AFTER) consecutive failed attempts
	// mark an endpoint failing (endpoint.failing). Default
	// DefaultFailingAfter (10); negative: never; must be below a positive
	// DisableAfter.
	FailingAfter int
	// DisableAfterFor (HOOKLINE_DISABLE_AFTER_FOR) is how long an
	// endpoint's run of consecutive failures must have lasted, besides
	// reaching DisableAfter attempts, before the endpoint is disabled.
	// Default domain.DefaultDisableAfterFor (5 days); a positive duration.
	DisableAfterFor time.Duration
	// Breaker is the endpoints' circuit breaker (HOOKLINE_BREAKER_COOLDOWN,
	// default domain.DefaultBreakerCooldown, 10s; HOOKLINE_BREAKER_MAX_COOLDOWN,
	// default domain.DefaultBreakerMaxCooldown, 10m, or the cooldown when
	// that is longer). Both positive, the maximum at least the cooldown and
	// at most MaxBreakerCooldown (15m): a delivery waiting for the breaker
	// is sent again delayed, and SQS delays a message at most 900 s.
	Breaker domain.Breaker
	// EndpointConcurrency (HOOKLINE_ENDPOINT_CONCURRENCY) is the most
	// deliver invocations sending to one endpoint at once while it has not
	// shown itself fast. Default domain.DefaultEndpointConcurrency (3); at
	// least 1.
	EndpointConcurrency int
	// FastConcurrency (HOOKLINE_ENDPOINT_FAST_CONCURRENCY) is the most
	// deliver invocations sending to one endpoint at once while it answers
	// fast. Default DefaultFastConcurrency (10); at least
	// EndpointConcurrency and at most MaxFastConcurrency (100). The stack
	// sets it to the deliver mapping's maximum concurrency.
	FastConcurrency int
	// TenantConcurrency (HOOKLINE_TENANT_CONCURRENCY) is the most deliver
	// invocations sending to one tenant's endpoints not shown fast at
	// once, however many endpoints it spreads over
	// (deliver.Config.TenantConcurrency). Default
	// domain.DefaultTenantConcurrency (6), or FastConcurrency when that is
	// smaller; at least 1 and at most FastConcurrency.
	TenantConcurrency int
	// Notices is where operational events go (HOOKLINE_OUTBOX_TABLE,
	// HOOKLINE_REPLAY_OPS_QUEUE_URL, HOOKLINE_DEAD_NOTICE_WINDOW).
	Notices Notices
	// Faults (HOOKLINE_FAULTS) injects failures, for the soak test only.
	// Default: none (and the variable is not set).
	Faults fault.Rates
	// StatsFlushEvery (HOOKLINE_STATS_FLUSH_EVERY) is how often an
	// instance writes the endpoints' attempt counters it gathered
	// (deliver.Config.StatsFlushEvery). Default DefaultStatsFlushEvery
	// (10s); 0: every batch's at its end; at most MaxStatsFlushEvery (5m).
	StatsFlushEvery time.Duration
	// NoRoleProbe (HOOKLINE_DESTINATION_ROLE_PROBE "off") skips the probe
	// of an AWS destination's role with a wrong external ID
	// (destination.Options.NoProbe). Default false: probe
	// (Props.DisableDestinationRoleProbe; the local cloud, which evaluates
	// no trust policy, turns it off).
	NoRoleProbe bool
	// OwnResources (HOOKLINE_OWN_RESOURCES, comma-separated) are the exact
	// ARNs of the stack's own queues, topic, bus and roles: an AWS
	// destination's target equal to one is dead untried, and every role is
	// assumed with a session policy denying them
	// (destination.Options.OwnResources). The stack sets it once they all
	// exist. Default none.
	OwnResources []string
}

// Vars renders e as the function's environment, the retry policy with its
// defaults filled in.
func (e DeliverEnv) Vars() map[string]string {
	v := e.Common.vars()
	for k, s := range e.Retry.Env() {
		v[k] = s
	}
	v[varDeliveryQueueURL] = e.QueueURL
	if e.LaneQueueURL != "" {
		v[varLaneQueueURL] = e.LaneQueueURL
	}
	v[varDLQURL] = e.DLQURL
	v[varSecretsKeyARN] = e.SecretsKeyARN
	v[varRequestTimeout] = e.RequestTimeout.String()
	guardVars(v, e.Guard)
	v[varDisableAfter] = strconv.Itoa(e.DisableAfter)
	if e.FailingAfter != 0 {
		v[varFailingAfter] = strconv.Itoa(e.FailingAfter)
	}
	e.isolationVars(v)
	e.Notices.vars(v)
	setFaults(v, e.Faults)
	v[varStatsFlushEvery] = e.StatsFlushEvery.String()
	if e.NoRoleProbe {
		v[varRoleProbe] = roleProbeOff
	}
	if len(e.OwnResources) > 0 {
		v[VarOwnResources] = strings.Join(e.OwnResources, ",")
	}
	return v
}

// LoadDeliver reads and validates the deliver function's environment.
func LoadDeliver(getenv func(string) string) (DeliverEnv, error) {
	faults, err := fault.Parse(getenv(varFaults))
	if err != nil {
		return DeliverEnv{}, err
	}
	e := DeliverEnv{
		Common:              loadCommon(getenv),
		QueueURL:            getenv(varDeliveryQueueURL),
		LaneQueueURL:        getenv(varLaneQueueURL),
		DLQURL:              getenv(varDLQURL),
		SecretsKeyARN:       getenv(varSecretsKeyARN),
		RequestTimeout:      DefaultRequestTimeout,
		DisableAfter:        DefaultDisableAfter,
		FailingAfter:        DefaultFailingAfter,
		DisableAfterFor:     domain.DefaultDisableAfterFor,
		Breaker:             domain.Breaker{}.WithDefaults(),
		EndpointConcurrency: domain.DefaultEndpointConcurrency,
		FastConcurrency:     DefaultFastConcurrency,
		TenantConcurrency:   domain.DefaultTenantConcurrency,
		Faults:              faults,
		StatsFlushEvery:     DefaultStatsFlushEvery,
		NoRoleProbe:         getenv(varRoleProbe) == roleProbeOff,
		OwnResources:        splitList(getenv(VarOwnResources)),
	}
	if err := firstErr(e.Common.check(), required(varStateTable, e.StateTable, varDeliveryQueueURL, e.QueueURL, varDLQURL, e.DLQURL, varSecretsKeyARN, e.SecretsKeyARN)); err != nil {
		return e, err
	}
	if e.Retry, err = retry.FromEnv(getenv); err != nil {
		return e, err
	}
	if s := getenv(varRequestTimeout); s != "" {
		if e.RequestTimeout, err = time.ParseDuration(s); err != nil || e.RequestTimeout <= 0 {
			return e, fmt.Errorf("%s: %q is not a positive duration", varRequestTimeout, s)
		}
	}
	if s := getenv(varDisableAfter); s != "" {
		if e.DisableAfter, err = strconv.Atoi(s); err != nil || e.DisableAfter == 0 {
			return e, fmt.Errorf("%s: %q is not a non-zero whole number", varDisableAfter, s)
		}
	}
	if e.Guard, err = loadGuard(getenv); err != nil {
		return e, err
	}
	if err := e.loadHealth(getenv); err != nil {
		return e, err
	}
	if err := e.loadIsolation(getenv); err != nil {
		return e, err
	}
	if e.Notices, err = loadNotices(getenv); err != nil {
		return e, err
	}
	return e, e.loadStatsFlush(getenv)
}

// loadStatsFlush reads how often the counters are written.
func (e *DeliverEnv) loadStatsFlush(getenv func(string) string) error {
	s := getenv(varStatsFlushEvery)
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxStatsFlushEvery {
		return fmt.Errorf("%s: %q is not a duration from 0 to %s", varStatsFlushEvery, s, MaxStatsFlushEvery)
	}
	e.StatsFlushEvery = d
	return nil
}

// loadHealth reads the failing threshold, below the disable threshold.
func (e *DeliverEnv) loadHealth(getenv func(string) string) error {
	if s := getenv(varFailingAfter); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n == 0 {
			return fmt.Errorf("%s: %q is not a non-zero whole number", varFailingAfter, s)
		}
		e.FailingAfter = n
	}
	if e.FailingAfter > 0 && e.DisableAfter > 0 && e.FailingAfter >= e.DisableAfter {
		return fmt.Errorf("%s %d must be below %s %d", varFailingAfter, e.FailingAfter, varDisableAfter, e.DisableAfter)
	}
	return nil
}

// isolationVars renders the patient disable, the circuit breaker and the
// endpoint concurrency gate, each only when set (zero: the default).
func (e DeliverEnv) isolationVars(v map[string]string) {
	if e.DisableAfterFor != 0 {
		v[varDisableAfterFor] = e.DisableAfterFor.String()
	}
	if e.Breaker.Cooldown != 0 {
		v[varBreakerCooldown] = e.Breaker.Cooldown.String()
	}
	if e.Breaker.MaxCooldown != 0 {
		v[varBreakerMaxCooldown] = e.Breaker.MaxCooldown.String()
	}
	if e.EndpointConcurrency != 0 {
		v[varEndpointConcurrency] = strconv.Itoa(e.EndpointConcurrency)
	}
	if e.FastConcurrency != 0 {
		v[varFastConcurrency] = strconv.Itoa(e.FastConcurrency)
	}
	if e.TenantConcurrency != 0 {
		v[varTenantConcurrency] = strconv.Itoa(e.TenantConcurrency)
	}
}

// loadIsolation reads the patient disable, the circuit breaker and the
// endpoint concurrency gate over their defaults, and refuses what cannot
// work: a breaker open longer than SQS can delay a message, a fast limit
// below the slow one.
func (e *DeliverEnv) loadIsolation(getenv func(string) string) error {
	if s := getenv(varDisableAfterFor); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: %q is not a positive duration", varDisableAfterFor, s)
		}
		e.DisableAfterFor = d
	}
	var b domain.Breaker
	for _, f := range []struct {
		name  string
		field *time.Duration
	}{{varBreakerCooldown, &b.Cooldown}, {varBreakerMaxCooldown, &b.MaxCooldown}} {
		if s := getenv(f.name); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 || d > MaxBreakerCooldown {
				return fmt.Errorf("%s: %q is not a duration above 0 and at most %s (SQS delays a message at most 900 s)", f.name, s, MaxBreakerCooldown)
			}
			*f.field = d
		}
	}
	// An unset maximum follows a longer cooldown (domain.Breaker's
	// defaults); a set one below the cooldown is refused.
	if b.MaxCooldown != 0 && b.MaxCooldown < b.WithDefaults().Cooldown {
		return fmt.Errorf("%s %s must be at least %s %s", varBreakerMaxCooldown, b.MaxCooldown, varBreakerCooldown, b.WithDefaults().Cooldown)
	}
	e.Breaker = b.WithDefaults()
	if s := getenv(varEndpointConcurrency); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a whole number of at least 1", varEndpointConcurrency, s)
		}
		e.EndpointConcurrency = n
	}
	if s := getenv(varFastConcurrency); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxFastConcurrency {
			return fmt.Errorf("%s: %q is not a whole number from 1 to %d", varFastConcurrency, s, MaxFastConcurrency)
		}
		e.FastConcurrency = n
	}
	if e.FastConcurrency < e.EndpointConcurrency {
		return fmt.Errorf("%s %d must be at least %s %d", varFastConcurrency, e.FastConcurrency, varEndpointConcurrency, e.EndpointConcurrency)
	}
	if s := getenv(varTenantConcurrency); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a whole number of at least 1", varTenantConcurrency, s)
		}
		e.TenantConcurrency = n
	} else {
		// Unset: the default, within a small pool.
		e.TenantConcurrency = min(e.TenantConcurrency, e.FastConcurrency)
	}
	if e.TenantConcurrency > e.FastConcurrency {
		return fmt.Errorf("%s %d must be at most %s %d", varTenantConcurrency, e.TenantConcurrency, varFastConcurrency, e.FastConcurrency)
	}
	return nil
}

// APIEnv is the api function's environment.
type APIEnv struct {
	Common
	// OperatorKey (HOOKLINE_OPERATOR_KEY) reaches the admin routes; or
	// OperatorKeySecretARN (HOOKLINE_OPERATOR_KEY_SECRET_ARN) names the
	// Secrets Manager secret holding it, read by the first admin request
	// (not at start: a cold start makes no network call) and read again
	// when it is a minute old (api.DefaultOperatorKeyTTL), so a rotation
	// takes effect within a minute. One is required; OperatorKey wins. The
	// stack sets the secret only; Vars leaves an empty OperatorKey unset.
	OperatorKey          string
	OperatorKeySecretARN string
	// URLs (HOOKLINE_ALLOW_HTTP=true, HOOKLINE_ALLOW_CIDRS,
	// HOOKLINE_DENY_CIDRS) is the registration check of endpoint URLs.
	// Default: https, public hosts only.
	URLs netguard.URLPolicy
	// EgressIPs (HOOKLINE_EGRESS_IPS, comma-separated IP addresses) are
	// the public addresses deliveries leave from with static egress (the
	// NAT gateways' Elastic IPs), which GET /v1/egress-ips shows tenants.
	// Default none: hookline sends from AWS's shared ranges.
	EgressIPs []string
	// Mail sends notification addresses their verification e-mail
	// (mail.go).
	Mail Mail
	// EventTypes (HOOKLINE_EVENT_TYPES) is the event-type catalog's file
	// beside the bootstrap (EnqueueEnv.EventTypes): GET /v1/event-types
	// shows it, endpoints' event_types are held to it, and a test event
	// may be one of its types. Default: empty, no catalog.
	EventTypes string
	// SecretsKeyARN (HOOKLINE_SECRETS_KEY_ARN) is the KMS key new signing
	// secrets are sealed with before they are stored (the function may
	// encrypt with it, never decrypt). Required.
	SecretsKeyARN string
	// ReplayQueueURL (HOOKLINE_REPLAY_QUEUE_URL) receives tenants' replay
	// jobs. Empty: the replay routes answer 503.
	ReplayQueueURL string
	// ReplayOpsQueueURL (HOOKLINE_REPLAY_OPS_QUEUE_URL) receives the
	// operator's redrive, away from tenants' jobs. Empty: ReplayQueueURL.
	ReplayOpsQueueURL string
	// OutboxTable (HOOKLINE_OUTBOX_TABLE) receives the events published
	// through the API (POST /v1/events) and the test events (POST
	// /v1/endpoints/{id}/test), and holds the message log. Empty: those
	// routes answer 503.
	OutboxTable string
	// MessageLog (HOOKLINE_MESSAGE_LOG, "on" or "sharded") says the outbox
	// table has the message log's index (a Query lists events, a GetItem
	// reads one). Default off: the message log routes answer 503.
	MessageLog bool
	// MessageLogSharded (HOOKLINE_MESSAGE_LOG "sharded") says the outbox
	// has the sharded index by_tenant_shard only: the log is listed from
	// it. Default false: from the unsharded by_tenant, kept beside it
	// (messagelog.Reader.Legacy).
	MessageLogSharded bool
	// PayloadRetention (HOOKLINE_PAYLOAD_RETENTION) is how long after its
	// occurred_at an event's payload is served. Default
	// DefaultPayloadRetention (15 days).
	PayloadRetention time.Duration
	// DeliveryQueueURL (HOOKLINE_DELIVERY_QUEUE_URL) receives the resends
	// of delivered deliveries. Empty: such a resend answers 503.
	DeliveryQueueURL string
	// ConsoleFrameAncestors (HOOKLINE_CONSOLE_FRAME_ANCESTORS, sources
	// separated by spaces) may embed the console in a frame: the CSP's
	// frame-ancestors, checked by ParseFrameAncestors. Default none ('none').
	ConsoleFrameAncestors []string
	// AlarmNamePrefix (HOOKLINE_ALARM_NAME_PREFIX) starts the name of every
	// alarm of the instance, and of no other ("<stack>.<instance>.", which
	// no other stack's alarm starts with: hookline names its alarms): GET
	// /v1/admin/alarms lists those in ALARM. Empty:
	// that route answers 503.
	AlarmNamePrefix string
	// PortalMinTTL (HOOKLINE_PORTAL_MIN_TTL) is the shortest life a portal
	// link may be minted with. Default 60 s; the local cloud's deployment
	// lowers it (to 1 s) so that the end-to-end tests see a link expire.
	PortalMinTTL time.Duration
	// TenantExpensiveRate (HOOKLINE_API_TENANT_EXPENSIVE_RATE) is the most
	// expensive requests (listings, metrics, event lookups, JWKS, replays,
	// resends, cancels) a second one tenant may make, across every
	// execution environment; over it, 429. Default
	// DefaultTenantExpensiveRate (5); negative: no limit.
	TenantExpensiveRate int
	// ExpensiveBudget (HOOKLINE_API_EXPENSIVE_BUDGET) is the longest an
	// expensive request may run before it is stopped (503). Default
	// DefaultExpensiveBudget (2 s); negative: none.
	ExpensiveBudget time.Duration
	// OperatorIAM (HOOKLINE_OPERATOR_IAM, "on") says API Gateway
	// authorizes the operator routes by IAM (AWS_IAM): the function takes
	// a request to them that carries the IAM identity API Gateway verified
	// as the operator's, and the operator key no longer reaches them.
	// Default off: the operator key.
	OperatorIAM bool
	// Destinations are the AWS destinations registration accepts
	// (destinations.go). Default: the function's own region, any account.
	Destinations Destinations
	// Endpoints is what an endpoint's own retry schedule and timeout are
	// held to at registration.
	Endpoints EndpointLimits
}

// EndpointLimits are the stack's settings that an endpoint's own retry
// schedule and request timeout must fit.
type EndpointLimits struct {
	// Retry is the stack's retry policy (HOOKLINE_RETRY_*, HOOKLINE_MAX_AGE,
	// the deliver function's): an endpoint's schedule may have no more
	// attempts than it (the queue's maxReceiveCount) and add up to no more
	// than its age cap (retry.CheckEndpointSchedule). Default: the
	// documented schedule.
	Retry retry.Policy
	// MaxRequestTimeout (HOOKLINE_MAX_REQUEST_TIMEOUT) is the longest
	// request timeout an endpoint may set: the deliver function's timeout
	// is sized for it. Default DefaultRequestTimeout (15s).
	MaxRequestTimeout time.Duration
	// MaxEndpoints (HOOKLINE_MAX_ENDPOINTS) is how many endpoints a tenant
	// may have: a create beyond answers 409. Default
	// domain.DefaultMaxEndpoints (100); at least 1.
	MaxEndpoints int
	// MaxEndpointBytes (HOOKLINE_MAX_ENDPOINT_BYTES) bounds the bytes a
	// tenant writes into one endpoint (domain.Endpoint.TenantBytes): a
	// create or update beyond answers 400. Default
	// domain.DefaultMaxEndpointBytes (16 KiB); at least
	// MinMaxEndpointBytes (8 KiB).
	MaxEndpointBytes int
	// MaxMetricsEventTypes (HOOKLINE_MAX_METRICS_EVENT_TYPES) is how many
	// event types group_by=event_type answers, the rest summed as
	// "other". Default domain.DefaultMaxMetricsEventTypes (50); at least 1.
	MaxMetricsEventTypes int
}

// MinMaxEndpointBytes is the lowest MaxEndpointBytes accepted: a URL of
// 2 KiB and a filter of 4 KiB fit, with room for a few headers.
const MinMaxEndpointBytes = 8 << 10

func (l EndpointLimits) vars(v map[string]string) {
	for k, s := range l.Retry.Env() {
		v[k] = s
	}
	if l.MaxRequestTimeout != 0 {
		v[varMaxRequestTimeout] = l.MaxRequestTimeout.String()
	}
	if l.MaxEndpoints != 0 {
		v[varMaxEndpoints] = strconv.Itoa(l.MaxEndpoints)
	}
	if l.MaxEndpointBytes != 0 {
		v[varMaxEndpointBytes] = strconv.Itoa(l.MaxEndpointBytes)
	}
	if l.MaxMetricsEventTypes != 0 {
		v[varMaxMetricsEventTypes] = strconv.Itoa(l.MaxMetricsEventTypes)
	}
}

// loadCap reads a whole number of at least least from name, or keeps *n
// (its default) when name is unset.
func loadCap(getenv func(string) string, name string, least int, n *int) error {
	s := getenv(name)
	if s == "" {
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < least {
		return fmt.Errorf("%s: %q is not a whole number of at least %d", name, s, least)
	}
	*n = v
	return nil
}

func loadEndpointLimits(getenv func(string) string) (EndpointLimits, error) {
	l := EndpointLimits{
		MaxRequestTimeout: DefaultRequestTimeout, MaxEndpoints: domain.DefaultMaxEndpoints,
		MaxEndpointBytes: domain.DefaultMaxEndpointBytes, MaxMetricsEventTypes: domain.DefaultMaxMetricsEventTypes,
	}
	for _, c := range []struct {
		name  string
		least int
		n     *int
	}{{varMaxEndpoints, 1, &l.MaxEndpoints}, {varMaxEndpointBytes, MinMaxEndpointBytes, &l.MaxEndpointBytes}, {varMaxMetricsEventTypes, 1, &l.MaxMetricsEventTypes}} {
		if err := loadCap(getenv, c.name, c.least, c.n); err != nil {
			return l, err
		}
	}
	var err error
	if l.Retry, err = retry.FromEnv(getenv); err != nil {
		return l, err
	}
	if s := getenv(varMaxRequestTimeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second {
			return l, fmt.Errorf("%s: %q is not a duration of at least 1s", varMaxRequestTimeout, s)
		}
		l.MaxRequestTimeout = d
	}
	return l, nil
}

// Vars renders e as the function's environment.
func (e APIEnv) Vars() map[string]string {
	v := e.Common.vars()
	e.Destinations.vars(v)
	if e.OperatorKey != "" {
		v[varOperatorKey] = e.OperatorKey
	}
	v[varOperatorKeySecretARN] = e.OperatorKeySecretARN
	v[varAllowHTTP] = strconv.FormatBool(e.URLs.AllowHTTP)
	guardVars(v, e.URLs.Guard)
	egressVars(v, e.EgressIPs)
	e.Mail.vars(v)
	eventTypesVar(v, e.EventTypes)
	v[varSecretsKeyARN] = e.SecretsKeyARN
	v[varReplayQueueURL] = e.ReplayQueueURL
	v[varReplayOpsQueueURL] = e.ReplayOpsQueueURL
	v[varOutboxTable] = e.OutboxTable
	v[varDeliveryQueueURL] = e.DeliveryQueueURL
	if e.MessageLog {
		v[varMessageLog] = messageLogVar(e.MessageLogSharded)
	}
	if e.PayloadRetention != 0 {
		v[varPayloadRetention] = e.PayloadRetention.String()
	}
	if len(e.ConsoleFrameAncestors) > 0 {
		v[varFrameAncestors] = strings.Join(e.ConsoleFrameAncestors, " ")
	}
	if e.AlarmNamePrefix != "" {
		v[varAlarmNamePrefix] = e.AlarmNamePrefix
	}
	if e.PortalMinTTL != 0 {
		v[varPortalMinTTL] = e.PortalMinTTL.String()
	}
	if e.TenantExpensiveRate != 0 {
		v[varTenantExpensiveRate] = strconv.Itoa(e.TenantExpensiveRate)
	}
	if e.ExpensiveBudget != 0 {
		v[varExpensiveBudget] = e.ExpensiveBudget.String()
	}
	if e.OperatorIAM {
		v[varOperatorIAM] = "on"
	}
	e.Endpoints.vars(v)
	return v
}

// loadTenantLimit reads the per-tenant bounds of the API's expensive
// routes: DefaultTenantExpensiveRate and DefaultExpensiveBudget unless set.
func loadTenantLimit(getenv func(string) string) (rate int, budget time.Duration, err error) {
	rate, budget = DefaultTenantExpensiveRate, DefaultExpensiveBudget
	if s := getenv(varTenantExpensiveRate); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n == 0 {
			return rate, budget, fmt.Errorf("%s: %q is not a whole number of requests a second (negative: no limit)", varTenantExpensiveRate, s)
		}
		rate = n
	}
	if s := getenv(varExpensiveBudget); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d == 0 {
			return rate, budget, fmt.Errorf("%s: %q is not a duration (negative: none)", varExpensiveBudget, s)
		}
		budget = d
	}
	return rate, budget, nil
}

// LoadAPI reads and validates the api function's environment.
func LoadAPI(getenv func(string) string) (APIEnv, error) {
	e := APIEnv{
		Common:               loadCommon(getenv),
		OperatorKey:          getenv(varOperatorKey),
		OperatorKeySecretARN: getenv(varOperatorKeySecretARN),
		SecretsKeyARN:        getenv(varSecretsKeyARN),
		ReplayQueueURL:       getenv(varReplayQueueURL),
		ReplayOpsQueueURL:    getenv(varReplayOpsQueueURL),
		OutboxTable:          getenv(varOutboxTable),
		DeliveryQueueURL:     getenv(varDeliveryQueueURL),
		MessageLog:           messageLogOn(getenv(varMessageLog)),
		MessageLogSharded:    getenv(varMessageLog) == messageLogShardedVar,
		PayloadRetention:     DefaultPayloadRetention,
		AlarmNamePrefix:      getenv(varAlarmNamePrefix),
		PortalMinTTL:         DefaultPortalMinTTL,
		OperatorIAM:          getenv(varOperatorIAM) == "on",
		Destinations:         loadDestinations(getenv),
	}
	fa, err := ParseFrameAncestors(getenv(varFrameAncestors))
	if err != nil {
		return e, fmt.Errorf("%s: %w", varFrameAncestors, err)
	}
	e.ConsoleFrameAncestors = fa
	if s := getenv(varPortalMinTTL); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second || d > DefaultPortalMinTTL {
			return e, fmt.Errorf("%s: %q is not a duration from 1s to %s", varPortalMinTTL, s, DefaultPortalMinTTL)
		}
		e.PortalMinTTL = d
	}
	if e.TenantExpensiveRate, e.ExpensiveBudget, err = loadTenantLimit(getenv); err != nil {
		return e, err
	}
	if e.PayloadRetention, err = loadPayloadRetention(getenv); err != nil {
		return e, err
	}
	if e.EventTypes, err = loadEventTypes(getenv); err != nil {
		return e, err
	}
	if err := firstErr(e.Common.check(), required(varStateTable, e.StateTable, varSecretsKeyARN, e.SecretsKeyARN)); err != nil {
		return e, err
	}
	if e.OperatorKey == "" && e.OperatorKeySecretARN == "" {
		return e, fmt.Errorf("%s or %s is required", varOperatorKey, varOperatorKeySecretARN)
	}
	if s := getenv(varAllowHTTP); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return e, fmt.Errorf("%s: %q is not true or false", varAllowHTTP, s)
		}
		e.URLs.AllowHTTP = b
	}
	if err := e.loadOutbound(getenv); err != nil {
		return e, err
	}
	e.Endpoints, err = loadEndpointLimits(getenv)
	return e, err
}

// loadOutbound reads what the api knows of hookline's outbound traffic:
// the guard of registration checks, static egress's addresses, the
// sender of its e-mails.
func (e *APIEnv) loadOutbound(getenv func(string) string) error {
	var err error
	if e.URLs.Guard, err = loadGuard(getenv); err != nil {
		return err
	}
	if e.EgressIPs, err = loadEgressIPs(getenv); err != nil {
		return err
	}
	e.Mail, err = loadMail(getenv)
	return err
}

// ReplayEnv is the replay function's environment.
type ReplayEnv struct {
	Common
	// DeliveryQueueURL (HOOKLINE_DELIVERY_QUEUE_URL), DLQURL
	// (HOOKLINE_DLQ_URL), ArrivalsURL (HOOKLINE_DLQ_ARRIVALS_URL: the
	// delivery queues' redrive target, moved to the DLQ by the sweep) and
	// JobsQueueURL (HOOKLINE_REPLAY_QUEUE_URL) are required.
	DeliveryQueueURL, DLQURL, ArrivalsURL, JobsQueueURL string
	// OpsQueueURL (HOOKLINE_REPLAY_OPS_QUEUE_URL) carries the redrive and
	// the sweeps, gauges and job recoveries. Empty: JobsQueueURL.
	OpsQueueURL string
	// Rate (HOOKLINE_REPLAY_RATE) is the sends per second of one job.
	// Default DefaultReplayRate (10).
	Rate float64
	// OutboxTable (HOOKLINE_OUTBOX_TABLE) receives the delivery.dead
	// summaries, and a tenant's erasure deletes the tenant's items from it.
	// Empty: the notices are dropped, and an erasure's steps fail.
	OutboxTable string
	// MessageLog (HOOKLINE_MESSAGE_LOG, "on" or "sharded") says the outbox
	// table has the message log's index, through which an erasure finds
	// the tenant's outbox items. Default off: they are left to expire by
	// their TTL.
	MessageLog bool
	// MessageLogSharded (HOOKLINE_MESSAGE_LOG "sharded") says that index is
	// the sharded by_tenant_shard alone. Default false: the erasure reads
	// the unsharded by_tenant (erasure.OutboxTable.Legacy).
	MessageLogSharded bool
	// DeadNoticeWindow (HOOKLINE_DEAD_NOTICE_WINDOW) is delivery.dead's
	// coalescing window, deliver's, for the missed deaths the sweep
	// records. Default DefaultDeadNoticeWindow (5m).
	DeadNoticeWindow time.Duration
	// PayloadRetention (HOOKLINE_PAYLOAD_RETENTION) is how long after its
	// occurred_at an event's payload may be sent again by a replay since a
	// time, the API's rule (APIEnv.PayloadRetention). Default
	// DefaultPayloadRetention (15 days).
	PayloadRetention time.Duration
	// Mail sends the notices of operational events (mail.go).
	Mail Mail
}

// messageLogShardedVar is HOOKLINE_MESSAGE_LOG's value for a message log
// of the sharded index alone; "on" keeps the unsharded one beside it.
const messageLogShardedVar = "sharded"

func messageLogVar(sharded bool) string {
	if sharded {
		return messageLogShardedVar
	}
	return "on"
}

func messageLogOn(v string) bool { return v == "on" || v == messageLogShardedVar }

// Vars renders e as the function's environment.
func (e ReplayEnv) Vars() map[string]string {
	v := e.Common.vars()
	v[varDeliveryQueueURL] = e.DeliveryQueueURL
	v[varDLQURL] = e.DLQURL
	v[varDLQArrivalsURL] = e.ArrivalsURL
	v[varReplayQueueURL] = e.JobsQueueURL
	v[varReplayOpsQueueURL] = e.OpsQueueURL
	v[varReplayRate] = strconv.FormatFloat(e.Rate, 'f', -1, 64)
	v[varOutboxTable] = e.OutboxTable
	if e.MessageLog {
		v[varMessageLog] = messageLogVar(e.MessageLogSharded)
	}
	if e.DeadNoticeWindow != 0 {
		v[varDeadNoticeWindow] = e.DeadNoticeWindow.String()
	}
	if e.PayloadRetention != 0 {
		v[varPayloadRetention] = e.PayloadRetention.String()
	}
	e.Mail.vars(v)
	return v
}

// LoadReplay reads and validates the replay function's environment.
func LoadReplay(getenv func(string) string) (ReplayEnv, error) {
	e := ReplayEnv{
		Common:            loadCommon(getenv),
		DeliveryQueueURL:  getenv(varDeliveryQueueURL),
		DLQURL:            getenv(varDLQURL),
		ArrivalsURL:       getenv(varDLQArrivalsURL),
		JobsQueueURL:      getenv(varReplayQueueURL),
		OpsQueueURL:       getenv(varReplayOpsQueueURL),
		Rate:              DefaultReplayRate,
		MessageLog:        messageLogOn(getenv(varMessageLog)),
		MessageLogSharded: getenv(varMessageLog) == messageLogShardedVar,
	}
	if err := firstErr(e.Common.check(), required(varStateTable, e.StateTable, varDeliveryQueueURL, e.DeliveryQueueURL, varDLQURL, e.DLQURL, varDLQArrivalsURL, e.ArrivalsURL, varReplayQueueURL, e.JobsQueueURL)); err != nil {
		return e, err
	}
	if s := getenv(varReplayRate); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r <= 0 || r > 1000 {
			return e, fmt.Errorf("%s: %q is not a rate from 0 to 1000 per second", varReplayRate, s)
		}
		e.Rate = r
	}
	n, err := loadNotices(getenv)
	e.OutboxTable, e.DeadNoticeWindow = n.OutboxTable, n.DeadNoticeWindow
	if err != nil {
		return e, err
	}
	if e.PayloadRetention, err = loadPayloadRetention(getenv); err != nil {
		return e, err
	}
	e.Mail, err = loadMail(getenv)
	return e, err
}

// loadPayloadRetention reads HOOKLINE_PAYLOAD_RETENTION: a duration above
// 0, DefaultPayloadRetention when unset.
func loadPayloadRetention(getenv func(string) string) (time.Duration, error) {
	s := getenv(varPayloadRetention)
	if s == "" {
		return DefaultPayloadRetention, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a duration above 0", varPayloadRetention, s)
	}
	return d, nil
}

// required answers "NAME is required" for the first empty value of the
// name, value pairs.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("%s is required", pairs[i])
		}
	}
	return nil
}

// setFaults sets HOOKLINE_FAULTS when any rate is configured: a function
// deployed without faults has no such variable.
func setFaults(v map[string]string, r fault.Rates) {
	if len(r) > 0 {
		v[varFaults] = r.String()
	}
}

// prefixes renders an allowlist as HOOKLINE_ALLOW_CIDRS spells it.
func prefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}
