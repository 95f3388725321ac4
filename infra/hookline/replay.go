package hookline

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fnenv"
)

// replayProps configures newReplay.
type replayProps struct {
	Functions functionDefaults
	Queues    deliveryQueues
	// Rate is the sends per second of one job that sends (a replay, the
	// redrive).
	Rate float64
	// StuckAlarmThreshold: the alarm fires above this many parked job messages.
	StuckAlarmThreshold int
	// ReservedConcurrency, when positive, reserves (and caps) the worker's
	// concurrency; it must exceed JobsConcurrency + OpsConcurrency.
	ReservedConcurrency int
	// JobsConcurrency and OpsConcurrency cap the jobs and the operations
	// queues' mappings (Props.replayConcurrency).
	JobsConcurrency, OpsConcurrency int
	// Outbox receives the delivery.dead summaries the worker writes.
	Outbox awsdynamodb.ITable
	// MessageLog says Outbox has the by_tenant index: an erasure queries it
	// for the tenant's items (granted only then).
	MessageLog bool
	// LegacyIndex says Outbox keeps the unsharded index by_tenant, which
	// an erasure reads then (tableSet.LegacyIndex).
	LegacyIndex bool
	// DeadNoticeWindow is delivery.dead's coalescing window (deliver's).
	DeadNoticeWindow time.Duration
	// PayloadRetention is how long an event's payload may be sent again
	// by a replay since a time (the API's, Props.PayloadRetention).
	PayloadRetention time.Duration
	// Mail sends the notices (Props.NotifyFrom); zero: none.
	Mail fnenv.Mail
}

// replayParts is the replay worker and its two queues.
type replayParts struct {
	// Jobs carries tenants' jobs (replays, cancels), a few per tenant at
	// most (the API refuses more); Ops the operator's (the redrive,
	// erasures) and the scheduled sweeps, gauges and job recoveries, worked
	// apart so that no tenant can hold them up.
	Jobs, Ops  awssqs.Queue
	JobsFailed awssqs.Queue
	Function   awslambda.Function
	// StuckAlarm fires when a job's (or an operations) message keeps
	// failing and is parked.
	StuckAlarm awscloudwatch.Alarm
}

// replayTimeout is the replay function's timeout: a step is at most 600
// paced sends plus their bookkeeping.
const replayTimeout = 5 * time.Minute

// Concurrency of the replay function's two event source mappings: tenants'
// jobs, and the operator's queue (2, the least a mapping takes); the
// small-account profile runs both at 2 (Props.replayConcurrency).
const (
	replayJobsConcurrency = 5
	replayOpsConcurrency  = 2
)

// replayMaxConcurrency is the most replay invocations its two mappings run
// at once (5 job steps and 2 operations): the replay function's reserved
// concurrency must exceed it.
const replayMaxConcurrency = replayJobsConcurrency + replayOpsConcurrency

