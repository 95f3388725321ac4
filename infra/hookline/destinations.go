package hookline

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fnenv"
)

// DefaultDestinationRolePrefix is the name every customer's role must
// begin with under Props.DestinationRoles's default: a role that trusts
// hookline's account but was made for something else (another vendor's
// integration, an admin role without an sts:ExternalId condition) is out
// of the deliver function's reach unless its owner named it for hookline.
// The prefix is the product's name, as AWS's own integrations ask for
// theirs (Datadog's "DatadogIntegrationRole", the CDK bootstrap's "cdk-").
const DefaultDestinationRolePrefix = "hookline-"

// defaultDestinationRoles is Props.DestinationRoles's default: a role of
// any account of the stack's partition whose name, at the root path,
// begins with DefaultDestinationRolePrefix.
func defaultDestinationRoles() []string {
	return []string{"arn:" + *awscdk.Aws_PARTITION() + ":iam::*:role/" + DefaultDestinationRolePrefix + "*"}
}

// destinationRegionRE and destinationRoleRE are the shapes a
// DestinationRegions entry and a DestinationRoles pattern must have (a
// token, such as the stack's own region or partition, passes as it is).
var (
	destinationRegionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	destinationRoleRE   = regexp.MustCompile(`^arn:[a-z*-]+:iam::([0-9]{12}|\*):role/[\w+=,.@*/-]+$`)
)

// setDestinationDefaults sets and checks the AWS destinations' regions and
// role patterns.
func (p *Props) setDestinationDefaults() error {
	if len(p.DestinationRegions) == 0 {
		p.DestinationRegions = []string{*awscdk.Aws_REGION()}
	}
	for _, r := range p.DestinationRegions {
		if !*awscdk.Token_IsUnresolved(jsii.String(r)) && !destinationRegionRE.MatchString(r) {
			return fmt.Errorf("destination region %q is not a region name like eu-west-1", r)
		}
	}
	if len(p.DestinationRoles) == 0 {
		p.DestinationRoles = defaultDestinationRoles()
	}
	for _, r := range p.DestinationRoles {
		if !*awscdk.Token_IsUnresolved(jsii.String(r)) && !destinationRoleRE.MatchString(r) {
			return fmt.Errorf("destination role %q is not a role ARN pattern like arn:aws:iam::*:role/hookline-*", r)
		}
	}
	return nil
}

// destinationsEnv is the api function's part of the AWS destinations'
// settings: the stack's partition, account and name (its own resources
// are refused), the regions and the role patterns (a role the deliver
// function may not assume is refused at registration).
func destinationsEnv(p Props) fnenv.Destinations {
	return fnenv.Destinations{
		Partition: *awscdk.Aws_PARTITION(), Account: *awscdk.Aws_ACCOUNT_ID(), StackName: *awscdk.Aws_STACK_NAME(),
		Regions: p.DestinationRegions, Roles: p.DestinationRoles, OwnAccount: p.DestinationOwnAccount,
	}
}

// grantAssumeDestinationRoles lets the deliver function assume the
// customers' roles Props.DestinationRoles names, and no other; unless
// ownAccount, the roles of the stack's own account are denied, whatever
// the patterns say.
func grantAssumeDestinationRoles(deliver awslambda.Function, roles []string, ownAccount bool) {
	deliver.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("AssumeDestinationRoles"),
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings(roles...),
	}))
	if ownAccount {
		return
	}
	deliver.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DenyOwnAccountRoles"),
		Effect:    awsiam.Effect_DENY,
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings("arn:" + *awscdk.Aws_PARTITION() + ":iam::" + *awscdk.Aws_ACCOUNT_ID() + ":role/*"),
	}))
}

// ownResources are the instance's own resources an AWS destination could
// name: its queues, the operator bus, the alarm topic and its functions'
// roles.
type ownResources struct {
	Queues    []awssqs.Queue
	Bus       awsevents.IEventBus
	Topic     awssns.Topic
	Functions []awslambda.Function
}

// roles are the functions' roles' ARNs.
func (o ownResources) roles() []string {
	out := make([]string, 0, len(o.Functions))
	for _, fn := range o.Functions {
		out = append(out, *fn.Role().RoleArn())
	}
	return out
}

// targets are the ARNs of the own resources a destination could send to:
// the queues, the bus and the topic.
func (o ownResources) targets() []string {
	out := make([]string, 0, len(o.Queues)+2)
	for _, q := range o.Queues {
		out = append(out, *q.QueueArn())
	}
	return append(out, *o.Bus.EventBusArn(), *o.Topic.TopicArn())
}

// guardOwnResources holds the AWS destinations off the instance's own
// resources by their exact ARNs, which no name can slip past (the stack's
// name prefix the api also checks is not kept by every name, the operator
// bus's for one), with or without Props.DestinationOwnAccount:
//   - the deliver role may never assume one of hookline's own roles (an
//     explicit Deny);
//   - the deliver function assumes every customer's role with a session
//     policy that denies the queues, bus and topic (and allows only the
//     sends), so IAM refuses them whatever the role allows, and it refuses
//     such a target untried;
//   - the api function refuses a target or role_arn equal to one of them.
//
// Both functions read the ARNs from fnenv.VarOwnResources.
func guardOwnResources(o ownResources, deliver, api awslambda.Function) {
	deliver.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("DenyHooklineRoles"),
		Effect:    awsiam.Effect_DENY,
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings(o.roles()...),
	}))
	api.AddEnvironment(jsii.String(fnenv.VarOwnResources), jsii.String(strings.Join(append(o.targets(), o.roles()...), ",")), nil)
	deliver.AddEnvironment(jsii.String(fnenv.VarOwnResources), jsii.String(strings.Join(o.targets(), ",")), nil)
}
