package hookline

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/netguard"
)

// Hookline is one hookline instance: what New built, for the app to wire
// to its producers, give outputs, alarm on or grant to. Every resource's
// physical name is left to CloudFormation, so several instances can live in
// one stack or account.
type Hookline struct {
	// Construct is the scope holding every resource of the instance.
	Construct constructs.Construct
	// OutboxTable receives producers' events (outbox.TransactPut, in the
	// producer's own TransactWriteItems); GrantWriteOutbox lets a producer
	// write to it. Its NEW_IMAGE stream feeds the enqueue function.
	OutboxTable awsdynamodb.Table
	// StateTable holds tenants, API keys, endpoints, deliveries and
	// rejected outbox items; only hookline's functions read or write it.
	StateTable awsdynamodb.Table
	// DeliveryQueue holds the deliveries waiting for the deliver function;
	// DeadLetterQueue those that could not be made (the DLQ);
	// EnqueueFailureQueue the outbox stream batches enqueue could not
	// process (their positions, for the operator's reprocessing).
	DeliveryQueue, DeadLetterQueue, EnqueueFailureQueue awssqs.Queue
	// LaneQueue is the tenant lane: the second queue the deliver function
	// consumes, holding the deliveries of tenants over their share; its
	// messages die to DeadLetterQueue as the delivery queue's do.
	LaneQueue awssqs.Queue
	// ArrivalsQueue is the delivery queue's and the lane's redrive target,
	// whose messages the replay function's scheduled sweep checks and
	// moves to DeadLetterQueue.
	ArrivalsQueue awssqs.Queue
	// FanOutQueue is the deferred fan-out queue: the part of a record's
	// fan-out past its tenant's share of a stream invocation, which the
	// enqueue function sends there and consumes on a mapping of its own,
	// sending the deliveries to LaneQueue; FanOutDeadLetterQueue holds
	// those that failed 10 times (docs/architecture.md, "Deferred
	// fan-out").
	FanOutQueue, FanOutDeadLetterQueue awssqs.Queue
	// JobsQueue holds tenants' jobs (replays, cancels); ReplayOpsQueue the
	// operator's (redrives, erasures) and the scheduled sweeps, for the
	// replay worker. The template names them as before: the queues'
	// construct ids Replay/Jobs and Replay/Ops.
	JobsQueue, ReplayOpsQueue awssqs.Queue
	// API is the tenant and operator HTTP API (and the console); URL its
	// base URL (a token until deployment).
	API awsapigatewayv2.HttpApi
	URL *string
	// APIAccessLogs is the API's access log group, one JSON line a request.
	APIAccessLogs awslogs.LogGroup
	// OperatorKey is the Secrets Manager secret holding the operator key
	// (the /v1/admin routes), generated at deploy time;
	// GrantOperatorKeyRead lets an operator's tooling read it.
	OperatorKey awssecretsmanager.Secret
	// SecretsKey is the KMS key sealing the endpoints' signing secrets. Its
	// key policy names every principal that may use it (the deliver role
	// decrypts, the api role encrypts, both by aws:PrincipalArn) and its
	// administrators (Props.KeyAdmins, who may also encrypt signing
	// secrets: make seal-secrets): the account's IAM policies cannot grant
	// any other cryptographic action on it, so its Grant methods have no
	// effect.
	SecretsKey awskms.Key
	// AlarmTopic receives every alarm's state changes: subscribe the
	// on-call (Props.AlarmEmail does it for one address).
	AlarmTopic awssns.Topic
	// Alarms are the instance's CloudWatch alarms by name (DLQDepth,
	// TenantDLQDepth, EnqueueFailures, ..., <Function>Errors).
	Alarms map[string]awscloudwatch.Alarm
	// Dashboard is the instance's CloudWatch dashboard.
	Dashboard awscloudwatch.Dashboard
	// OperatorBus is the EventBridge bus carrying the operational events
	// (endpoint.disabled, endpoint.failing, endpoint.recovered,
	// delivery.dead): add your rules to it.
	OperatorBus awsevents.EventBus
	// EnqueueReprocessPolicy is a managed policy to attach to the operator
	// who reprocesses parked stream batches (docs/operations.md).
	EnqueueReprocessPolicy awsiam.ManagedPolicy
	// Functions are the four Lambda functions.
	Functions Functions
	// EgressVPC is the VPC the deliver function runs in with static
	// egress (Props.StaticEgressAZs), EgressIPs its NAT gateways' public
	// addresses joined by commas (a token until deployment: the app's
	// EgressIPs output). Both nil without static egress.
	EgressVPC awsec2.Vpc
	EgressIPs *string
	// MaxReceiveCount is the delivery queue's maxReceiveCount: the retry
	// schedule's number of attempts.
	MaxReceiveCount int
}

