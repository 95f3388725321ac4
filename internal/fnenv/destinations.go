package fnenv

import "strings"

// The variables of the api function's Destinations.
const (
	varStackPartition          = "HOOKLINE_STACK_PARTITION"
	varStackAccount            = "HOOKLINE_STACK_ACCOUNT"
	varStackName               = "HOOKLINE_STACK_NAME"
	varDestinationRegions      = "HOOKLINE_DESTINATION_REGIONS"
	varDestinationOwnAccount   = "HOOKLINE_DESTINATION_OWN_ACCOUNT"
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
	// OwnAccount (HOOKLINE_DESTINATION_OWN_ACCOUNT "on") accepts targets
	// and roles in Account, hookline's own resources still refused. Default
	// off: the stack's account is refused.
	OwnAccount bool
}

func (d Destinations) vars(v map[string]string) {
	for k, s := range map[string]string{varStackPartition: d.Partition, varStackAccount: d.Account, varStackName: d.StackName, varDestinationRegions: strings.Join(d.Regions, ",")} {
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
	for _, r := range strings.Split(regions, ",") {
		if r = strings.TrimSpace(r); r != "" {
			d.Regions = append(d.Regions, r)
		}
	}
	return d
}
