package hookline

import (
	"fmt"
	"net/netip"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Static egress (Props.StaticEgressAZs): the deliver function, which POSTs
// to endpoints and calls AWS destinations, runs in a VPC of hookline's own
// whose internet traffic leaves through one NAT gateway per availability
// zone, each with an Elastic IP of the stack's. Those few addresses are
// what receivers allowlist (the EgressIPs output, GET /v1/egress-ips, the
// console). The other functions stay out of the VPC: none of them sends
// to a tenant's URL.
//
// hookline's own calls from deliver: DynamoDB goes through a gateway
// endpoint (free, and no NAT processing); SQS (the sends of deaths and
// waits, the visibility changes of retries), KMS (a Decrypt an hour per
// endpoint and instance) and STS go through the NAT. Interface endpoints
// for them would cost $7.30 a month per service and zone, and would take
// the customers' AWS destinations off the NAT too (their addresses are the
// service's, and a customer's policy could no longer pin aws:SourceIp):
// the arithmetic in docs/configuration.md. The event source mappings'
// receives and deletes are Lambda's, outside the function's network.

// egressVPCCIDR is static egress's VPC range. Fixed, so that the template
// and the SSRF guard's denylist (HOOKLINE_DENY_CIDRS, given to deliver and
// to the api's registration check) are the same value
// (TestStaticEgress), and away from 10.0.0.0/16, CDK's and many
// operators' default, so a network the operator peers is unlikely to
// overlap it.
const egressVPCCIDR = "10.231.0.0/16"

// egressVPC is egressVPCCIDR parsed.
var egressVPC = netip.MustParsePrefix(egressVPCCIDR)

// egressSubnetMask is each subnet's size: a /20, 4,096 addresses, of which
// Lambda's shared (Hyperplane) network interfaces take a few.
const egressSubnetMask = 20

// maxStaticEgressAZs is the most zones static egress spans: 3. The stack
// names its zones by index (the region's first, second, third), so a
// count the region lacks fails the deploy; most regions have 3 or more,
// us-west-1 offers most accounts 2.
const maxStaticEgressAZs = 3

// checkStaticEgress refuses a zone count static egress cannot deploy.
func (p *Props) checkStaticEgress() error {
	if p.StaticEgressAZs < 0 || p.StaticEgressAZs > maxStaticEgressAZs {
		return fmt.Errorf("static egress AZs %d: want 0 (off) or 1 to %d availability zones, one NAT gateway and Elastic IP each", p.StaticEgressAZs, maxStaticEgressAZs)
	}
	return nil
}

// staticEgress is the VPC and its addresses; nil without static egress,
// and every method of a nil one does nothing.
type staticEgress struct {
	VPC awsec2.Vpc
	// SecurityGroup is the deliver function's: outbound only.
	SecurityGroup awsec2.SecurityGroup
	// Addresses are the NAT gateways' Elastic IPs, in zone order.
	Addresses []awsec2.CfnEIP
}

// newStaticEgress creates the VPC of azs zones (none for 0): in each, a
// public subnet holding a NAT gateway with its Elastic IP and a private
// subnet routing to it, where deliver's network interfaces live; and the
// DynamoDB gateway endpoint on the private subnets' routes.
func newStaticEgress(scope constructs.Construct, id string, azs int) *staticEgress {
	if azs == 0 {
		return nil
	}
	c := constructs.NewConstruct(scope, &id)
	e := &staticEgress{}
	allocations := make([]*string, azs)
	zones := make([]*string, azs)
	for i := range azs {
		eip := awsec2.NewCfnEIP(c, jsii.String(fmt.Sprintf("Address%d", i+1)), &awsec2.CfnEIPProps{Domain: jsii.String("vpc")})
		e.Addresses = append(e.Addresses, eip)
		allocations[i] = eip.AttrAllocationId()
		// The region's zones by index: the stack has no region of its own
		// (it deploys to any), so CDK would otherwise know only two.
		zones[i] = awscdk.Fn_Select(jsii.Number(float64(i)), awscdk.Fn_GetAzs(jsii.String("")))
	}
	e.VPC = awsec2.NewVpc(c, jsii.String("Vpc"), &awsec2.VpcProps{
		IpAddresses:       awsec2.IpAddresses_Cidr(jsii.String(egressVPCCIDR)),
		AvailabilityZones: &zones,
		// Room kept for every zone up to the most, each subnet at a fixed
		// place: a count raised or lowered adds or removes a zone's
		// subnets and gateway, and replaces none (a subnet moved would
		// clash with its old range, and its NAT gateway go with it).
		ReservedAzs: jsii.Number(float64(maxStaticEgressAZs - azs)),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("Public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(egressSubnetMask), MapPublicIpOnLaunch: jsii.Bool(false)},
			{Name: jsii.String("Deliver"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(egressSubnetMask)},
		},
		NatGateways:        jsii.Number(float64(azs)),
		NatGatewayProvider: awsec2.NatProvider_Gateway(&awsec2.NatGatewayProps{EipAllocationIds: &allocations}),
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDB": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB(), Subnets: &[]*awsec2.SubnetSelection{privateSubnets()}},
		},
		// The default security group is attached to nothing; restricting
		// it would take a custom resource (a Node.js function of CDK's,
		// with a managed-policy role) in hookline's stack.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
	e.SecurityGroup = awsec2.NewSecurityGroup(c, jsii.String("Deliver"), &awsec2.SecurityGroupProps{
		Vpc:              e.VPC,
		Description:      jsii.String("hookline deliver function: outbound to receivers and AWS, no inbound"),
		AllowAllOutbound: jsii.Bool(true),
	})
	return e
}

// privateSubnets selects the subnets deliver runs in.
func privateSubnets() *awsec2.SubnetSelection {
	return &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}
}

// ips is the addresses joined by commas (a CloudFormation expression until
// deployment), or nil without static egress.
func (e *staticEgress) ips() *string {
	if e == nil {
		return nil
	}
	list := make([]*string, len(e.Addresses))
	for i, a := range e.Addresses {
		list[i] = a.AttrPublicIp()
	}
	return awscdk.Fn_Join(jsii.String(","), &list)
}

// ipList is ips as the api function's environment takes it (fnenv.APIEnv.EgressIPs).
func (e *staticEgress) ipList() []string {
	if e == nil {
		return nil
	}
	return []string{*e.ips()}
}

// egressDeny is the SSRF guard's denylist for p: the VPC's range with
// static egress, else none.
func egressDeny(p Props) []netip.Prefix {
	if p.StaticEgressAZs == 0 {
		return nil
	}
	return []netip.Prefix{egressVPC}
}

// place puts a function in the VPC's private subnets with the security
// group; a tune of functionDefaults.new.
func (e *staticEgress) place(fp *awslambda.FunctionProps) {
	if e == nil {
		return
	}
	fp.Vpc = e.VPC
	fp.VpcSubnets = privateSubnets()
	fp.SecurityGroups = &[]awsec2.ISecurityGroup{e.SecurityGroup}
}

// grantNetworkInterfaces lets fn's role manage the network interfaces
// Lambda creates for it in the VPC: what AWS's managed
// AWSLambdaVPCAccessExecutionRole grants, which CDK attaches only to a role
// of its own making (hookline's roles are its own: functionDefaults.new).
// EC2 takes these actions on * only (the Describes have no resource-level
// permissions, and Lambda validates the role before it knows the
// interfaces). Lambda checks the role at CreateFunction: the function
// depends on its role's policy.
func (e *staticEgress) grantNetworkInterfaces(fn awslambda.Function) {
	if e == nil {
		return
	}
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn,
		Actions: jsii.Strings("ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
			"ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"),
		ResourceArns: jsii.Strings("*"),
	})
}
