package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fault"
)

// NewHooklineStack builds the whole pipeline: outbox and state tables, the
// delivery queue with its dead-letter queue and alarm, and the enqueue and
// deliver functions with their event source mappings.
func NewHooklineStack(scope constructs.Construct, id string, props *HooklineStackProps) (awscdk.Stack, error) {
	if props == nil {
		props = &HooklineStackProps{}
	}
	p, err := props.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, c := range p.AllowCIDRs {
		if _, err := netip.ParsePrefix(c); err != nil {
			return nil, fmt.Errorf("allow CIDR %q: %w", c, err)
		}
	}
	stack := awscdk.NewStack(scope, &id, &p.StackProps)

	tables := NewTables(stack, "Tables")
	secretsKey := NewSecretsKey(stack, "SigningSecretsKey")
	queues := NewDeliveryQueues(stack, "Queues", DeliveryQueuesProps{
		MaxReceiveCount:       p.Retry.Attempts(),
		VisibilityTimeout:     6 * p.DeliverTimeout,
		AlarmThreshold:        p.DLQAlarmThreshold,
		FailureAlarmThreshold: p.EnqueueFailuresThreshold,
	})
	fns := NewPipelineFunctions(stack, "Pipeline", PipelineFunctionsProps{
		Tables:                     tables,
		Queues:                     queues,
		SecretsKey:                 secretsKey,
		Architecture:               p.Architecture,
		AssetDir:                   p.AssetDir,
		DeliverTimeout:             p.DeliverTimeout,
		DeliverMaxConcurrency:      p.DeliverMaxConcurrency,
		DeliverReservedConcurrency: p.DeliverReservedConcurrency,
		LogLevel:                   p.LogLevel,
		DeliverEnv:                 deliverEnv(p),
		Faults:                     p.Faults,
	})

	defaults := functionDefaults{Architecture: p.Architecture, AssetDir: p.AssetDir, LogLevel: p.LogLevel, StateTable: tables.State}
	replay := NewReplay(stack, "Replay", ReplayProps{Functions: defaults, Queues: queues, Rate: p.ReplayRate, StuckAlarmThreshold: p.StuckReplayThreshold})
	httpAPI := NewHTTPAPI(stack, "Api", HTTPAPIProps{
		Functions:  defaults,
		AllowHTTP:  p.AllowHTTP,
		AllowCIDRs: p.AllowCIDRs,
		ReplayJobs: replay.Jobs,
		SecretsKey: secretsKey,
	})

	ops := NewOperations(stack, "Operations", OperationsProps{
		Queues: queues, Replay: replay, Enqueue: fns.Enqueue,
		Functions: map[string]awslambda.Function{"Enqueue": fns.Enqueue, "Deliver": fns.Deliver, "Api": httpAPI.Function, "Replay": replay.Function},
		Alarms: AlarmThresholds{
			TenantDLQDepth: p.TenantDLQAlarmThreshold, OldestMessageAge: p.OldestMessageAgeThreshold, IteratorAge: p.IteratorAgeThreshold,
			RejectedItems: p.RejectedItemsThreshold, FunctionErrors: p.FunctionErrorsThreshold, Throttles: p.ThrottlesThreshold,
		},
		AlarmEmail:    p.AlarmEmail,
		SweepInterval: p.SweepInterval,
	})

	out := func(name, desc string, value *string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("OutboxTableName", "Producers write events here (TransactWriteItems).", tables.Outbox.TableName())
	out("StateTableName", "Endpoints, deliveries and rejected outbox items.", tables.State.TableName())
	out("DeliveryQueueURL", "Messages waiting for the deliver function.", queues.Delivery.QueueUrl())
	out("DeadLetterQueueURL", "Deliveries that could not be made.", queues.DeadLetter.QueueUrl())
	out("DeadLetterQueueARN", "ARN of the dead-letter queue (redrive target).", queues.DeadLetter.QueueArn())
	out("EnqueueFailureQueueURL", "Stream batches the enqueue function could not process.", queues.EnqueueFailures.QueueUrl())
	out("EnqueueFunctionName", "Fans outbox events out to endpoints.", fns.Enqueue.FunctionName())
	out("DeliverFunctionName", "POSTs deliveries to endpoints.", fns.Deliver.FunctionName())
	out("DLQDepthAlarmName", "Fires when the DLQ holds too many messages.", queues.DepthAlarm.AlarmName())
	out("ApiURL", "Base URL of the HTTP API.", httpAPI.API.ApiEndpoint())
	out("ApiID", "Id of the HTTP API.", httpAPI.API.ApiId())
	out("ApiFunctionName", "Serves the HTTP API.", httpAPI.Function.FunctionName())
	out("OperatorKeySecretARN", "Secrets Manager secret holding the operator key.", httpAPI.OperatorKey.SecretArn())
	out("SecretsKeyARN", "KMS key sealing the endpoints' signing secrets (make seal-secrets).", secretsKey.KeyArn())
	out("ReplayJobsQueueURL", "Replay jobs waiting for the replay worker.", replay.Jobs.QueueUrl())
	out("ReplayFunctionName", "Runs replays and redrives.", replay.Function.FunctionName())
	out("AlarmTopicARN", "Every alarm notifies this SNS topic: subscribe the on-call here.", ops.Topic.TopicArn())
	out("DashboardName", "The CloudWatch dashboard.", ops.Dashboard.DashboardName())
	out("TenantDLQAlarmName", "Fires when any tenant's DLQ depth exceeds the threshold.", ops.Alarms["TenantDLQDepth"].AlarmName())
	out("MaxReceiveCount", "Attempts per delivery before SQS moves it to the DLQ.", jsii.String(strconv.Itoa(p.Retry.Attempts())))
	return stack, nil
}

// deliverEnv is the deliver function's configuration: the retry policy from
// the same value that set the queue's maxReceiveCount, timeouts and the SSRF
// allowlist.
func deliverEnv(p HooklineStackProps) map[string]string {
	env := p.Retry.Env()
	env["HOOKLINE_REQUEST_TIMEOUT"] = p.RequestTimeout.String()
	env["HOOKLINE_ALLOW_CIDRS"] = strings.Join(p.AllowCIDRs, ",")
	env["HOOKLINE_DISABLE_AFTER"] = strconv.Itoa(p.DisableAfter)
	if p.Faults != "" {
		env[fault.Env] = p.Faults
	}
	return env
}