// Functions are hookline's Lambda functions.
type Functions struct {
	// Enqueue fans outbox events out to endpoints (the outbox stream).
	Enqueue awslambda.Function
	// Deliver POSTs deliveries to endpoints (the delivery queue).
	Deliver awslambda.Function
	// API serves the HTTP API.
	API awslambda.Function
	// Replay runs replays, redrives and the scheduled sweeps.
	Replay awslambda.Function
}

// New adds a hookline instance to scope (any construct of a stack: the
// stack itself, or a construct of the app's), configured by p (nil: the
// defaults). It returns an error, and creates nothing, when p cannot be
// deployed (naming the field) or the functions' code cannot be had
// (Props.Code). Outputs are the app's: New adds none.
func New(scope constructs.Construct, id string, p *Props) (*Hookline, error) {
	h, _, err := newHookline(scope, id, p)
	return h, err
}

// newHookline is New, also returning the cdk-nag findings it accepts (for
// the test that runs cdk-nag).
func newHookline(scope constructs.Construct, id string, props *Props) (*Hookline, []nagSuppression, error) {
	p, deliver, code, err := prepare(props)
	if err != nil {
		return nil, nil, err
	}
	c := constructs.NewConstruct(scope, &id)
	alarmPrefix := alarmNamePrefix(c)

	tables := newTables(c, "Tables", !p.DisableMessageLog, p.KeepLegacyMessageLogIndex, !p.DeferDeliveryLogIndex)
	secretsKey := newSecretsKey(c, "SigningSecretsKey", p.KeyAdmins)
	queues := newDeliveryQueues(c, "Queues", queuesProps{
		MaxReceiveCount: p.Retry.Attempts(), DLQRetention: p.DLQRetention,
		VisibilityTimeout:     p.Retry.VisibilityTimeout, // six times DeliverTimeout
		AlarmThreshold:        p.DLQAlarmThreshold,
		FailureAlarmThreshold: p.EnqueueFailuresThreshold,
	})
	bus := newOperatorBus(c, "OperatorEvents")
	egress := newStaticEgress(c, "Egress", p.StaticEgressAZs)
	fns := newPipelineFunctions(c, "Pipeline", pipelineFunctionsProps(p, code, tables, queues, secretsKey, bus.Bus, deliver, egress))

	defaults := functionDefaults{Architecture: p.Architecture, Code: code, LogLevel: p.LogLevel, StateTable: tables.State, DeliveryRetention: p.DeliveryRetention, Tracing: p.Tracing, TracingSampleRate: p.TracingSampleRate}
	replay := newReplay(c, "Replay", replayPropsOf(p, defaults, queues, tables))
	grantNotices(fns.Deliver, tables.Outbox, replay.Ops)
	httpAPI := newAPI(c, "Api", apiPropsOf(p, defaults, deliver, replay, tables, queues, secretsKey, alarmPrefix, egress))
	allowSecretsKeyUse(secretsKey, fns.Deliver, httpAPI.Function)
	functions := map[string]awslambda.Function{"Enqueue": fns.Enqueue, "Deliver": fns.Deliver, "Api": httpAPI.Function, "Replay": replay.Function}
	ops := newOperations(c, "Operations", operationsProps(p, queues, replay, fns.Enqueue, functions, alarmPrefix))
	bus.routeToAlarms(p.OperatorEventsToAlarms, ops.Topic)
	newNotices(c, p, bus.Bus, replay.Ops, httpAPI.Function, replay.Function)
	guardOwnResources(ownResources{
		// The fan-out queue above all: a message sent there is fanned out
		// as its tenant's event.
		Queues: []awssqs.Queue{queues.Delivery, queues.Lane, queues.DeadLetter, queues.Arrivals, queues.EnqueueFailures, queues.FanOut, queues.FanOutDeadLetter, replay.Jobs, replay.Ops},
		Bus:    bus.Bus, Topic: ops.Topic,
		Functions: []awslambda.Function{fns.Enqueue, fns.Deliver, httpAPI.Function, replay.Function},
	}, fns.Deliver, httpAPI.Function)

	// The id (the policy's logical id) keeps its earlier name so that an upgrade keeps the policy.
	reprocess := newEnqueueReprocessPolicy(c, "EnqueueRedrivePolicy", reprocessProps{
		Failures: queues.EnqueueFailures, Outbox: tables.Outbox, Enqueue: fns.Enqueue, Bus: bus.Bus,
	})

	nameAlarms(c, alarmPrefix)

	accepted := nagSuppressions(nagTargets{
		API: httpAPI, EnqueueFailures: queues.EnqueueFailures, DeadLetter: queues.DeadLetter, StateTable: tables.State,
		Enqueue: fns.Enqueue, Functions: functions, AlarmInstance: alarmInstanceName(c), Tracing: p.Tracing, Egress: egress,
	})
	suppressNagFindings(accepted)

	h := assemble(c, tables, queues, replay, httpAPI, ops, bus, reprocess, secretsKey, fns, p.Retry.Attempts())
	if egress != nil {
		h.EgressVPC, h.EgressIPs = egress.VPC, egress.ips()
	}
	return h, accepted, nil
}

