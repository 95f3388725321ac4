package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// reprocessProps configures newEnqueueReprocessPolicy.
type reprocessProps struct {
	// Failures is the enqueue mapping's on-failure queue.
	Failures awssqs.Queue
	// Outbox is the outbox table, its stream the mapping's source.
	Outbox awsdynamodb.Table
	// Enqueue is the enqueue function.
	Enqueue awslambda.Function
	// Bus is the operator's EventBridge bus: the operational events
	// enqueue parked on the failure queue are put there again.
	Bus awsevents.IEventBus
}

// newEnqueueReprocessPolicy creates the managed policy that an operator's
// role or user needs to reprocess the parked stream batches
// (scripts/enqueuereprocess), and nothing more: receive, delete and release
// the failure queue's messages, read the outbox stream, invoke the enqueue
// function, scan the outbox table (for the fallback), and put the parked
// operational events on the operator's bus. No function is
// given any of this: reprocessing runs with a person's credentials.
func newEnqueueReprocessPolicy(scope constructs.Construct, id string, p reprocessProps) awsiam.ManagedPolicy {
	statement := func(resource *string, actions ...string) awsiam.PolicyStatement {
		return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Effect: awsiam.Effect_ALLOW, Actions: jsii.Strings(actions...), Resources: &[]*string{resource},
		})
	}
	return awsiam.NewManagedPolicy(scope, &id, &awsiam.ManagedPolicyProps{
		// Keeps its earlier wording: IAM cannot change a policy's description, so a new one would replace the policy on upgrade.
		Description: jsii.String("Re-drive the outbox stream batches and operational events parked on the hookline enqueue failure queue (docs/operations.md)."),
		Statements: &[]awsiam.PolicyStatement{
			statement(p.Failures.QueueArn(), "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"),
			statement(p.Outbox.TableStreamArn(), "dynamodb:GetShardIterator", "dynamodb:GetRecords"),
			statement(p.Enqueue.FunctionArn(), "lambda:InvokeFunction"),
			statement(p.Outbox.TableArn(), "dynamodb:Scan"),
			statement(p.Bus.EventBusArn(), "events:PutEvents"),
		},
	})
}
