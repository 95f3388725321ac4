package hookline

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/streamreprocess"
)

// The enqueue function's stream mapping. No event waits for a person while
// the system can still retry: the mapping retries a failing batch, bisecting
// it, with no limit on the number of retries, until its oldest record is
// streamMaxRecordAge old; then it parks the batch's position (shard and
// sequence numbers, never the records) on the enqueue failure queue, where
// the operator's reprocessing (scripts/enqueuereprocess) reads the records
// back from the stream.
const (
	// streamBatchSize is the mapping's largest batch: 100 records.
	streamBatchSize = 100
	// streamRetryAttempts is the mapping's MaximumRetryAttempts: -1, no
	// limit (Lambda accepts -1 to 10,000).
	streamRetryAttempts = -1
	// streamRetention is how long DynamoDB Streams keeps a record: 24 hours,
	// fixed by the service. A record older than that may be trimmed at any
	// moment and can no longer be read.
	streamRetention = streamreprocess.StreamRetention
	// streamMaxRecordAge is the mapping's MaximumRecordAgeInSeconds: 20
	// hours. Lambda accepts -1 (no limit) or 60 s to 7 days. It is not -1:
	// with no age limit Lambda retries until the stream trims the records,
	// and then the batch is beyond reading back. 20 hours of retries, then
	// the parked batch stays readable in the stream for 4 more hours, the
	// operator's window for reprocessing it from the stream (after that, from
	// the outbox table: docs/operations.md).
	streamMaxRecordAge = 20 * time.Hour
)

// enqueueTimeout is the enqueue function's timeout; the deferred fan-out
// queue's visibility timeout is the same (fanOutVisibilityTimeout).
const enqueueTimeout = 60 * time.Second

// fanOutMaxConcurrency caps the enqueue function's mapping on the deferred
// fan-out queue: 2, the least SQS allows (sqsMinConcurrency). The deferred
// fan-outs are the over-share tenants' work; they run beside the stream's
// invocations, never many at once, so they take at most 2 executions of the
// account's pool.
const fanOutMaxConcurrency = sqsMinConcurrency

// fanOutBatchSize is that mapping's batch: 10 deferred fan-outs, each one
// record's fan-out past its tenant's share.
const fanOutBatchSize = 10

// insertsOnly is the stream mapping's filter: INSERT records only
// (FilterCriteria {"eventName":["INSERT"]}). Every outbox item expires
// (expires_at), and each expiry is a second stream record, a REMOVE, which
// Lambda then drops before it invokes enqueue (and bills nothing for).
// Enqueue still skips every record but an INSERT: the operator's
// reprocessing (scripts/enqueuereprocess) reads parked batches back from the
// stream unfiltered.
func insertsOnly() *[]*map[string]any {
	return &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
		"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
	})}
}

// streamMapping is the escape hatch to fn's one stream event source
// mapping, for what CDK's props cannot say: the one with a starting
// position (an SQS mapping, such as the deferred fan-out queue's, has none).
func streamMapping(fn awslambda.Function) awslambda.CfnEventSourceMapping {
	var found []awslambda.CfnEventSourceMapping
	for _, child := range *fn.Node().Children() {
		if m, ok := child.(awslambda.EventSourceMapping); ok {
			if cfn := m.Node().DefaultChild().(awslambda.CfnEventSourceMapping); cfn.StartingPosition() != nil {
				found = append(found, cfn)
			}
		}
	}
	if len(found) != 1 {
		panic(fmt.Sprintf("%s has %d stream event source mappings, want 1", *fn.Node().Path(), len(found)))
	}
	return found[0]
}

