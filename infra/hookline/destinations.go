package hookline

import (
	"fmt"
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fnenv"
)

// defaultDestinationRoles is Props.DestinationRoles's default: any role
// in the stack's partition.
func defaultDestinationRoles() []string {
	return []string{"arn:" + *awscdk.Aws_PARTITION() + ":iam::*:role/*"}
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
// are refused) and the regions.
func destinationsEnv(p Props) fnenv.Destinations {
	return fnenv.Destinations{
		Partition: *awscdk.Aws_PARTITION(), Account: *awscdk.Aws_ACCOUNT_ID(), StackName: *awscdk.Aws_STACK_NAME(),
		Regions: p.DestinationRegions, OwnAccount: p.DestinationOwnAccount,
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
