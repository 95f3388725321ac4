package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/netguard"
)

// NewHooklineStack builds the whole pipeline: outbox and state tables, the
// delivery queue with its dead-letter queue and alarm, and the enqueue and
// deliver functions with their event source mappings.
func NewHooklineStack(scope constructs.Construct, id string, props *HooklineStackProps) (awscdk.Stack, error) {
	stack, _, err := newHooklineStack(scope, id, props)
	return stack, err
}

// newHooklineStack is NewHooklineStack, also returning the cdk-nag findings
// it accepts (for the test that runs cdk-nag).
func newHooklineStack(scope constructs.Construct, id string, props *HooklineStackProps) (awscdk.Stack, []nagSuppression, error) {
	p, err := checkedProps(props)
	if err != nil {
		return nil, nil, err
	}
	deliver, err := deliverEnv(p)
	if err != nil {
		return nil, nil, err
	}
	stack := awscdk.NewStack(scope, &id, &p.StackProps)

	tables := NewTables(stack, "Tables", !p.DisableMessageLog)
	secretsKey := NewSecretsKey(stack, "SigningSecretsKey")
	queues := NewDeliveryQueues(stack, "Queues", DeliveryQueuesProps{
		MaxReceiveCount: p.Retry.Attempts(), DLQRetention: p.DLQRetention,
		VisibilityTimeout:     p.Retry.VisibilityTimeout, // six times DeliverTimeout
		AlarmThreshold:        p.DLQAlarmThreshold,
		FailureAlarmThreshold: p.EnqueueFailuresThreshold,
	})
	bus := NewOperatorBus(stack, "OperatorEvents")
	fns := NewPipelineFunctions(stack, "Pipeline", pipelineFunctionsProps(p, tables, queues, secretsKey, bus.Bus, deliver))

	defaults := functionDefaults{Architecture: p.Architecture, AssetDir: p.AssetDir, LogLevel: p.LogLevel, StateTable: tables.State, DeliveryRetention: p.DeliveryRetention}
	replay := NewReplay(stack, "Replay", ReplayProps{
		Functions: defaults, Queues: queues, Rate: p.ReplayRate, StuckAlarmThreshold: p.StuckReplayThreshold,
		ReservedConcurrency: p.ReplayReservedConcurrency, Outbox: tables.Outbox, MessageLog: tables.MessageLog, DeadNoticeWindow: p.DeadNoticeWindow,
	})
	grantNotices(fns.Deliver, tables.Outbox, replay.Ops)
	httpAPI := NewHTTPAPI(stack, "Api", HTTPAPIProps{
		Functions:           defaults,
		AllowHTTP:           p.AllowHTTP,
		AllowCIDRs:          deliver.Guard.Allow,
		ReplayJobs:          replay.Jobs,
		ReplayOps:           replay.Ops,
		RateLimit:           p.APIRateLimit,
		BurstLimit:          p.APIBurstLimit,
		ReservedConcurrency: p.APIReservedConcurrency,
		SecretsKey:          secretsKey,
		Outbox:              tables.Outbox, MessageLog: tables.MessageLog, DeliveryQueue: queues.Delivery, PayloadRetention: p.PayloadRetention, // publish, the message log, resends
		ConsoleFrameAncestors: p.ConsoleFrameAncestors, PortalMinTTL: p.PortalMinTTL})
	functions := map[string]awslambda.Function{"Enqueue": fns.Enqueue, "Deliver": fns.Deliver, "Api": httpAPI.Function, "Replay": replay.Function}
	ops := NewOperations(stack, "Operations", operationsProps(p, queues, replay, fns.Enqueue, functions))
	bus.routeToAlarms(p.OperatorEventsToAlarms, ops.Topic)

	redrive := NewEnqueueRedrivePolicy(stack, "EnqueueRedrivePolicy", EnqueueRedrivePolicyProps{
		Failures: queues.EnqueueFailures, Outbox: tables.Outbox, Enqueue: fns.Enqueue,
	})

	accepted := nagSuppressions(stack, nagTargets{
		API: httpAPI, EnqueueFailures: queues.EnqueueFailures, StateTable: tables.State,
		Enqueue: fns.Enqueue, Functions: functions,
	})
	suppressNagFindings(accepted)

	addOutputs(stack, stackParts{
		tables: tables, queues: queues, fns: fns, redrive: redrive, httpAPI: httpAPI,
		secretsKey: secretsKey, replay: replay, ops: ops, bus: bus, attempts: p.Retry.Attempts(),
	})
	return stack, accepted, nil
}