// assemble is the Hookline New returns, from the parts it built.
func assemble(c constructs.Construct, tables tableSet, queues deliveryQueues, replay replayParts, httpAPI apiParts, ops operationsParts,
	bus operatorBus, reprocess awsiam.ManagedPolicy, secretsKey awskms.Key, fns pipelineFunctions, attempts int) *Hookline {
	return &Hookline{
		Construct:   c,
		OutboxTable: tables.Outbox, StateTable: tables.State,
		DeliveryQueue: queues.Delivery, DeadLetterQueue: queues.DeadLetter, EnqueueFailureQueue: queues.EnqueueFailures, LaneQueue: queues.Lane, ArrivalsQueue: queues.Arrivals,
		FanOutQueue: queues.FanOut, FanOutDeadLetterQueue: queues.FanOutDeadLetter,
		JobsQueue: replay.Jobs, ReplayOpsQueue: replay.Ops,
		API: httpAPI.API, URL: httpAPI.API.ApiEndpoint(), APIAccessLogs: httpAPI.AccessLogs, OperatorKey: httpAPI.OperatorKey,
		SecretsKey: secretsKey, AlarmTopic: ops.Topic, Alarms: ops.Alarms, Dashboard: ops.Dashboard,
		OperatorBus: bus.Bus, EnqueueReprocessPolicy: reprocess,
		Functions:       Functions{Enqueue: fns.Enqueue, Deliver: fns.Deliver, API: httpAPI.Function, Replay: replay.Function},
		MaxReceiveCount: attempts,
	}
}

// prepare is what New checks and derives before it creates anything: the
// props with their defaults, the deliver function's settings and every
// function's code.
func prepare(props *Props) (Props, fnenv.DeliverEnv, map[string]awslambda.Code, error) {
	p, err := checkedProps(props)
	if err != nil {
		return p, fnenv.DeliverEnv{}, nil, err
	}
	deliver, err := deliverEnv(p)
	if err != nil {
		return p, deliver, nil, err
	}
	code, err := functionCode(p.Code, p.Architecture)
	if err != nil {
		return p, deliver, nil, err
	}
	return p, deliver, code, bundleEventTypes(code, p.Code, p.Architecture, p.EventTypes)
}

// functionCode asks code for every function's, before anything is
// created: the first error names the function.
func functionCode(code Code, architecture string) (map[string]awslambda.Code, error) {
	out := make(map[string]awslambda.Code, len(functionNames))
	for _, fn := range functionNames {
		c, err := code.FunctionCode(fn, architecture)
		if err != nil {
			return nil, err
		}
		out[fn] = c
	}
	return out, nil
}

// GrantWriteOutbox lets grantee (a producer's function or role) write
// events to the outbox table: dynamodb:PutItem on the table, and nothing
// else (no read, no stream, no index). That is all a producer's
// TransactWriteItems needs for its outbox.TransactPut: IAM has no
// TransactWriteItems action, it authorizes each item's action on its
// table (a Put as dynamodb:PutItem, its attribute_not_exists condition
// included); the producer's own tables need their own grants.
func (h *Hookline) GrantWriteOutbox(grantee awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("dynamodb:PutItem"), ResourceArns: jsii.Strings(*h.OutboxTable.TableArn()),
	})
}

