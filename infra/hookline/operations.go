package hookline

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/metrics"
)

// opsProps configures newOperations.
type opsProps struct {
	Queues    deliveryQueues
	Replay    replayParts
	Enqueue   awslambda.Function
	Functions map[string]awslambda.Function
	Alarms    alarmThresholds
	// AlarmEmail, when set, subscribes this address to the alarm topic.
	AlarmEmail string
	// SweepInterval is how often the DLQ is swept besides after each replay.
	SweepInterval time.Duration
	// AlarmNamePrefix starts the name of every alarm of the instance
	// (alarmNamePrefix): the alarm topic lets CloudWatch publish for those.
	AlarmNamePrefix string
}

// alarmThresholds are the thresholds of the alarms; see Props.
type alarmThresholds struct {
	TenantDLQDepth   int
	OldestMessageAge time.Duration
	IteratorAge      time.Duration
	RejectedItems    int
	FunctionErrors   int
	Throttles        int
}

// operationsParts is what whoever runs hookline watches: the alarm topic, every
// alarm, and the dashboard.
type operationsParts struct {
	Topic     awssns.Topic
	Alarms    map[string]awscloudwatch.Alarm
	Dashboard awscloudwatch.Dashboard
}

// gaugeMissingAfter is how long one of our gauges may publish nothing
// before its GaugeMissing alarm fires: long enough for a gauge step that
// waits on the jobs queue behind replay steps (each shorter than the replay
// function's 5-minute timeout), short enough that a broken publisher is
// known within the quarter hour.
const gaugeMissingAfter = 10 * time.Minute

// gaugeMissingPeriods are the periods gaugeMissingAfter is evaluated in.
const gaugeMissingPeriods = 2

// tenantDepthQuery is the Metrics Insights query of the deepest tenant's DLQ,
// for the dashboard (where the tenant is named). The alarm watches
// MaxTenantDLQDepth, the same figure published by the gauge step: one metric,
// one alarm, whatever the number of tenants, and no metric math (which some
// local clouds cannot deploy).
var tenantDepthQuery = fmt.Sprintf(`SELECT MAX(%s) FROM SCHEMA("%s", %s)`, metrics.TenantDLQDepth, metrics.Namespace, metrics.DimensionTenant)

// deliveryInFlightThreshold is the DeliveryInFlight (and LaneInFlight) alarm's threshold, in
// messages: half of the about 120,000 in-flight messages SQS allows a
// standard queue. A message hidden for its backoff counts as in flight, and
// past the limit a receive gets nothing and no error, so the whole delivery
// path stalls silently; half of it leaves time to act.
const deliveryInFlightThreshold = 60000

// recursionDroppedMetric is the AWS/Lambda metric counting the
// invocations Lambda's recursive-loop detection stopped, per function
// (dimension FunctionName).
const recursionDroppedMetric = "RecursiveInvocationsDropped"

// replayRecoverMinutes is how often jobs whose message was lost are
// looked for (an index query) and sent again.
const replayRecoverMinutes = 5

// newOperations creates the alarm topic (and the optional e-mail
// subscription), the alarms that are not with their resources, wires every
// alarm to the topic, schedules the per-tenant depth gauges and builds the
// dashboard.
func newOperations(scope constructs.Construct, id string, p opsProps) operationsParts {
	c := constructs.NewConstruct(scope, &id)
	topic := awssns.NewTopic(c, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("hookline alarms"),
		// Publishers (CloudWatch alarms) must use TLS.
		EnforceSSL: jsii.Bool(true),
	})
	allowAlarmsToPublish(c, topic, p.AlarmNamePrefix)
	if p.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(p.AlarmEmail), nil))
	}
	alarms := newAlarms(c, p)
	action := awscloudwatchactions.NewSnsAction(topic)
	for _, name := range sortedKeys(alarms) {
		alarms[name].AddAlarmAction(action)
		alarms[name].AddOkAction(action)
	}
	newSchedules(c, p)
	return operationsParts{Topic: topic, Alarms: alarms, Dashboard: newDashboard(c, p, alarms)}
}

