package hookline

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/netguard"
	"github.com/stretchr/testify/require"
)

// ofType is the template's resources of type typ, by logical ID.
func (s *synthesized) ofType(typ string) map[string]obj {
	out := map[string]obj{}
	for id, r := range s.json["Resources"].(obj) {
		if r.(obj)["Type"] == typ {
			out[id] = r.(obj)
		}
	}
	return out
}

// propsOf is resource r's Properties.
func propsOf(r obj) obj { p, _ := r["Properties"].(obj); return p }

// envOf is function fnID's environment.
func (s *synthesized) envOf(t *testing.T, fnID string) obj {
	t.Helper()
	return dig(t, s.resource(t, fnID, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
}

// egressResources are the types static egress adds.
var egressResources = []string{
	"AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::EIP", "AWS::EC2::VPCEndpoint",
	"AWS::EC2::SecurityGroup", "AWS::EC2::InternetGateway", "AWS::EC2::Route",
}

// Off by default: no VPC and nothing of it, no function in a VPC, neither
// of its variables, no grant of network interfaces.
func TestStaticEgressOffByDefault(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	s := synth(t, Props{})
	for _, typ := range egressResources {
		require.Empty(t, s.ofType(typ), "%s without static egress", typ)
	}
	for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"VpcConfig": assertions.Match_Absent()})
		env := s.envOf(t, fn)
		require.NotContains(t, env, "HOOKLINE_DENY_CIDRS", fn)
		require.NotContains(t, env, "HOOKLINE_EGRESS_IPS", fn)
		for _, st := range s.rolePolicy(t, fn) {
			for _, a := range st.Actions {
				require.NotContains(t, a, "ec2:", "%s's role", fn)
			}
		}
	}
}