// GrantOperatorKeyRead lets grantee (an operator's tooling: a script, a
// CI role) read the operator key, with which it calls the /v1/admin
// routes of the API: secretsmanager:GetSecretValue and DescribeSecret on
// that one secret.
func (h *Hookline) GrantOperatorKeyRead(grantee awsiam.IGrantable) awsiam.Grant {
	return h.OperatorKey.GrantRead(grantee, nil)
}

// GrantEnqueueReprocess lets grantee reprocess the outbox stream batches
// parked on the enqueue failure queue (docs/operations.md): it attaches
// EnqueueReprocessPolicy to grantee's role. grantee must be an IAM role,
// user or group.
func (h *Hookline) GrantEnqueueReprocess(grantee awsiam.IIdentity) {
	grantee.AddManagedPolicy(h.EnqueueReprocessPolicy)
}

// checkedProps is props (nil: the zero props) with its defaults, or an
// error naming what cannot be deployed: a bad field, an allow CIDR that is
// not one.
func checkedProps(props *Props) (Props, error) {
	if props == nil {
		props = &Props{}
	}
	p, err := props.withDefaults()
	if err != nil {
		return p, err
	}
	for _, c := range p.AllowCIDRs {
		if _, err := netip.ParsePrefix(c); err != nil {
			return p, fmt.Errorf("allow CIDR %q: %w", c, err)
		}
	}
	return p, nil
}

// replayPropsOf is the replay's part of p.
func replayPropsOf(p Props, defaults functionDefaults, queues deliveryQueues, tables tableSet) replayProps {
	jobsConcurrency, opsConcurrency := p.replayConcurrency()
	return replayProps{
		Functions: defaults, Queues: queues, Rate: p.ReplayRate, StuckAlarmThreshold: p.StuckReplayThreshold,
		ReservedConcurrency: p.ReplayReservedConcurrency, JobsConcurrency: jobsConcurrency, OpsConcurrency: opsConcurrency,
		Outbox: tables.Outbox, MessageLog: tables.MessageLog, LegacyIndex: tables.LegacyIndex, DeadNoticeWindow: p.DeadNoticeWindow,
		PayloadRetention: p.PayloadRetention, Mail: mailEnv(p),
	}
}

// apiPropsOf is the API's part of p, with the parts built before it that it
// uses: the replay's queues it starts jobs on, the tables and the delivery
// queue of publish, the message log and resends, and the secrets key.
func apiPropsOf(p Props, defaults functionDefaults, deliver fnenv.DeliverEnv, replay replayParts, tables tableSet, queues deliveryQueues,
	secretsKey awskms.Key, alarmPrefix string, egress *staticEgress) apiProps {
	return apiProps{
		Functions:           defaults,
		AllowHTTP:           p.AllowHTTP,
		AllowCIDRs:          deliver.Guard.Allow,
		DenyCIDRs:           deliver.Guard.Deny,
		EgressIPs:           egress.ipList(),
		Mail:                mailEnv(p),
		EventTypes:          eventTypesFile(p),
		Jobs:                replay.Jobs,
		Ops:                 replay.Ops,
		RateLimit:           p.APIRateLimit,
		BurstLimit:          p.APIBurstLimit,
		PublishThrottle:     throttle{Rate: p.APIPublishRateLimit, Burst: p.APIPublishBurstLimit},
		AdminThrottle:       throttle{Rate: p.APIAdminRateLimit, Burst: p.APIAdminBurstLimit},
		AdminIAM:            p.AdminIAMAuth,
		ReservedConcurrency: p.APIReservedConcurrency,
		SecretsKey:          secretsKey,
		// Publish, the message log and resends.
		Outbox:                tables.Outbox,
		MessageLog:            tables.MessageLog,
		LegacyIndex:           tables.LegacyIndex,
		DeliveryQueue:         queues.Delivery,
		PayloadRetention:      p.PayloadRetention,
		ConsoleFrameAncestors: p.ConsoleFrameAncestors,
		PortalMinTTL:          p.PortalMinTTL,
		TenantExpensiveRate:   p.APITenantExpensiveRate,
		ExpensiveBudget:       p.APIExpensiveBudget,
		AlarmNamePrefix:       alarmPrefix,
		Destinations:          destinationsEnv(p),
		Endpoints: fnenv.EndpointLimits{
			Retry: deliver.Retry, MaxRequestTimeout: p.MaxRequestTimeout,
			MaxEndpoints: p.MaxEndpoints, MaxEndpointBytes: p.MaxEndpointBytes, MaxMetricsEventTypes: p.MaxMetricsEventTypes,
		},
	}
}