// checkedProps is props (nil: the zero props) with its defaults, or an
// error naming what cannot be deployed: a bad field, an allow CIDR that is
// not one, a function not built.
func checkedProps(props *HooklineStackProps) (HooklineStackProps, error) {
	if props == nil {
		props = &HooklineStackProps{}
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
	return p, checkAssets(p.AssetDir, p.Architecture)
}

// pipelineFunctionsProps are the enqueue and deliver functions' props.
func pipelineFunctionsProps(p HooklineStackProps, tables Tables, queues DeliveryQueues, secretsKey awskms.Key, bus awsevents.IEventBus, deliver fnenv.DeliverEnv) PipelineFunctionsProps {
	return PipelineFunctionsProps{
		Tables:                     tables,
		Queues:                     queues,
		OperatorBus:                bus,
		SecretsKey:                 secretsKey,
		Architecture:               p.Architecture,
		AssetDir:                   p.AssetDir,
		DeliverTimeout:             p.DeliverTimeout,
		DeliverMaxConcurrency:      p.DeliverMaxConcurrency,
		DeliverReservedConcurrency: p.DeliverReservedConcurrency,
		LogLevel:                   p.LogLevel,
		DeliveryRetention:          p.DeliveryRetention,
		Deliver:                    deliver,
		Faults:                     deliver.Faults,
	}
}

// operationsProps are the alarms', schedules' and dashboard's props.
func operationsProps(p HooklineStackProps, queues DeliveryQueues, replay Replay, enqueue awslambda.Function, functions map[string]awslambda.Function) OperationsProps {
	return OperationsProps{
		Queues: queues, Replay: replay, Enqueue: enqueue,
		Functions: functions,
		Alarms: AlarmThresholds{
			TenantDLQDepth: p.TenantDLQAlarmThreshold, OldestMessageAge: p.OldestMessageAgeThreshold, IteratorAge: p.IteratorAgeThreshold,
			RejectedItems: p.RejectedItemsThreshold, FunctionErrors: p.FunctionErrorsThreshold, Throttles: p.ThrottlesThreshold,
		},
		AlarmEmail:    p.AlarmEmail,
		SweepInterval: p.SweepInterval,
	}
}

// stackParts are the constructs whose names and addresses the stack
// outputs.
type stackParts struct {
	tables     Tables
	queues     DeliveryQueues
	fns        PipelineFunctions
	redrive    awsiam.ManagedPolicy
	httpAPI    HTTPAPI
	secretsKey awskms.Key
	replay     Replay
	ops        Operations
	bus        OperatorBus
	attempts   int // the retry policy's, the queue's maxReceiveCount
}

// addOutputs adds the stack's outputs: what producers, operators, the
// scripts and the tests need to find.
func addOutputs(stack awscdk.Stack, parts stackParts) {
	out := func(name, desc string, value *string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("OutboxTableName", "Producers write events here (TransactWriteItems).", parts.tables.Outbox.TableName())
	out("StateTableName", "Endpoints, deliveries and rejected outbox items.", parts.tables.State.TableName())
	out("DeliveryQueueURL", "Messages waiting for the deliver function.", parts.queues.Delivery.QueueUrl())
	out("DeadLetterQueueURL", "Deliveries that could not be made.", parts.queues.DeadLetter.QueueUrl())
	out("DeadLetterQueueARN", "ARN of the dead-letter queue (redrive target).", parts.queues.DeadLetter.QueueArn())
	out("EnqueueFailureQueueURL", "Stream batches the enqueue function could not process.", parts.queues.EnqueueFailures.QueueUrl())
	out("EnqueueFunctionName", "Fans outbox events out to endpoints.", parts.fns.Enqueue.FunctionName())
	out("EnqueueRedrivePolicyARN", "Attach to the operator who re-drives parked stream batches (make redrive-enqueue).", parts.redrive.ManagedPolicyArn())
	out("DeliverFunctionName", "POSTs deliveries to endpoints.", parts.fns.Deliver.FunctionName())
	out("DLQDepthAlarmName", "Fires when the DLQ holds too many messages.", parts.queues.DepthAlarm.AlarmName())
	out("ApiURL", "Base URL of the HTTP API.", parts.httpAPI.API.ApiEndpoint())
	out("ApiID", "Id of the HTTP API.", parts.httpAPI.API.ApiId())
	out("ApiFunctionName", "Serves the HTTP API.", parts.httpAPI.Function.FunctionName())
	out("ApiAccessLogGroupName", "The HTTP API's access log: one JSON line per request.", parts.httpAPI.AccessLogs.LogGroupName())
	out("OperatorKeySecretARN", "Secrets Manager secret holding the operator key.", parts.httpAPI.OperatorKey.SecretArn())
	out("SecretsKeyARN", "KMS key sealing the endpoints' signing secrets (make seal-secrets).", parts.secretsKey.KeyArn())
	out("ReplayJobsQueueURL", "Tenants' replay jobs waiting for the replay worker.", parts.replay.Jobs.QueueUrl())
	out("ReplayOpsQueueURL", "The operator's redrive and the scheduled sweeps, gauges and job recoveries, for the replay worker.", parts.replay.Ops.QueueUrl())
	out("ReplayFunctionName", "Runs replays and redrives.", parts.replay.Function.FunctionName())
	out("AlarmTopicARN", "Every alarm notifies this SNS topic: subscribe the on-call here.", parts.ops.Topic.TopicArn())
	out("OperatorEventBusName", "hookline's operational events (endpoint.disabled, ...): add your rules to this EventBridge bus.", parts.bus.Bus.EventBusName())
	out("OperatorEventBusARN", "ARN of the operational events' bus.", parts.bus.Bus.EventBusArn())
	out("DashboardName", "The CloudWatch dashboard.", parts.ops.Dashboard.DashboardName())
	out("TenantDLQAlarmName", "Fires when any tenant's DLQ depth exceeds the threshold.", parts.ops.Alarms["TenantDLQDepth"].AlarmName())
	out("MaxReceiveCount", "Attempts per delivery before SQS moves it to the DLQ.", jsii.String(strconv.Itoa(parts.attempts)))
}

// deliverEnv is the deliver function's configuration: the retry policy from
// the same value that set the queue's maxReceiveCount, timeouts, the SSRF
// allowlist (the api function's too) and the soak's faults (enqueue's too).
// NewPipelineFunctions fills in the rest.
func deliverEnv(p HooklineStackProps) (fnenv.DeliverEnv, error) {
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
		Notices: fnenv.Notices{DeadNoticeWindow: p.DeadNoticeWindow},
		Guard:   netguard.Guard{Allow: allow}, Faults: faults,
	}, nil
}