// allowAlarmsToPublish lets the instance's CloudWatch alarms publish to
// topic. EnforceSSL gives the topic an AWS::SNS::TopicPolicy, and such a
// policy replaces the topic's default one, whose owner-account Allow is
// what lets alarms publish to a topic with no policy of its own: without
// this statement every alarm changes state and nobody is told (AWS drops
// the publish; the local cloud checks no policy). The statement allows
// sns:Publish to the CloudWatch service, for alarms of this account
// (aws:SourceAccount) whose ARN names one of the instance's alarms
// (aws:SourceArn like arn:...:cloudwatch:<region>:<account>:alarm:<prefix>*,
// the names CloudFormation gives them: alarmNamePrefix).
func allowAlarmsToPublish(c constructs.Construct, topic awssns.Topic, prefix string) {
	stack := awscdk.Stack_Of(c)
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AlarmsPublish"),
		Actions:    jsii.Strings("sns:Publish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Resources:  jsii.Strings(*topic.TopicArn()),
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
			"ArnLike": map[string]any{"aws:SourceArn": stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"),
				ResourceName: jsii.String(prefix + "*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
			})},
		},
	}))
}

// ownedAlarms are the alarms created with their resources (the queues'
// and replay's), by name.
func ownedAlarms(p opsProps) map[string]awscloudwatch.Alarm {
	return map[string]awscloudwatch.Alarm{
		"DLQDepth":              p.Queues.DepthAlarm,
		"EnqueueFailures":       p.Queues.EnqueueFailureAlarm,
		"FanOutDeadLetterDepth": p.Queues.FanOutDepthAlarm,
		"DeadLetterArrivalsAge": p.Queues.ArrivalsAgeAlarm,
		"ReplayJobsStuck":       p.Replay.StuckAlarm,
	}
}

// newAlarms creates the alarms that are not with their resources and
// returns them with those that are (the queues' and replay's), by name.
// ReplayJobsStuck, a job of any kind parked, keeps its earlier name (from
// when every job was a replay), as documented and as operators know it.
func newAlarms(c constructs.Construct, p opsProps) map[string]awscloudwatch.Alarm {
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	five := awscdk.Duration_Minutes(jsii.Number(5))
	b := alarmBuilder{c: c, alarms: ownedAlarms(p)}
	b.gauge("TenantDLQDepth", "A tenant's dead-letter queue holds more deliveries than the threshold.",
		metrics.MaxTenantDLQ, float64(p.Alarms.TenantDLQDepth))
	b.add("OldestDeliveryAge", "Deliveries wait on the delivery queue longer than expected: deliver is failing or throttled.",
		p.Queues.Delivery.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}),
		p.Alarms.OldestMessageAge.Seconds(), 5)
	b.add("DeliveryInFlight", "The delivery queue's in-flight messages near SQS's limit of about 120,000 per standard queue, past which deliver receives nothing: long waits (backoffs) are piling up.",
		p.Queues.Delivery.MetricApproximateNumberOfMessagesNotVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}),
		deliveryInFlightThreshold, 1)
	// The tenant lane is a standard queue of its own, with SQS's limits of
	// its own: the same two alarms, apart (no metric math, which some
	// local clouds cannot deploy), so the page names the queue.
	b.add("OldestLaneAge", "Deliveries wait on the tenant lane longer than expected: the tenants over their share have a backlog its mapping (laneMaxConcurrency) cannot keep up with, or deliver is failing or throttled.",
		p.Queues.Lane.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}),
		p.Alarms.OldestMessageAge.Seconds(), 5)
	b.add("LaneInFlight", "The tenant lane's in-flight messages near SQS's limit of about 120,000 per standard queue, past which deliver receives nothing from it.",
		p.Queues.Lane.MetricApproximateNumberOfMessagesNotVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}),
		deliveryInFlightThreshold, 1)
	b.add("StreamIteratorAge", "The enqueue function is behind on the outbox stream: events are written but not yet fanned out.",
		p.Enqueue.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}),
		float64(p.Alarms.IteratorAge.Milliseconds()), 5)
	b.add("RejectedOutboxItems", "Producers are writing outbox items hookline rejects (missing fields, bad JSON, unknown tenant).",
		awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metrics.RejectedItems),
			Period: five, Statistic: jsii.String("Sum")}),
		float64(p.Alarms.RejectedItems), 1)
	// Any parked operational event alarms: the operator did not hear of
	// it, and it waits on the enqueue failure queue to be put again.
	b.add("OperatorEventsParked", "Operational events could not be put on the operator's EventBridge bus and were parked on the enqueue failure queue (deliveries went on); run make reprocess-enqueue once the bus takes events again.",
		awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metrics.OperatorEventsParked),
			Period: five, Statistic: jsii.String("Sum")}),
		0, 1)
	// A stored filter enqueue cannot parse (registration validates them)
	// fails open: the endpoint gets every event, so one is worth a page.
	b.add("FilterErrors", "An endpoint's stored payload filter could not be parsed: its deliveries are created unfiltered.",
		awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metrics.FilterErrors),
			Period: five, Statistic: jsii.String("Sum")}),
		0, 1)
	for _, name := range sortedKeys(p.Functions) {
		fn := p.Functions[name]
		b.add(name+"Errors", "The "+name+" function fails (an invocation error, not a failed delivery).",
			fn.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), float64(p.Alarms.FunctionErrors), 1)
		b.add(name+"Throttles", "The "+name+" function is throttled: raise its concurrency or the account's.",
			fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), float64(p.Alarms.Throttles), 1)
		// Lambda's recursive-loop detection stopped a chain of the
		// function's invocations: for deliver and replay, which opt out
		// (allowRecursiveLoop, allowReplayLoop), the opt-out is gone; for
		// enqueue and api, a loop hookline did not mean to make.
		b.add(name+"RecursionDropped", "Lambda stopped a recursive loop of the "+name+" function and sent the event to its failure destination (RecursiveInvocationsDropped).",
			fn.Metric(jsii.String(recursionDroppedMetric), &awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0, 1)
	}
	return b.alarms
}