// pipelineProps configures newPipelineFunctions.
type pipelineProps struct {
	Tables tableSet
	Queues deliveryQueues
	// OperatorBus receives the operational events enqueue puts on it.
	OperatorBus awsevents.IEventBus
	// SecretsKey seals the endpoints' signing secrets; deliver may decrypt
	// with it.
	SecretsKey awskms.IKey
	// Architecture is "arm64" or "x86_64".
	Architecture string
	// Code is each function's code, by its name in lower case.
	Code map[string]awslambda.Code
	// DeliverTimeout is the deliver function's timeout.
	DeliverTimeout time.Duration
	// DeliverMaxConcurrency caps the delivery queue's SQS event source
	// mapping, LaneMaxConcurrency the tenant lane's.
	DeliverMaxConcurrency int
	LaneMaxConcurrency    int
	// LaneAfter is enqueue's lane threshold (Props.LaneAfter).
	LaneAfter int
	// DeferFanOut gives enqueue the deferred fan-out queue (Queues.FanOut):
	// its URL, the send and the mapping. False (the small-account
	// profile): enqueue fans every record out inline, and the queue stays
	// empty.
	DeferFanOut bool
	// DeliverReservedConcurrency, when positive, reserves concurrency for
	// deliver; it must exceed DeliverMaxConcurrency + LaneMaxConcurrency
	// (Props).
	DeliverReservedConcurrency int
	// EnqueueParallelization is the stream mapping's parallelization
	// factor (Props.EnqueueParallelization).
	EnqueueParallelization int
	// EnqueueSendConcurrency is enqueue's SendMessageBatch requests in
	// flight at once (Props.EnqueueSendConcurrency).
	EnqueueSendConcurrency int
	// BatchingWindow is the stream mapping's batching window
	// (Props.BatchingWindow); 0: none.
	BatchingWindow time.Duration
	// EventTypes is the event-type catalog's file beside enqueue's
	// bootstrap (fnenv.EnqueueEnv.EventTypes); "": no catalog.
	EventTypes string
	// LogLevel of both functions.
	LogLevel string
	// Tracing is Props.Tracing, TracingSampleRate Props.TracingSampleRate.
	Tracing           bool
	TracingSampleRate float64
	// DeliveryRetention is how long the records both functions write are
	// kept. Zero: fnenv.DefaultDeliveryRetention (15 days).
	DeliveryRetention time.Duration
	// Deliver is the deliver function's settings (retry policy, timeout,
	// allowlist, endpoint disabling, faults); its queues, key, table and
	// log level are filled in here.
	Deliver fnenv.DeliverEnv
	// Faults, when set, is the soak test's fault injection into enqueue
	// (deliver's are in Deliver).
	Faults fault.Rates
	// DestinationRoles are the customers' roles deliver may assume
	// (Props.DestinationRoles); DestinationOwnAccount lets it assume the
	// stack's own account's too.
	DestinationRoles      []string
	DestinationOwnAccount bool
	// Egress, when not nil, is static egress: deliver runs in its VPC.
	Egress *staticEgress
}

// pipelineFunctions are the enqueue and deliver functions.
type pipelineFunctions struct {
	Enqueue awslambda.Function
	Deliver awslambda.Function
}

