package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
)

// addOutputs adds the stack's outputs: what producers, operators, the
// scripts and the tests need to find (internal/stackoutputs reads them by
// these names).
func addOutputs(stack awscdk.Stack, h *hookline.Hookline) {
	out := func(name, desc string, value *string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("OutboxTableName", "Producers write events here (TransactWriteItems).", h.OutboxTable.TableName())
	out("StateTableName", "Endpoints, deliveries and rejected outbox items.", h.StateTable.TableName())
	out("DeliveryQueueURL", "Messages waiting for the deliver function.", h.DeliveryQueue.QueueUrl())
	out("LaneQueueURL", "The tenant lane: messages of tenants over their share waiting for the deliver function.", h.LaneQueue.QueueUrl())
	out("FanOutQueueURL", "The deferred fan-out queue: the part of a record's fan-out past its tenant's share, waiting for the enqueue function.", h.FanOutQueue.QueueUrl())
	out("FanOutDeadLetterQueueARN", "ARN of the fan-out queue's dead-letter queue (move its messages back with aws sqs start-message-move-task: docs/operations.md).", h.FanOutDeadLetterQueue.QueueArn())
	out("DeadLetterQueueURL", "Deliveries that could not be made.", h.DeadLetterQueue.QueueUrl())
	out("DeadLetterQueueARN", "ARN of the dead-letter queue.", h.DeadLetterQueue.QueueArn())
	out("DeadLetterArrivalsQueueARN", "ARN of the delivery queues' redrive target, swept into the dead-letter queue every 5 minutes.", h.ArrivalsQueue.QueueArn())
	out("EnqueueFailureQueueURL", "Stream batches the enqueue function could not process.", h.EnqueueFailureQueue.QueueUrl())
	out("EnqueueFunctionName", "Fans outbox events out to endpoints.", h.Functions.Enqueue.FunctionName())
	// The output keeps its earlier name so that an upgrade keeps it (operators and their tooling read it).
	out("EnqueueRedrivePolicyARN", "Attach to the operator who reprocesses parked stream batches (make reprocess-enqueue).", h.EnqueueReprocessPolicy.ManagedPolicyArn())
	out("DeliverFunctionName", "POSTs deliveries to endpoints.", h.Functions.Deliver.FunctionName())
	out("DeliverRoleARN", "The deliver function's role: a customer's trust policy names it for an sqs, sns or eventbridge endpoint (docs/destinations.md).", h.Functions.Deliver.Role().RoleArn())
	out("DLQDepthAlarmName", "Fires when the DLQ holds too many messages.", h.Alarms["DLQDepth"].AlarmName())
	out("ApiURL", "Base URL of the HTTP API.", h.URL)
	out("ApiID", "Id of the HTTP API.", h.API.ApiId())
	out("ApiFunctionName", "Serves the HTTP API.", h.Functions.API.FunctionName())
	out("ApiAccessLogGroupName", "The HTTP API's access log: one JSON line per request.", h.APIAccessLogs.LogGroupName())
	out("OperatorKeySecretARN", "Secrets Manager secret holding the operator key.", h.OperatorKey.SecretArn())
	out("SecretsKeyARN", "KMS key sealing the endpoints' signing secrets (make seal-secrets).", h.SecretsKey.KeyArn())
	// The jobs queue's output keeps its earlier name and description (from
	// when every job was a replay): scripts and deployed stacks read it.
	out("ReplayJobsQueueURL", "Tenants' replay jobs waiting for the replay worker.", h.JobsQueue.QueueUrl())
	out("ReplayOpsQueueURL", "The operator's redrive and the scheduled sweeps, gauges and job recoveries, for the replay worker.", h.ReplayOpsQueue.QueueUrl())
	out("ReplayFunctionName", "Runs replays and redrives.", h.Functions.Replay.FunctionName())
	out("AlarmTopicARN", "Every alarm notifies this SNS topic: subscribe the on-call here.", h.AlarmTopic.TopicArn())
	out("OperatorEventBusName", "hookline's operational events (endpoint.disabled, ...): add your rules to this EventBridge bus.", h.OperatorBus.EventBusName())
	out("OperatorEventBusARN", "ARN of the operational events' bus.", h.OperatorBus.EventBusArn())
	out("DashboardName", "The CloudWatch dashboard.", h.Dashboard.DashboardName())
	out("TenantDLQAlarmName", "Fires when any tenant's DLQ depth exceeds the threshold.", h.Alarms["TenantDLQDepth"].AlarmName())
	out("MaxReceiveCount", "Attempts per delivery before SQS moves it to the DLQ.", jsii.String(strconv.Itoa(h.MaxReceiveCount)))
	if h.EgressIPs != nil {
		// Static egress only: a stack without it has no such output.
		out("EgressIPs", "The public IPv4 addresses deliveries leave from (static egress), comma-separated: give them to receivers to allowlist (docs/receiving.md).", h.EgressIPs)
	}
}
