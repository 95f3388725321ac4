package main

import (
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// ReplayProps configures NewReplay.
type ReplayProps struct {
	Functions functionDefaults
	Queues    DeliveryQueues
	// Rate is the sends per second of one replay job.
	Rate float64
	// StuckAlarmThreshold: the alarm fires above this many parked job messages.
	StuckAlarmThreshold int
}

// Replay is the replay worker and its jobs queue.
type Replay struct {
	Jobs       awssqs.Queue
	JobsFailed awssqs.Queue
	Function   awslambda.Function
	// StuckAlarm fires when a job message keeps failing and is parked.
	StuckAlarm awscloudwatch.Alarm
}

// replayTimeout is the replay function's timeout: a step is at most 600
// paced sends plus their bookkeeping.
const replayTimeout = 5 * time.Minute

// NewReplay creates the jobs queue (with its own dead-letter queue: a job
// whose steps keep failing is parked there, its deliveries still dead, never
// lost) and the replay function on it, one job message at a time.
func NewReplay(scope constructs.Construct, id string, p ReplayProps) Replay {
	c := constructs.NewConstruct(scope, &id)
	failed := awssqs.NewQueue(c, jsii.String("JobsFailed"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	jobs := awssqs.NewQueue(c, jsii.String("Jobs"), &awssqs.QueueProps{
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(14)),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(6 * replayTimeout.Seconds())),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: failed, MaxReceiveCount: jsii.Number(5)},
	})
	fn := p.Functions.new(c, "Replay", replayTimeout, map[string]string{
		"HOOKLINE_DELIVERY_QUEUE_URL": *p.Queues.Delivery.QueueUrl(),
		"HOOKLINE_DLQ_URL":            *p.Queues.DeadLetter.QueueUrl(),
		"HOOKLINE_REPLAY_QUEUE_URL":   *jobs.QueueUrl(),
		"HOOKLINE_REPLAY_RATE":        strconv.FormatFloat(p.Rate, 'f', -1, 64),
	})
	// Job (GetItem), SaveJob (PutItem), claims, releases and recorded
	// deaths (UpdateItem), Load (BatchGetItem), Delivery and Endpoint
	// (GetItem); ListDead and DLQDepths query the index, nothing the table.
	grantTableItems(fn, p.Functions.StateTable, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem")
	grantIndexQuery(fn, p.Functions.StateTable)
	p.Queues.Delivery.Grant(fn, jsii.String("sqs:SendMessage"))
	// The sweep and the redrive: receive, delete, make visible again.
	p.Queues.DeadLetter.Grant(fn, jsii.String("sqs:ReceiveMessage"), jsii.String("sqs:DeleteMessage"), jsii.String("sqs:ChangeMessageVisibility"))
	jobs.Grant(fn, jsii.String("sqs:SendMessage"))
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(jobs, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(5),
	}))
	stuck := awscloudwatch.NewAlarm(c, jsii.String("JobsFailedDepth"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("A replay job keeps failing and was parked; its deliveries are still dead. See docs/operations.md."),
		Metric: failed.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(float64(p.StuckAlarmThreshold)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	return Replay{Jobs: jobs, JobsFailed: failed, Function: fn, StuckAlarm: stuck}
}