// newPipelineFunctions creates the enqueue function on the outbox stream and
// the deliver function on the delivery queue, with grants for exactly what
// each does.
func newPipelineFunctions(scope constructs.Construct, id string, p pipelineProps) pipelineFunctions {
	c := constructs.NewConstruct(scope, &id)
	fns := functionDefaults{Architecture: p.Architecture, Code: p.Code, LogLevel: p.LogLevel, StateTable: p.Tables.State, DeliveryRetention: p.DeliveryRetention, Tracing: p.Tracing, TracingSampleRate: p.TracingSampleRate}
	newFn := func(name string, timeout time.Duration, env map[string]string, tune ...func(*awslambda.FunctionProps)) awslambda.Function {
		return fns.new(c, name, timeout, env, tune...)
	}

	enqueue := newFn("Enqueue", enqueueTimeout, fnenv.EnqueueEnv{
		Common: fns.common(), QueueURL: *p.Queues.Delivery.QueueUrl(), EventBus: *p.OperatorBus.EventBusName(),
		FailureQueueURL: *p.Queues.EnqueueFailures.QueueUrl(), SendConcurrency: p.EnqueueSendConcurrency, Faults: p.Faults,
		LaneQueueURL: *p.Queues.Lane.QueueUrl(), LaneAfter: p.LaneAfter,
		FanOutQueueURL: fanOutQueueURL(p), MessageLog: p.Tables.MessageLog, EventTypes: p.EventTypes,
	}.Vars())
	// Endpoints (Query), LoadWith (BatchGetItem), Tenant (GetItem),
	// PutRejection (PutItem); SendMessageBatch is sqs:SendMessage, to the
	// delivery queue and to the tenant lane (and to the deferred fan-out
	// queue: deferFanOut); the
	// operational events put on the operator's bus. Those the bus kept
	// refusing are parked on the enqueue failure queue: its sqs:SendMessage
	// is the stream mapping's on-failure grant below (the role sends
	// Lambda's failure records there too).
	grantTableItems(enqueue, p.Tables.State, "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem")
	if p.Tables.MessageLog {
		// The message log's pages (messagelog.Pages), a stream batch's in
		// one BatchWriteItem.
		grantBatchWrites(enqueue, p.Tables.State, messageLogPages)
	}
	p.Queues.Delivery.Grant(enqueue, jsii.String("sqs:SendMessage"))
	p.Queues.Lane.Grant(enqueue, jsii.String("sqs:SendMessage"))
	grantPutEvents(enqueue, p.OperatorBus)
	enqueue.AddEventSource(awslambdaeventsources.NewDynamoEventSource(p.Tables.Outbox, &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(streamBatchSize),
		ParallelizationFactor:   jsii.Number(float64(p.EnqueueParallelization)),
		BisectBatchOnError:      jsii.Bool(true),
		MaxRecordAge:            awscdk.Duration_Seconds(jsii.Number(streamMaxRecordAge.Seconds())),
		ReportBatchItemFailures: jsii.Bool(true),
		OnFailure:               awslambdaeventsources.NewSqsDlq(p.Queues.EnqueueFailures),
		Filters:                 insertsOnly(),
		MaxBatchingWindow:       batchingWindow(p.BatchingWindow),
	}))
	// CDK accepts retryAttempts from 0 to 10,000 only; -1, no limit, which
	// Lambda and CloudFormation accept, is set on the resource itself.
	streamMapping(enqueue).SetMaximumRetryAttempts(jsii.Number(streamRetryAttempts))
	if p.DeferFanOut {
		deferFanOut(enqueue, p.Queues.FanOut)
	}

	deliver := newDeliverFunction(p, fns, newFn)
	return pipelineFunctions{Enqueue: enqueue, Deliver: deliver}
}

// deferFanOut lets enqueue send to the deferred fan-out queue and consumes
// it with the same function (its handler tells the two sources apart), on
// an SQS mapping reporting partial failures, capped at fanOutMaxConcurrency
// (the mapping grants the consumption). No recursive-loop allowance
// (allowRecursiveLoop) is needed: enqueue sends to the fan-out queue only
// from the stream's invocations, and an invocation from the fan-out queue
// sends only to the tenant lane, which invokes deliver, never enqueue. A
// chain passes through enqueue at most twice, and Lambda stops a loop only
// after about 16; should one ever loop, Lambda counts it
// (EnqueueRecursionDropped, alarmed).
func deferFanOut(enqueue awslambda.Function, fanOut awssqs.Queue) {
	fanOut.Grant(enqueue, jsii.String("sqs:SendMessage"))
	enqueue.AddEventSource(awslambdaeventsources.NewSqsEventSource(fanOut, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(fanOutBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(fanOutMaxConcurrency),
	}))
}

