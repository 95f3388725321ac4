package hookline

import (
	"encoding/json"
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

// hookline's own roles, by their exact ARNs.
func (s *synthesized) ownRoles(t *testing.T) []any {
	var out []any
	for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
		out = append(out, obj{"Fn::GetAtt": arr{s.roleOf(t, fn), "Arn"}})
	}
	return out
}

// The deliver function may assume the customers' roles the patterns
// name, and no other: by default a role named hookline-* in any account
// of the stack's partition but its own; narrowed, only the patterns; with
// DestinationOwnAccount, the own account's too. hookline's own roles are
// denied by ARN whatever the props (a name prefix is no guard: the
// operator bus's name does not keep the stack's). No other function may
// assume any role.
func TestDestinationRoles(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		s := synth(t, Props{})
		got := assumeStatements(t, s)
		require.Equal(t, []any{obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":iam::*:role/hookline-*"}}}}, got["Allow"])
		require.ElementsMatch(t, append([]any{ownAccountRoles}, s.ownRoles(t)...), got["Deny"])
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
		require.ElementsMatch(t, s.ownRoles(t), got["Deny"], "hookline's own roles stay denied")
	})
}

// The api function learns the exact ARNs of the stack's own queues, bus,
// topic and roles, and refuses a destination naming one
// (api.DestinationRules.OwnResources); the deliver function learns the
// queues', bus's and topic's, which every session's policy denies
// (destination.Options.OwnResources).
func TestOwnResourcesEnv(t *testing.T) {
	s := synth(t, Props{DestinationOwnAccount: true})
	env := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	b, err := json.Marshal(env["HOOKLINE_OWN_RESOURCES"])
	require.NoError(t, err)
	got := string(b)
	deliverEnv := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	db, err := json.Marshal(deliverEnv["HOOKLINE_OWN_RESOURCES"])
	require.NoError(t, err)
	for _, id := range []string{s.deliveryQueue, s.laneQueue, s.deadLetter, s.enqueueFails, s.jobsQueue, s.replayOps, s.operatorBus} {
		require.Contains(t, string(db), `{"Fn::GetAtt":["`+id+`","Arn"]}`)
	}
	require.NotContains(t, string(db), "Role", "the session policy denies targets; the roles are the Deny's")
	for _, id := range []string{s.deliveryQueue, s.laneQueue, s.deadLetter, s.enqueueFails, s.jobsQueue, s.replayOps, s.operatorBus} {
		require.Contains(t, got, `{"Fn::GetAtt":["`+id+`","Arn"]}`)
	}
	for _, r := range s.ownRoles(t) {
		rb, err := json.Marshal(r)
		require.NoError(t, err)
		require.Contains(t, got, string(rb))
	}
	topics := 0
	for id, r := range dig(t, s.json, "Resources").(obj) {
		if r.(obj)["Type"] == "AWS::SNS::Topic" {
			require.Contains(t, got, `{"Ref":"`+id+`"}`, "the alarm topic")
			topics++
		}
	}
	require.Equal(t, 1, topics)
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
	require.Equal(t, obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":iam::*:role/hookline-*"}}}, env["HOOKLINE_DESTINATION_ROLES"],
		"the api refuses the roles the deliver role may not assume")

	deliverEnv := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.NotContains(t, deliverEnv, "HOOKLINE_DESTINATION_ROLE_PROBE", "the probe is on by default")

	s = synth(t, Props{DestinationOwnAccount: true, DisableDestinationRoleProbe: true})
	env = dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, obj{"Ref": "AWS::Region"}, env["HOOKLINE_DESTINATION_REGIONS"], "the stack's own region by default")
	require.Equal(t, "on", env["HOOKLINE_DESTINATION_OWN_ACCOUNT"])
	deliverEnv = dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, "off", deliverEnv["HOOKLINE_DESTINATION_ROLE_PROBE"])
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