// With 2 zones: 2 Elastic IPs of the stack's, each on the NAT gateway of
// its zone's public subnet, each private subnet routing the internet to
// its own zone's gateway (no cross-zone traffic); DynamoDB's gateway
// endpoint on the private routes and no interface endpoint (SQS, KMS and
// STS cross the NAT); the deliver function alone in the private subnets,
// with an outbound-only security group, the network interfaces' grant and
// the VPC's range refused by its guard and by the api's registration
// check over any allowlist; the api function told the addresses.
func TestStaticEgress(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	s := synth(t, Props{StaticEgressAZs: 2, AllowCIDRs: []string{"10.0.0.0/8"}})

	vpcs := s.ofType("AWS::EC2::VPC")
	require.Len(t, vpcs, 1)
	var vpcID, cidr string
	for id, r := range vpcs {
		vpcID, cidr = id, propsOf(r)["CidrBlock"].(string)
	}
	require.Equal(t, egressVPCCIDR, cidr)

	eips := s.ofType("AWS::EC2::EIP")
	require.Len(t, eips, 2, "one Elastic IP per zone")
	for id, r := range eips {
		require.Equal(t, "vpc", propsOf(r)["Domain"], id)
	}
	nats := s.ofType("AWS::EC2::NatGateway")
	require.Len(t, nats, 2, "one NAT gateway per zone")
	subnets := s.ofType("AWS::EC2::Subnet")
	require.Len(t, subnets, 4, "a public and a private subnet per zone")
	zoneOf := func(subnet string) string { return fmt.Sprint(propsOf(subnets[subnet])["AvailabilityZone"]) }
	natZone := map[string]string{} // NAT gateway -> its zone
	var used []string
	for id, r := range nats {
		alloc := propsOf(r)["AllocationId"].(obj)["Fn::GetAtt"].(arr)
		require.Contains(t, eips, alloc[0], "%s's address is one of the stack's Elastic IPs", id)
		require.Equal(t, "AllocationId", alloc[1])
		used = append(used, alloc[0].(string))
		natZone[id] = zoneOf(propsOf(r)["SubnetId"].(obj)["Ref"].(string))
	}
	slices.Sort(used)
	require.Len(t, slices.Compact(used), 2, "each gateway its own address")

	// The private subnets: deliver's, each with a default route to its
	// zone's gateway.
	deliverSubnets := map[string]bool{}
	for _, id := range dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "VpcConfig", "SubnetIds").(arr) {
		deliverSubnets[id.(obj)["Ref"].(string)] = true
	}
	require.Len(t, deliverSubnets, 2, "deliver in both zones")
	zones := map[string]bool{}
	for sub := range deliverSubnets {
		require.Equal(t, false, propsOf(subnets[sub])["MapPublicIpOnLaunch"], "%s is private", sub)
		zones[zoneOf(sub)] = true
	}
	require.Len(t, zones, 2, "one private subnet per zone")
	routeTables := map[string]string{} // route table -> subnet
	for _, r := range s.ofType("AWS::EC2::SubnetRouteTableAssociation") {
		routeTables[propsOf(r)["RouteTableId"].(obj)["Ref"].(string)] = propsOf(r)["SubnetId"].(obj)["Ref"].(string)
	}
	privateRoutes := 0
	for id, r := range s.ofType("AWS::EC2::Route") {
		sub := routeTables[propsOf(r)["RouteTableId"].(obj)["Ref"].(string)]
		if !deliverSubnets[sub] {
			continue
		}
		privateRoutes++
		require.Equal(t, "0.0.0.0/0", propsOf(r)["DestinationCidrBlock"], id)
		nat := propsOf(r)["NatGatewayId"].(obj)["Ref"].(string)
		require.Equal(t, zoneOf(sub), natZone[nat], "%s routes to its own zone's gateway", id)
	}
	require.Equal(t, 2, privateRoutes)

	endpoints := s.ofType("AWS::EC2::VPCEndpoint")
	require.Len(t, endpoints, 1, "DynamoDB's gateway endpoint, no interface endpoint")
	for id, r := range endpoints {
		p := propsOf(r)
		require.Equal(t, "Gateway", p["VpcEndpointType"], id)
		require.Contains(t, fmt.Sprint(p["ServiceName"]), ".dynamodb")
		var tables []string
		for _, rt := range p["RouteTableIds"].(arr) {
			tables = append(tables, routeTables[rt.(obj)["Ref"].(string)])
		}
		require.ElementsMatch(t, sortedKeys(deliverSubnets), tables, "on the private subnets' routes")
	}

	sgs := s.ofType("AWS::EC2::SecurityGroup")
	require.Len(t, sgs, 1)
	for id, r := range sgs {
		require.Equal(t, refTo(vpcID), propsOf(r)["VpcId"])
		require.Empty(t, propsOf(r)["SecurityGroupIngress"], "no inbound")
		require.Equal(t, arr{obj{"CidrIp": "0.0.0.0/0", "Description": "Allow all outbound traffic by default", "IpProtocol": "-1"}}, propsOf(r)["SecurityGroupEgress"])
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{"VpcConfig": obj{"SecurityGroupIds": arr{getAtt(id, "GroupId")}}})
	}
	for _, fn := range []string{s.enqueueFn, s.apiFn, s.replayFn} {
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"VpcConfig": assertions.Match_Absent()})
	}

	// Lambda checks the role at CreateFunction: the grant comes first.
	stmts := s.rolePolicy(t, s.deliverFn)
	for _, a := range []string{"ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DeleteNetworkInterface",
		"ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"} {
		require.True(t, allows(stmts, a, "*"), "deliver's role may %s", a)
	}
	role := s.roleOf(t, s.deliverFn)
	deps := s.resource(t, s.deliverFn, "AWS::Lambda::Function")["DependsOn"]
	policyFirst := false
	for id := range s.ofType("AWS::IAM::Policy") {
		if slices.Contains(deps.(arr), any(id)) && fmt.Sprint(propsOf(s.resource(t, id, "AWS::IAM::Policy"))["Roles"]) == fmt.Sprint(arr{refTo(role)}) {
			policyFirst = true
		}
	}
	require.True(t, policyFirst, "deliver depends on its role's policy: %v", deps)
	for _, fn := range []string{s.enqueueFn, s.apiFn, s.replayFn} {
		require.False(t, allows(s.rolePolicy(t, fn), "ec2:CreateNetworkInterface", "*"), "%s is not in the VPC", fn)
	}

	// The guard: the VPC's range refused by deliver's and the api's,
	// though allowCIDRs covers it.
	for _, fn := range []string{s.deliverFn, s.apiFn} {
		env := s.envOf(t, fn)
		require.Equal(t, cidr, env["HOOKLINE_DENY_CIDRS"], fn)
		deny, err := netguard.ParsePrefixes(env["HOOKLINE_DENY_CIDRS"].(string))
		require.NoError(t, err)
		allow, err := netguard.ParsePrefixes(env["HOOKLINE_ALLOW_CIDRS"].(string))
		require.NoError(t, err)
		require.Equal(t, "10.0.0.0/8", env["HOOKLINE_ALLOW_CIDRS"])
		g := netguard.Guard{Allow: allow, Deny: deny}
		vpc := netip.MustParsePrefix(cidr)
		for _, a := range []netip.Addr{vpc.Addr(), vpc.Addr().Next().Next(), netip.MustParseAddr("10.231.48.7")} {
			require.ErrorIs(t, g.Check(a), netguard.ErrForbidden, "%s refuses %s", fn, a)
		}
		require.NoError(t, g.Check(netip.MustParseAddr("10.1.2.3")), "the rest of the allowlist stands")
	}

	// The addresses, to the api function: every Elastic IP's, in order.
	var ips arr
	for _, id := range []string{addressID(t, eips, 1), addressID(t, eips, 2)} {
		ips = append(ips, getAtt(id, "PublicIp"))
	}
	require.Equal(t, obj{"Fn::Join": arr{",", ips}}, s.envOf(t, s.apiFn)["HOOKLINE_EGRESS_IPS"])
	require.NotContains(t, s.envOf(t, s.deliverFn), "HOOKLINE_EGRESS_IPS", "deliver sends from them; the api shows them")
}

