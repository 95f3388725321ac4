package hookline

import (
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// queuesProps configures newDeliveryQueues.
type queuesProps struct {
	// MaxReceiveCount is the number of attempts before SQS moves a message
	// to the DLQ: the retry schedule's length. Required.
	MaxReceiveCount int
	// DLQRetention is the dead-letter queue's message retention. Zero: 14
	// days, the SQS maximum.
	DLQRetention time.Duration
	// VisibilityTimeout of the delivery queue and the lane: six times the deliver
	// function's timeout. Required.
	VisibilityTimeout time.Duration
	// AlarmThreshold: the DLQ depth alarm fires above this many messages.
	AlarmThreshold int
	// FailureAlarmThreshold: the enqueue failure queue alarm fires above
	// this many parked stream batches.
	FailureAlarmThreshold int
}

// The deferred fan-out queue (docs/architecture.md, "Deferred fan-out"):
// the part of a record's fan-out past its tenant's share of a stream
// invocation, one message a record, which the enqueue function consumes on
// a mapping of its own.
const (
	// fanOutVisibilityTimeout is the enqueue function's timeout, the least
	// SQS mappings take (AWS advises six times it): a fan-out invocation
	// that crashed or timed out gives its messages back within a minute,
	// as a failed stream batch is retried within seconds; six times would
	// hold them six minutes (the kill test counted a deferred event's
	// deliveries not terminal within its five). The price of the shorter
	// one: a throttled invocation's message may come back while the retry
	// of its batch still holds it, a duplicate fan-out that sends nothing
	// attempted twice (enqueue's rule), and each such throttle spends a
	// receive, which fanOutMaxReceiveCount allows for.
	fanOutVisibilityTimeout = enqueueTimeout
	// fanOutMaxReceiveCount is the receives after which SQS parks a
	// deferred fan-out on FanOutDeadLetter: 60, about an hour of failures a
	// minute apart at most (a failed one comes back in 2^(n-1) s, at most
	// 60, enqueue.retrySoon; a throttled or crashed one after the
	// visibility timeout, a minute). Enqueue retries what it can retry
	// within an invocation, and one record's fan-out is bounded (the
	// endpoint cap); a deferred fan-out that fails for an hour is an
	// infrastructure fault (the lane refusing sends, the state table
	// unreadable, a message enqueue cannot read), parked for the operator,
	// alarmed, and moved back with SQS's redrive to source
	// (docs/operations.md, FanOutDeadLetterDepth).
	fanOutMaxReceiveCount = 60
)

// deliveryQueues are the delivery queue, the tenant lane, their
// dead-letter queue, the enqueue mapping's on-failure queue, the deferred
// fan-out queue and its dead-letter queue, and their alarms.
type deliveryQueues struct {
	Delivery awssqs.Queue
	// Lane is the tenant lane: the delivery queue's twin (the same
	// retention, visibility timeout, encryption and redrive to the same
	// DLQ), with its own mapping to the deliver function, holding the
	// deliveries of tenants over their share (docs/architecture.md, "The
	// tenant lane").
	Lane       awssqs.Queue
	DeadLetter awssqs.Queue
	// Arrivals is Delivery's and Lane's redrive target: the messages whose
	// receives ran out while deliver recorded nothing (it stopped during
	// their attempts), which the scheduled sweep checks and moves to
	// DeadLetter (dlq.Sweeper.MoveArrivals). deliver sends the deaths it
	// records to DeadLetter itself.
	Arrivals awssqs.Queue
	// ArrivalsAgeAlarm fires when an arrival waits longer than the
	// sweep's schedule allows: the sweep is not moving them.
	ArrivalsAgeAlarm awscloudwatch.Alarm
	EnqueueFailures  awssqs.Queue
	// FanOut is the deferred fan-out queue: enqueue sends to it and
	// consumes it (docs/architecture.md, "Deferred fan-out");
	// FanOutDeadLetter holds its messages that failed fanOutMaxReceiveCount
	// times.
	FanOut, FanOutDeadLetter awssqs.Queue
	// FanOutDepthAlarm fires when FanOutDeadLetter holds any message.
	FanOutDepthAlarm awscloudwatch.Alarm
	// DepthAlarm fires when the DLQ holds more than AlarmThreshold messages.
	DepthAlarm awscloudwatch.Alarm
	// EnqueueFailureAlarm fires when any stream batch could not be processed.
	EnqueueFailureAlarm awscloudwatch.Alarm
}

// newDeliveryQueues creates the queues, each keeping messages 14 days, the
// SQS maximum. A message SQS redrives to the DLQ keeps its original enqueue
// time, so it stays 14 days less its age (at most 24 h by default); one the
// deliver function sends there gets the full 14 days.
func newDeliveryQueues(scope constructs.Construct, id string, p queuesProps) deliveryQueues {
	c := constructs.NewConstruct(scope, &id)
	retention := awscdk.Duration_Days(jsii.Number(14))
	dlqRetention := retention
	if p.DLQRetention > 0 {
		dlqRetention = awscdk.Duration_Seconds(jsii.Number(p.DLQRetention.Seconds()))
	}
	dlq := awssqs.NewQueue(c, jsii.String("DeadLetter"), &awssqs.QueueProps{
		RetentionPeriod: dlqRetention,
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	// The arrivals: the DLQ's way in from SQS's redrive, swept once each
	// (dlq.Sweeper.MoveArrivals), where a redrive straight to the DLQ had
	// every pass of the sweep receive every dead message again (issue 37).
	arrivals := awssqs.NewQueue(c, jsii.String("DeadLetterArrivals"), &awssqs.QueueProps{
		RetentionPeriod: retention,
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	// The delivery queue and the tenant lane are alike in everything: a
	// message is attempted from either (ApproximateReceiveCount is its
	// attempt), so either is redriven to the same arrivals, on their way
	// to the same DLQ, after the same number of receives, and the DLQ's
	// list, replay and alarms cover both.
	deliveryQueue := func(id string) awssqs.Queue {
		return awssqs.NewQueue(c, jsii.String(id), &awssqs.QueueProps{
			RetentionPeriod:   retention,
			VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(p.VisibilityTimeout.Seconds())),
			Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:        jsii.Bool(true),
			DeadLetterQueue: &awssqs.DeadLetterQueue{
				Queue:           arrivals,
				MaxReceiveCount: jsii.Number(float64(p.MaxReceiveCount)),
			},
		})
	}
	delivery := deliveryQueue("Delivery")
	lane := deliveryQueue("Lane")
	failures := awssqs.NewQueue(c, jsii.String("EnqueueFailures"), &awssqs.QueueProps{
		RetentionPeriod: retention,
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	depth := depthAlarm(c, "DeadLetterDepth", "Deliveries are piling up in the hookline dead-letter queue. See docs/operations.md.", dlq, p.AlarmThreshold)
	failed := depthAlarm(c, "EnqueueFailureDepth", "Outbox stream batches failed enqueue and were parked (events in them are not yet delivered), or operational events the operator's bus refused were (OperatorEventsParked).", failures, p.FailureAlarmThreshold)
	late := awscloudwatch.NewAlarm(c, jsii.String("DeadLetterArrivalsAge"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("Messages SQS redrove from the delivery queues wait on the DLQ arrivals queue for more than 30 minutes: the replay function's scheduled sweep (DLQSweep) is not moving them to the DLQ. See docs/operations.md."),
		Metric: arrivals.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(arrivalsAlarmAge.Seconds()),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	fanOut, fanOutDLQ, fanOutDepth := newFanOutQueues(c, retention)
	return deliveryQueues{Delivery: delivery, Lane: lane, DeadLetter: dlq, Arrivals: arrivals, ArrivalsAgeAlarm: late, EnqueueFailures: failures, DepthAlarm: depth, EnqueueFailureAlarm: failed,
		FanOut: fanOut, FanOutDeadLetter: fanOutDLQ, FanOutDepthAlarm: fanOutDepth}
}

// arrivalsAlarmAge is how old an arrival may grow before
// DeadLetterArrivalsAge fires: six of the sweep's 5-minute passes.
const arrivalsAlarmAge = 30 * time.Minute

// newFanOutQueues creates, in c, the deferred fan-out queue, its own
// dead-letter queue (after fanOutMaxReceiveCount receives) and the alarm on
// any message there, each queue keeping messages retention.
func newFanOutQueues(c constructs.Construct, retention awscdk.Duration) (fanOut, dlq awssqs.Queue, alarm awscloudwatch.Alarm) {
	dlq = awssqs.NewQueue(c, jsii.String("FanOutDeadLetter"), &awssqs.QueueProps{
		RetentionPeriod: retention,
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	fanOut = awssqs.NewQueue(c, jsii.String("FanOut"), &awssqs.QueueProps{
		RetentionPeriod:   retention,
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(fanOutVisibilityTimeout.Seconds())),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(fanOutMaxReceiveCount),
		},
	})
	alarm = depthAlarm(c, "FanOutDeadLetterDepth", "Deferred fan-outs failed "+strconv.Itoa(fanOutMaxReceiveCount)+" times and were parked on the fan-out dead-letter queue: their events are not yet delivered to the endpoints past their tenant's share. Move them back to the fan-out queue once the fault is fixed. See docs/operations.md.", dlq, 0)
	return fanOut, dlq, alarm
}

// depthAlarm creates, in c, an alarm that fires when q has held more than
// threshold visible messages for a minute.
func depthAlarm(c constructs.Construct, id, desc string, q awssqs.Queue, threshold int) awscloudwatch.Alarm {
	return awscloudwatch.NewAlarm(c, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String(desc),
		Metric: q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(1)),
			Statistic: jsii.String("Maximum"),
		}),
		Threshold:          jsii.Number(float64(threshold)),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}