// fanOutQueueURL is enqueue's HOOKLINE_FANOUT_QUEUE_URL: the deferred
// fan-out queue's, or empty (no deferral) unless p.DeferFanOut.
func fanOutQueueURL(p pipelineProps) string {
	if !p.DeferFanOut {
		return ""
	}
	return *p.Queues.FanOut.QueueUrl()
}

// newDeliverFunction creates the deliver function, with its grants and its
// two mappings: the delivery queue and the tenant lane.
func newDeliverFunction(p pipelineProps, fns functionDefaults, newFn func(string, time.Duration, map[string]string, ...func(*awslambda.FunctionProps)) awslambda.Function) awslambda.Function {
	deliverEnv := p.Deliver
	deliverEnv.Common = fns.common()
	deliverEnv.QueueURL = *p.Queues.Delivery.QueueUrl()
	deliverEnv.LaneQueueURL = *p.Queues.Lane.QueueUrl()
	deliverEnv.DLQURL = *p.Queues.DeadLetter.QueueUrl()
	deliverEnv.SecretsKeyARN = *p.SecretsKey.KeyArn()
	deliver := newFn("Deliver", p.DeliverTimeout, deliverEnv.Vars(), allowRecursiveLoop, p.Egress.place)
	p.Egress.grantNetworkInterfaces(deliver)
	reserveConcurrency(deliver, p.DeliverReservedConcurrency)
	// Load (BatchGetItem; Query for the outcome page of a message received
	// again or of a resend), Delivery and Endpoint (GetItem), the batch's first
	// attempts delivered (BatchWriteItem, on outcome pages only), every
	// other write an UpdateItem; the DLQ send; the sends to its own queues (the delivery
	// queue and the tenant lane) of the messages that wait (see
	// allowRecursiveLoop); the signing secrets opened. The mappings below
	// grant both queues' consumption, ChangeMessageVisibility included.
	grantTableItems(deliver, p.Tables.State, "dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem")
	grantBatchWrites(deliver, p.Tables.State, outcomePages)
	p.Queues.DeadLetter.Grant(deliver, jsii.String("sqs:SendMessage"))
	p.Queues.Delivery.Grant(deliver, jsii.String("sqs:SendMessage"))
	p.Queues.Lane.Grant(deliver, jsii.String("sqs:SendMessage"))
	grantSecrets(deliver, p.SecretsKey, "kms:Decrypt")
	grantAssumeDestinationRoles(deliver, p.DestinationRoles, p.DestinationOwnAccount)
	deliver.AddEventSource(awslambdaeventsources.NewSqsEventSource(p.Queues.Delivery, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(deliverBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(p.DeliverMaxConcurrency)),
	}))
	// The tenant lane: the same function, batch and partial failures, on
	// a mapping of its own whose cap bounds what the tenants over their
	// share take of the pool together (Props.LaneMaxConcurrency).
	deliver.AddEventSource(awslambdaeventsources.NewSqsEventSource(p.Queues.Lane, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(deliverBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(p.LaneMaxConcurrency)),
	}))
	return deliver
}

// batchingWindow is a mapping's MaxBatchingWindow: none (the property
// left out, Lambda's default of 0) for 0.
func batchingWindow(w time.Duration) awscdk.Duration {
	if w == 0 {
		return nil
	}
	return awscdk.Duration_Seconds(jsii.Number(w.Seconds()))
}

// functionDefaults are what every hookline function shares: runtime,
// architecture, memory, JSON logs with a retention, and the state table.
type functionDefaults struct {
	Architecture string
	// Code is each function's code, by its name in lower case.
	Code       map[string]awslambda.Code
	LogLevel   string
	StateTable awsdynamodb.Table
	// DeliveryRetention is the records' retention every function's store
	// writes (Props.DeliveryRetention); zero: the default.
	DeliveryRetention time.Duration
	// Tracing is Props.Tracing: X-Ray active tracing, and the functions
	// told to send their spans to the daemon, of TracingSampleRate
	// (Props.TracingSampleRate) of the traces.
	Tracing           bool
	TracingSampleRate float64
}