// pipelineFunctionsProps are the enqueue and deliver functions' props.
func pipelineFunctionsProps(p Props, code map[string]awslambda.Code, tables tableSet, queues deliveryQueues, secretsKey awskms.Key, bus awsevents.IEventBus, deliver fnenv.DeliverEnv,
	egress *staticEgress) pipelineProps {
	return pipelineProps{
		Egress:                egress,
		Tables:                tables,
		Queues:                queues,
		OperatorBus:           bus,
		SecretsKey:            secretsKey,
		Architecture:          p.Architecture,
		Code:                  code,
		DeliverTimeout:        p.DeliverTimeout,
		DeliverMaxConcurrency: p.DeliverMaxConcurrency,
		LaneMaxConcurrency:    p.LaneMaxConcurrency,
		LaneAfter:             p.LaneAfter,
		// The small-account profile has no room for the fan-out
		// mapping's 2 executions (Props.SmallAccount).
		DeferFanOut:                !p.SmallAccount,
		DeliverReservedConcurrency: p.DeliverReservedConcurrency,
		EnqueueParallelization:     p.EnqueueParallelization,
		EnqueueSendConcurrency:     p.EnqueueSendConcurrency,
		BatchingWindow:             p.BatchingWindow,
		EventTypes:                 eventTypesFile(p),
		LogLevel:                   p.LogLevel,
		Tracing:                    p.Tracing,
		TracingSampleRate:          p.TracingSampleRate,
		DeliveryRetention:          p.DeliveryRetention,
		Deliver:                    deliver,
		Faults:                     deliver.Faults,
		DestinationRoles:           p.DestinationRoles,
		DestinationOwnAccount:      p.DestinationOwnAccount,
	}
}

// operationsProps are the alarms', schedules' and dashboard's props.
func operationsProps(p Props, queues deliveryQueues, replay replayParts, enqueue awslambda.Function, functions map[string]awslambda.Function, alarmPrefix string) opsProps {
	return opsProps{
		Queues: queues, Replay: replay, Enqueue: enqueue,
		Functions: functions,
		Alarms: alarmThresholds{
			TenantDLQDepth: p.TenantDLQAlarmThreshold, OldestMessageAge: p.OldestMessageAgeThreshold, IteratorAge: p.IteratorAgeThreshold,
			RejectedItems: p.RejectedItemsThreshold, FunctionErrors: p.FunctionErrorsThreshold, Throttles: p.ThrottlesThreshold,
		},
		AlarmEmail:      p.AlarmEmail,
		SweepInterval:   p.SweepInterval,
		AlarmNamePrefix: alarmPrefix,
	}
}

// deliverEnv is the deliver function's configuration: the retry policy from
// the same value that set the queue's maxReceiveCount, timeouts, the
// endpoints' health and isolation (disable, breaker, concurrency gate), the
// SSRF allowlist and denylist (the api function's too) and the soak's
// faults (enqueue's too).
// newPipelineFunctions fills in the rest.
func deliverEnv(p Props) (fnenv.DeliverEnv, error) {
	allow, err := netguard.ParsePrefixes(strings.Join(p.AllowCIDRs, ","))
	if err != nil {
		return fnenv.DeliverEnv{}, fmt.Errorf("allow CIDRs: %w", err)
	}
	faults, err := fault.Parse(p.Faults)
	if err != nil {
		return fnenv.DeliverEnv{}, err
	}
	return fnenv.DeliverEnv{
		Retry: p.Retry, RequestTimeout: p.RequestTimeout, DisableAfter: p.DisableAfter, FailingAfter: p.FailingAfter,
		DisableAfterFor: p.DisableAfterFor,
		Breaker:         domain.Breaker{Cooldown: p.BreakerCooldown, MaxCooldown: p.BreakerMaxCooldown},
		// The fast limit is the deliver mapping's MaximumConcurrency (the
		// pool), EndpointConcurrency below it (setIsolationDefaults).
		EndpointConcurrency: p.EndpointConcurrency, FastConcurrency: p.fastConcurrency(),
		TenantConcurrency: p.TenantConcurrency,
		Notices:           fnenv.Notices{DeadNoticeWindow: p.DeadNoticeWindow},
		StatsFlushEvery:   max(p.StatsFlushEvery, 0),
		Guard:             netguard.Guard{Allow: allow, Deny: egressDeny(p)}, Faults: faults,
		NoRoleProbe: p.DisableDestinationRoleProbe,
	}, nil
}