// newReplay creates the jobs queue and the operations queue (both parked, when
// a message keeps failing, in one dead-letter queue: the job's deliveries
// still dead, never lost) and the replay function on both, one message at a
// time.
func newReplay(scope constructs.Construct, id string, p replayProps) replayParts {
	c := constructs.NewConstruct(scope, &id)
	failed := awssqs.NewQueue(c, jsii.String("JobsFailed"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	jobs, ops := newReplayQueue(c, "Jobs", failed), newReplayQueue(c, "Ops", failed)
	fn := newReplayFunction(c, p, jobs, ops)
	grantReplay(fn, p, jobs, ops)
	consumeReplayQueues(fn, []replaySource{{jobs, p.JobsConcurrency}, {ops, p.OpsConcurrency}})
	reserveConcurrency(fn, p.ReservedConcurrency)
	stuck := newStuckReplayAlarm(c, failed, p.StuckAlarmThreshold)
	return replayParts{Jobs: jobs, Ops: ops, JobsFailed: failed, Function: fn, StuckAlarm: stuck}
}

// newReplayFunction creates the replay function, its environment naming the
// queues it sends to and reads from and the tables it keeps.
func newReplayFunction(c constructs.Construct, p replayProps, jobs, ops awssqs.Queue) awslambda.Function {
	return p.Functions.new(c, "Replay", replayTimeout, fnenv.ReplayEnv{
		Common:            p.Functions.common(),
		DeliveryQueueURL:  *p.Queues.Delivery.QueueUrl(),
		DLQURL:            *p.Queues.DeadLetter.QueueUrl(),
		ArrivalsURL:       *p.Queues.Arrivals.QueueUrl(),
		JobsQueueURL:      *jobs.QueueUrl(),
		OpsQueueURL:       *ops.QueueUrl(),
		Rate:              p.Rate,
		OutboxTable:       *p.Outbox.TableName(),
		MessageLog:        p.MessageLog,
		MessageLogSharded: !p.LegacyIndex,
		DeadNoticeWindow:  p.DeadNoticeWindow,
		PayloadRetention:  p.PayloadRetention,
		Mail:              p.Mail,
	}.Vars(), allowReplayLoop)
}

// grantReplay gives the replay function what its jobs and operations use:
// the outbox, the state table, the delivery queue, the DLQ and its own two
// queues.
func grantReplay(fn awslambda.Function, p replayProps, jobs, ops awssqs.Queue) {
	// delivery.dead summaries written to the outbox (PutItem only).
	grantOutboxPut(fn, p.Outbox)
	// A tenant's erasure: its outbox items found through the by_tenant
	// index and deleted.
	grantOutboxErase(fn, p.Outbox, p.MessageLog, p.LegacyIndex)
	// A replay since a time rebuilds deliveries from their events' outbox
	// items (GetItem), found through the same index; so does a cancel with
	// a payload filter.
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn, Actions: jsii.Strings("dynamodb:GetItem"), ResourceArns: jsii.Strings(*p.Outbox.TableArn()),
	})
	// Job (GetItem), SaveJob (PutItem), claims, releases and recorded
	// deaths (UpdateItem), Load (BatchGetItem), Delivery and Endpoint
	// (GetItem); ListDead and DLQDepths query the index. The depth
	// reconciliation reads a counter's shards (BatchGetItem) and corrects
	// it in a transaction checking every shard (ConditionCheckItem) and
	// deleting the one-item counter of earlier versions (DeleteItem). A
	// tenant's erasure queries its partitions (Query: endpoints, counters),
	// finds its counter's shards (BatchGetItem) and deletes its items
	// (DeleteItem).
	grantTableItems(fn, p.Functions.StateTable, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
		"dynamodb:Query", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem")
	grantIndexQuery(fn, p.Functions.StateTable)
	p.Queues.Delivery.Grant(fn, jsii.String("sqs:SendMessage"))
	// The sweep, the redrive and the erasure: receive, delete, make visible
	// again; the erasure also counts the messages others hold hidden
	// (GetQueueAttributes).
	p.Queues.DeadLetter.Grant(fn, jsii.String("sqs:ReceiveMessage"), jsii.String("sqs:DeleteMessage"), jsii.String("sqs:ChangeMessageVisibility"),
		jsii.String("sqs:GetQueueAttributes"))
	// The scheduled sweep moves the arrivals to the DLQ: receive and
	// delete there, send here.
	p.Queues.Arrivals.Grant(fn, jsii.String("sqs:ReceiveMessage"), jsii.String("sqs:DeleteMessage"))
	p.Queues.DeadLetter.Grant(fn, jsii.String("sqs:SendMessage"))
	jobs.Grant(fn, jsii.String("sqs:SendMessage"))
	ops.Grant(fn, jsii.String("sqs:SendMessage"))
}

// replaySource is a queue the replay function reads, and how many of its
// invocations it runs at once.
type replaySource struct {
	q awssqs.Queue
	n int
}

// consumeReplayQueues maps each source's queue to fn, one message per
// invocation, a failed message reported alone.
func consumeReplayQueues(fn awslambda.Function, sources []replaySource) {
	for _, src := range sources {
		fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(src.q, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(1),
			ReportBatchItemFailures: jsii.Bool(true),
			MaxConcurrency:          jsii.Number(float64(src.n)),
		}))
	}
}

// newStuckReplayAlarm fires when more than threshold job messages are parked
// in failed.
func newStuckReplayAlarm(c constructs.Construct, failed awssqs.Queue, threshold int) awscloudwatch.Alarm {
	return awscloudwatch.NewAlarm(c, jsii.String("JobsFailedDepth"), &awscloudwatch.AlarmProps{
		// The description keeps its earlier words (from when every job was
		// a replay), so that the deployed alarm is left unchanged.
		AlarmDescription: jsii.String("A replay job keeps failing and was parked; its deliveries are still dead. See docs/operations.md."),
		Metric: failed.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(float64(threshold)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// allowReplayLoop lets the replay worker's chains of sends to its own
// queues run. A job continues itself: each step ends by sending the job's
// message to the queue it came from (the jobs queue, or the operations
// queue for a redrive or an erasure), delayed by its paced sends, and a
// completed job sends two sweeps to the operations queue. Lambda's
// recursive-loop detection (Terminate by default) would stop such a chain
// after about 16 invocations and send the message to the failure
// destination: a replay, redrive or erasure of more than about 16 steps
// (some 9,600 deliveries at 600 a step) would stall. The chain is bounded
// without it, by what internal/replay's steps work through, a finite set
// fixed when the job starts, each step advancing over it before it sends
// the next: a job by ids walks its list (at most StepSends a step); a job
// by filter pages the dead index up to its Until, set to the job's start
// when not given (deaths after it are not its own); a redrive takes only
// the DLQ messages sent before the job was created (later ones are left)
// and completes on a step that finds none; an erasure deletes its
// tenant's items phase by phase, a page at a time, until none is left.
// A sweep sends nothing on, and a lost job's message is sent again only
// by the schedule (the rule ReplayJobRecovery), not by the worker itself.
func allowReplayLoop(fp *awslambda.FunctionProps) {
	fp.RecursiveLoop = awslambda.RecursiveLoop_ALLOW
}

// newReplayQueue creates one of the replay function's queues, parked in
// failed after five receives.
func newReplayQueue(c constructs.Construct, name string, failed awssqs.Queue) awssqs.Queue {
	return awssqs.NewQueue(c, jsii.String(name), &awssqs.QueueProps{
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(14)),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(6 * replayTimeout.Seconds())),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: failed, MaxReceiveCount: jsii.Number(5)},
	})
}
