package hookline

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// ownAccountRoles is the pattern of the stack's own account's roles.
var ownAccountRoles = obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":iam::", obj{"Ref": "AWS::AccountId"}, ":role/*"}}}

// assumeStatements are the deliver role's sts:AssumeRole statements, by
// effect: their resources.
func assumeStatements(t *testing.T, s *synthesized) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for _, st := range s.rolePolicy(t, s.deliverFn) {
		for _, a := range st.Actions {
			if a == "sts:AssumeRole" {
				out[st.Effect] = append(out[st.Effect], roundTripAny(t, st.Resource).([]any)...)
			}
		}
	}
	return out
}

// The deliver function may assume the customers' roles the patterns
// name, and no other: by default any role of the stack's partition but
// those of its own account; narrowed, only the patterns; with
// DestinationOwnAccount, the own account's too. No other function may
// assume any role.
func TestDestinationRoles(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		s := synth(t, Props{})
		got := assumeStatements(t, s)
		require.Equal(t, []any{obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":iam::*:role/*"}}}}, got["Allow"])
		require.Equal(t, []any{ownAccountRoles}, got["Deny"])
		for _, fn := range []string{s.enqueueFn, s.apiFn, s.replayFn} {
			for _, st := range s.rolePolicy(t, fn) {
				require.NotContains(t, st.Actions, "sts:AssumeRole", "only deliver assumes roles")
			}
		}
	})
	t.Run("narrowed, own account allowed", func(t *testing.T) {
		roles := []string{"arn:aws:iam::111122223333:role/hookline-*", "arn:aws:iam::444455556666:role/hookline-*"}
		s := synth(t, Props{DestinationRoles: roles, DestinationOwnAccount: true})
		got := assumeStatements(t, s)
		require.Equal(t, []any{roles[0], roles[1]}, got["Allow"])
		require.Empty(t, got["Deny"])
	})
}

// The api function learns the regions, the stack's partition, account
// and name, and whether its own account is accepted; the stack outputs the
// deliver role's ARN, which customers' trust policies name.
func TestDestinationSettings(t *testing.T) {
	s := synth(t, Props{DestinationRegions: []string{"eu-west-1", "eu-central-1"}})
	env := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, "eu-west-1,eu-central-1", env["HOOKLINE_DESTINATION_REGIONS"])
	require.Equal(t, obj{"Ref": "AWS::Partition"}, env["HOOKLINE_STACK_PARTITION"])
	require.Equal(t, obj{"Ref": "AWS::AccountId"}, env["HOOKLINE_STACK_ACCOUNT"])
	require.Equal(t, obj{"Ref": "AWS::StackName"}, env["HOOKLINE_STACK_NAME"])
	require.NotContains(t, env, "HOOKLINE_DESTINATION_OWN_ACCOUNT")

	s = synth(t, Props{DestinationOwnAccount: true})
	env = dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, obj{"Ref": "AWS::Region"}, env["HOOKLINE_DESTINATION_REGIONS"], "the stack's own region by default")
	require.Equal(t, "on", env["HOOKLINE_DESTINATION_OWN_ACCOUNT"])
}

func TestDestinationPropsAreChecked(t *testing.T) {
	for _, p := range []Props{
		{DestinationRegions: []string{"Europe"}},
		{DestinationRoles: []string{"arn:aws:sqs:eu-west-1:111122223333:q"}},
		{DestinationRoles: []string{"*"}},
	} {
		_, err := p.withDefaults()
		require.ErrorContains(t, err, "destination")
	}
}