// alarmBuilder creates alarms in c and keeps them by name.
type alarmBuilder struct {
	c      constructs.Construct
	alarms map[string]awscloudwatch.Alarm
}

// alarm creates one alarm.
func (b alarmBuilder) alarm(name, desc string, m awscloudwatch.IMetric, threshold float64, periods int, cmp awscloudwatch.ComparisonOperator, missing awscloudwatch.TreatMissingData) {
	b.alarms[name] = awscloudwatch.NewAlarm(b.c, jsii.String(name), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(desc + " See docs/operations.md#" + name + "."),
		Metric:             m,
		Threshold:          jsii.Number(threshold),
		ComparisonOperator: cmp,
		EvaluationPeriods:  jsii.Number(float64(periods)),
		TreatMissingData:   missing,
	})
}

// add alarms on a figure above the threshold. No data reads as OK: the
// metric is AWS's, or a count of ours (no value: nothing happened).
func (b alarmBuilder) add(name, desc string, m awscloudwatch.IMetric, threshold float64, periods int) {
	b.alarm(name, desc, m, threshold, periods, awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, awscloudwatch.TreatMissingData_NOT_BREACHING)
}

// gauge alarms on one of our gauges (metrics.Catalog) above the threshold.
// A gauge is published on a schedule whatever happens, so no data means its
// publisher stopped, which must not read as OK: the alarm keeps its state
// through missing data (an ALARM stays ALARM), and a companion,
// <name>GaugeMissing, fires after gaugeMissingAfter without a single value.
func (b alarmBuilder) gauge(name, desc, metric string, threshold float64) {
	if !metrics.Catalog[metric].Gauge {
		panic("operations: " + metric + " is not a gauge in metrics.Catalog")
	}
	of := func(stat string, period awscdk.Duration) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metric),
			Period: period, Statistic: jsii.String(stat)})
	}
	b.alarm(name, desc, of("Maximum", awscdk.Duration_Minutes(jsii.Number(1))), threshold, 1,
		awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, awscloudwatch.TreatMissingData_IGNORE)
	b.alarm(name+"GaugeMissing", "The "+metric+" gauge, published every minute, has stopped: "+name+" cannot fire.",
		of("SampleCount", awscdk.Duration_Minutes(jsii.Number(gaugeMissingAfter.Minutes()/gaugeMissingPeriods))), 1, gaugeMissingPeriods,
		awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, awscloudwatch.TreatMissingData_BREACHING)
}