// common is what every function's environment holds: the state table and
// the log level.
func (d functionDefaults) common() fnenv.Common {
	return fnenv.Common{StateTable: *d.StateTable.TableName(), LogLevel: d.LogLevel, DeliveryRetention: d.DeliveryRetention, XRay: d.Tracing, XRaySampleRate: d.TracingSampleRate}
}

// allowRecursiveLoop lets the deliver function's chains of sends to its own
// queues run. The function sends to the queues that invoke it (the
// delivery queue and the tenant lane, a tenant over its share moved from
// the one to the other): a
// message waiting for its endpoint's rate limit, an open circuit breaker, a
// busy endpoint (its concurrency gate full), a backoff hop longer than a
// visibility change can take, or a hitch of hookline's own dependencies is
// sent again, delayed, and the original deleted. Lambda's recursive-loop
// detection (on by default, Terminate) sees such a chain through the
// lineage the SDK carries, and stops it after about 16 invocations,
// sending the event to the failure destination: a delivery that waited
// 16 times would be lost. The chain is bounded without it: each re-send
// carries the attempts made and a deferral count (message.Message.Attempts,
// Deferrals), a message is never attempted past the schedule, and the age
// cap (RetryPolicy.MaxAge, 24 h by default) ends every chain, as dead.
func allowRecursiveLoop(fp *awslambda.FunctionProps) {
	fp.RecursiveLoop = awslambda.RecursiveLoop_ALLOW
}

// new creates a provided.al2023 function from Code[<name in lower case>]
// with the environment env, the Vars of its fnenv contract; each of tune
// then adjusts its props.
func (d functionDefaults) new(scope constructs.Construct, name string, timeout time.Duration, env map[string]string, tune ...func(*awslambda.FunctionProps)) awslambda.Function {
	arch := awslambda.Architecture_ARM_64()
	if d.Architecture == "x86_64" {
		arch = awslambda.Architecture_X86_64()
	}
	vars := map[string]*string{}
	for k, v := range env {
		vars[k] = jsii.String(v)
	}
	logs := awslogs.NewLogGroup(scope, jsii.String(name+"Logs"), &awslogs.LogGroupProps{
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	// A role of its own instead of AWSLambdaBasicExecutionRole, which lets
	// a function write to any log group: this one writes to its own only.
	role := awsiam.NewRole(scope, jsii.String(name+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("hookline " + strings.ToLower(name) + " function: only what it calls"),
	})
	logs.Grant(role, jsii.String("logs:CreateLogStream"), jsii.String("logs:PutLogEvents"))
	props := &awslambda.FunctionProps{
		Role:         role,
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: arch,
		Handler:      jsii.String("bootstrap"),
		Code:         d.Code[strings.ToLower(name)],
		MemorySize:   jsii.Number(256),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeout.Seconds())),
		Environment:  &vars,
		LogGroup:     logs,
	}
	if d.Tracing {
		// CDK grants xray:PutTraceSegments and xray:PutTelemetryRecords
		// (on *: X-Ray has no resource-level permissions) to the role.
		props.Tracing = awslambda.Tracing_ACTIVE
	}
	for _, t := range tune {
		t(props)
	}
	return awslambda.NewFunction(scope, jsii.String(name), props)
}

// logRetention is how long every hookline log group (the functions', the
// API's access log) keeps its lines.
const logRetention = awslogs.RetentionDays_ONE_MONTH

// reserveConcurrency reserves n concurrent executions for fn out of the
// account's pool, which also caps fn at n; n <= 0 reserves nothing.
func reserveConcurrency(fn awslambda.Function, n int) {
	if n > 0 {
		fn.Node().DefaultChild().(awslambda.CfnFunction).SetReservedConcurrentExecutions(jsii.Number(float64(n)))
	}
}