// addressID is the logical ID of the n-th Elastic IP (construct id
// Address<n>).
func addressID(t *testing.T, eips map[string]obj, n int) string {
	t.Helper()
	for id := range eips {
		if len(id) > len("EgressAddress1") && id[:len("EgressAddress1")] == fmt.Sprintf("EgressAddress%d", n) {
			return id
		}
	}
	t.Fatalf("no Elastic IP Address%d among %v", n, sortedKeys(eips))
	return ""
}

// A count raised from 2 to 3 (or lowered back) adds (or removes) the third
// zone's subnets, gateway and address, and moves nothing: every subnet of
// 2 is in 3 with the same logical ID, range and zone, and so are the
// addresses (a subnet moved would clash with its old range, and its
// gateway, and the receivers' allowlisted address, go with it).
func TestStaticEgressZonesAreStable(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	two, three := synth(t, Props{StaticEgressAZs: 2}), synth(t, Props{StaticEgressAZs: 3})
	for _, typ := range []string{"AWS::EC2::Subnet", "AWS::EC2::EIP", "AWS::EC2::NatGateway"} {
		a, b := two.ofType(typ), three.ofType(typ)
		require.Len(t, b, len(a)*3/2, typ)
		for id, r := range a {
			require.Contains(t, b, id, "%s %s kept", typ, id)
			require.Equal(t, propsOf(r), propsOf(b[id]), "%s %s unchanged", typ, id)
		}
	}
	require.Len(t, three.ofType("AWS::EC2::EIP"), 3)
	zones := map[string]bool{}
	for _, r := range three.ofType("AWS::EC2::Subnet") {
		zones[fmt.Sprint(propsOf(r)["AvailabilityZone"])] = true
		require.True(t, egressVPC.Contains(netip.MustParsePrefix(propsOf(r)["CidrBlock"].(string)).Addr()))
	}
	require.Len(t, zones, 3)
}

// The zone count: 0 (off) to 3; anything else refused by name.
func TestStaticEgressCount(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	for _, n := range []int{-1, 4, 6} {
		_, err := EffectiveProps(&Props{StaticEgressAZs: n})
		require.EqualError(t, err, fmt.Sprintf("static egress AZs %d: want 0 (off) or 1 to 3 availability zones, one NAT gateway and Elastic IP each", n))
	}
	for _, n := range []int{0, 1, 2, 3} {
		p, err := EffectiveProps(&Props{StaticEgressAZs: n})
		require.NoError(t, err)
		require.Equal(t, n, p.StaticEgressAZs)
	}
	s := synth(t, Props{StaticEgressAZs: 1})
	require.Len(t, s.ofType("AWS::EC2::NatGateway"), 1)
	require.Len(t, dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "VpcConfig", "SubnetIds").(arr), 1)
	check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::EC2::EIP"), jsii.Number(1)) })
}