// newSchedules creates the rules that send the replay function its
// scheduled work: the depth gauges, the DLQ sweep and the recovery of lost
// jobs, each a jobs.Message of its kind.
func newSchedules(c constructs.Construct, p opsProps) {
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	// The per-tenant depth gauges, published every minute by the replay
	// function, so a tenant whose depth does not move still has a value.
	awsevents.NewRule(c, jsii.String("DepthGauges"), &awsevents.RuleProps{
		Description: jsii.String("Publish every tenant's DLQ depth (TenantDLQDepth) each minute."),
		Schedule:    awsevents.Schedule_Rate(minute),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(p.Replay.Ops, &awseventstargets.SqsQueueProps{
			Message: awsevents.RuleTargetInput_FromObject(map[string]any{"kind": string(jobs.KindGauges)}),
		})},
	})

	// And a sweep of the SQS DLQ on a schedule, besides those after each
	// replay: its depth keeps agreeing with the index, and a death the
	// deliver function could not record (it stopped during the last attempt)
	// is recorded from the message SQS moved there. The scheduled one also
	// reconciles every tenant's DLQ depth counter with the dead index.
	awsevents.NewRule(c, jsii.String("DLQSweep"), &awsevents.RuleProps{
		Description: jsii.String("Reconcile the SQS DLQ with the index (drop stale copies, record missed deaths) and the tenant DLQ depth counters with it."),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Seconds(jsii.Number(p.SweepInterval.Seconds()))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(p.Replay.Ops, &awseventstargets.SqsQueueProps{
			Message: awsevents.RuleTargetInput_FromObject(map[string]any{"kind": string(jobs.KindSweepReconcile)}),
		})},
	})

	// And the jobs whose message was lost (a purged queue): a job not saved
	// for an hour is sent again, so none stays queued for ever. The rule's
	// construct id and description keep their earlier words (from when
	// every job was a replay): its logical id, so the deployed rule stays.
	awsevents.NewRule(c, jsii.String("ReplayJobRecovery"), &awsevents.RuleProps{
		Description: jsii.String("Send again the messages of replay jobs idle for an hour (their message was lost)."),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(replayRecoverMinutes))),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewSqsQueue(p.Replay.Ops, &awseventstargets.SqsQueueProps{
			Message: awsevents.RuleTargetInput_FromObject(map[string]any{"kind": string(jobs.KindRecover)}),
		})},
	})
}

func newDashboard(c constructs.Construct, p opsProps, alarms map[string]awscloudwatch.Alarm) awscloudwatch.Dashboard {
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	hook := func(name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(name), Period: minute, Statistic: jsii.String(stat)})
	}
	graph := func(title string, ms ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &ms, Width: jsii.Number(8)})
	}
	d := awscloudwatch.NewDashboard(c, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{DefaultInterval: awscdk.Duration_Hours(jsii.Number(3))})
	var states []interfacesawscloudwatch.IAlarmRef
	for _, name := range sortedKeys(alarms) {
		states = append(states, alarms[name])
	}
	d.AddWidgets(awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{Title: jsii.String("Alarms"), Alarms: &states, Width: jsii.Number(24)}))
	d.AddWidgets(
		graph("Deliveries", hook(metrics.Delivered, "Sum"), hook(metrics.AttemptFailed, "Sum"), hook(metrics.RetryScheduled, "Sum")),
		graph("Dead-lettered and replayed", hook(metrics.DeadLettered, "Sum"), hook(metrics.Replayed, "Sum"), hook(metrics.RejectedItems, "Sum")),
		graph("Attempt latency (p50, p99)", hook(metrics.AttemptLatency, "p50"), hook(metrics.AttemptLatency, "p99")),
	)
	d.AddWidgets(
		graph("DLQ depth", p.Queues.DeadLetter.MetricApproximateNumberOfMessagesVisible(nil)),
		graph("Deepest tenant DLQ", awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{Expression: jsii.String(tenantDepthQuery), Period: minute})),
		graph("Oldest delivery waiting (s)", p.Queues.Delivery.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Label: jsii.String("delivery queue")}),
			p.Queues.Lane.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Label: jsii.String("tenant lane")})),
	)
	return d
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
