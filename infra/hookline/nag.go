package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// The findings of cdk-nag's AwsSolutions rule pack that hookline accepts,
// each with its reason, all in this file. Every other finding is fixed in
// the construct that owns the resource; the template tests run the pack and
// fail on any finding not suppressed here, and on a suppression here that no
// longer suppresses anything.

// nagSuppression is one accepted finding: the rule, the construct it is
// accepted on (and its children), the findings of that rule it covers
// (empty: all of them), and why.
type nagSuppression struct {
	Rule      string
	On        constructs.IConstruct
	AppliesTo []string
	Reason    string
}

// nagTargets are the constructs that carry accepted findings.
type nagTargets struct {
	API             apiParts
	EnqueueFailures constructs.IConstruct
	// DeadLetter is the delivery DLQ, fed by the sweep from its arrivals.
	DeadLetter constructs.IConstruct
	StateTable awsdynamodb.Table
	Enqueue    awslambda.Function
	// Functions are every hookline function, by name.
	Functions map[string]awslambda.Function
	// AlarmInstance is the instance's part of its alarms' names
	// (alarmInstanceName), after the stack's name.
	AlarmInstance string
	// Tracing is Props.Tracing: each function's role has X-Ray's grant.
	Tracing bool
	// Egress is static egress (nil: off): its VPC, and deliver's grant
	// of network interfaces.
	Egress *staticEgress
}

// nagSuppressions lists the accepted findings of the instance.
func nagSuppressions(t nagTargets) []nagSuppression {
	list := []nagSuppression{
		{
			Rule: "AwsSolutions-APIG4", On: t.API.API,
			Reason: "Every route authenticates in the api function: a tenant's Bearer key (stored only as a hash) or the operator key, " +
				"the tenant taken from the key and never from the URL (internal/api). An API Gateway authorizer would be a second place " +
				"that reads keys, and the function would still have to check the tenant's scope.",
		},
		{
			Rule: "AwsSolutions-SMG4", On: t.API.OperatorKey,
			Reason: "The operator key is an opaque random string with no service behind it to rotate with: an operator rotates it " +
				"by hand, writing a new value to the secret and recycling the api function (docs/operations.md, Rotating the operator key).",
		},
		{
			Rule: "AwsSolutions-SQS3", On: t.EnqueueFailures,
			Reason: "This queue is itself a dead-letter queue: the outbox stream mapping's on-failure destination, which cdk-nag does " +
				"not recognize as one (it knows SQS redrive targets only). It is watched by the EnqueueFailures alarm.",
		},
		{
			Rule: "AwsSolutions-SQS3", On: t.DeadLetter,
			Reason: "This queue is the deliveries' dead-letter queue: deliver sends the deaths it records here, and the replay function's " +
				"sweep moves here what SQS's redrive put in the arrivals queue (the delivery queues' redrive target, which cdk-nag does " +
				"recognize). It is watched by the DLQDepth alarm.",
		},
	}
	list = append(list, nagSuppression{
		Rule: "AwsSolutions-IAM5", On: t.Enqueue.Role(), AppliesTo: []string{"Resource::*"},
		Reason: "dynamodb:ListStreams, which the outbox stream's event source mapping needs, has no resource-level permissions: " +
			"IAM only accepts it on *.",
	})
	list = append(list, nagSuppression{
		Rule: "AwsSolutions-IAM5", On: t.API.Function.Role(),
		AppliesTo: []string{"Resource::arn:<AWS::Partition>:cloudwatch:<AWS::Region>:<AWS::AccountId>:alarm:<AWS::StackName>" +
			alarmNameSeparator + t.AlarmInstance + alarmNameSeparator + "*"},
		Reason: "cloudwatch:DescribeAlarms for the operator console's alarm list (by name prefix), on this instance's alarms only: hookline names " +
			"them <stack name>.<instance>.<path> (nameAlarms), with a separator no stack name holds, so no other stack's alarm matches.",
	})
	list = append(list, nagSuppression{
		Rule: "AwsSolutions-IAM5", On: t.Functions["Deliver"].Role(),
		Reason: "sts:AssumeRole on the customers' roles (Props.DestinationRoles, by default roles named " + DefaultDestinationRolePrefix + "* in any account): " +
			"which customer registers which role is known only at run time, and what lets the deliver role in is each customer's trust policy, " +
			"which names it and must require the endpoint's external ID (the deliver function refuses a role that accepts a wrong one). " +
			"Operators narrow the pattern to their customers' accounts; the stack's own account is denied unless Props.DestinationOwnAccount, " +
			"and hookline's own roles always, by ARN.",
		AppliesTo: []string{"Resource::arn:<AWS::Partition>:iam::*:role/" + DefaultDestinationRolePrefix + "*"},
	})
	if t.Tracing {
		for _, name := range []string{"Api", "Deliver", "Enqueue", "Replay"} {
			list = append(list, nagSuppression{
				Rule: "AwsSolutions-IAM5", On: t.Functions[name].Role(), AppliesTo: []string{"Resource::*"},
				Reason: "xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray active tracing (Props.Tracing) needs, have no " +
					"resource-level permissions: IAM only accepts them on *.",
			})
		}
	}
	return append(list, egressSuppressions(t)...)
}

// egressSuppressions are static egress's accepted findings (none without
// it).
func egressSuppressions(t nagTargets) []nagSuppression {
	if t.Egress == nil {
		return nil
	}
	return []nagSuppression{
		{
			Rule: "AwsSolutions-VPC7", On: t.Egress.VPC,
			Reason: "No flow log: the VPC carries the deliver function's outbound requests only, each of which deliver already records " +
				"(the attempt's time, status or error and latency, in the delivery's log and its own log line); a flow log would bill " +
				"CloudWatch ingestion per connection. An operator who wants one adds it to Hookline.EgressVPC.",
		},
		{
			Rule: "AwsSolutions-IAM5", On: t.Functions["Deliver"].Role(), AppliesTo: []string{"Resource::*"},
			Reason: "The network interfaces Lambda manages for a function in a VPC (ec2:CreateNetworkInterface, DescribeNetworkInterfaces, " +
				"DescribeSubnets, DeleteNetworkInterface, Assign/UnassignPrivateIpAddresses, as AWS's AWSLambdaVPCAccessExecutionRole grants " +
				"them): EC2 takes the Describes on * only, and Lambda checks the role for them before any interface exists.",
		},
	}
}

// suppressNagFindings records the accepted findings on their constructs, in
// the metadata cdk-nag reads.
func suppressNagFindings(list []nagSuppression) {
	for _, s := range list {
		sup := &cdknag.NagPackSuppression{Id: jsii.String(s.Rule), Reason: jsii.String(s.Reason)}
		if len(s.AppliesTo) > 0 {
			applies := make([]any, len(s.AppliesTo))
			for i, a := range s.AppliesTo {
				applies[i] = a
			}
			sup.AppliesTo = &applies
		}
		cdknag.NagSuppressions_AddResourceSuppressions(s.On, &[]*cdknag.NagPackSuppression{sup}, jsii.Bool(true))
	}
}
