package fnenv

import "strings"

// The variables of the api function's Destinations.
const (
	varStackPartition        = "HOOKLINE_STACK_PARTITION"
	varStackAccount          = "HOOKLINE_STACK_ACCOUNT"
	varStackName             = "HOOKLINE_STACK_NAME"
	varDestinationRegions    = "HOOKLINE_DESTINATION_REGIONS"
	varDestinationOwnAccount = "HOOKLINE_DESTINATION_OWN_ACCOUNT"
	varDestinationRoles      = "HOOKLINE_DESTINATION_ROLES"
	// VarOwnResources is Destinations.OwnResources: the stack sets it on
	// the api function once every resource it names exists.
	VarOwnResources            = "HOOKLINE_OWN_RESOURCES"
	varFunctionRegion          = "AWS_REGION" // set by Lambda
	destinationOwnAccountValue = "on"
)

// Destinations are the AWS destinations (endpoints of type sqs, sns and
// eventbridge) the api function accepts at registration: its
// api.DestinationRules, field for field.
type Destinations struct {
	// Partition (HOOKLINE_STACK_PARTITION) is the stack's partition; a
	// target or role in another is refused. Empty: "aws".
	Partition string
	// Account (HOOKLINE_STACK_ACCOUNT) is the stack's account, where
	// hookline's own resources are. Empty: none known.
	Account string
	// StackName (HOOKLINE_STACK_NAME) is the stack's name: a resource of
	// Account whose name begins with it is hookline's own, and refused.
	StackName string
	// Regions (HOOKLINE_DESTINATION_REGIONS, comma-separated) are the
	// regions a target may be in. Default: the function's own region
	// (AWS_REGION), the stack's; the stack sets Props.DestinationRegions.
	Regions []string
	// Roles (HOOKLINE_DESTINATION_ROLES, comma-separated) are the ARN
	// patterns (IAM's wildcards * and ?) of the roles the deliver function
	// may assume, Props.DestinationRoles: a role_arn none matches is
	// refused. Empty: any role (tests; the stack always sets them).
	Roles []string
	// OwnResources (HOOKLINE_OWN_RESOURCES, comma-separated) are the exact
	// ARNs of the stack's own queues, topics, event bus and roles: a
	// target or role_arn equal to one is refused, whatever its name.
	OwnResources []string
	// OwnAccount (HOOKLINE_DESTINATION_OWN_ACCOUNT "on") accepts targets
	// and roles in Account, hookline's own resources still refused. Default
	// off: the stack's account is refused.
	OwnAccount bool
}

func (d Destinations) vars(v map[string]string) {
	for k, s := range map[string]string{varStackPartition: d.Partition, varStackAccount: d.Account, varStackName: d.StackName, varDestinationRegions: strings.Join(d.Regions, ","),
		varDestinationRoles: strings.Join(d.Roles, ","), VarOwnResources: strings.Join(d.OwnResources, ",")} {
		if s != "" {
			v[k] = s
		}
	}
	if d.OwnAccount {
		v[varDestinationOwnAccount] = destinationOwnAccountValue
	}
}

func loadDestinations(getenv func(string) string) Destinations {
	d := Destinations{
		Partition: getenv(varStackPartition), Account: getenv(varStackAccount), StackName: getenv(varStackName),
		OwnAccount: getenv(varDestinationOwnAccount) == destinationOwnAccountValue,
	}
	regions := getenv(varDestinationRegions)
	if regions == "" {
		regions = getenv(varFunctionRegion)
	}
	d.Regions = splitList(regions)
	d.Roles = splitList(getenv(varDestinationRoles))
	d.OwnResources = splitList(getenv(VarOwnResources))
	return d
}

// splitList is s's comma-separated, trimmed, non-empty items; nil when
// there are none.
func splitList(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}
