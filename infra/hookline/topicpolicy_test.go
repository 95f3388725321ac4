package hookline

import (
	"path"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"
)

// The alarm topic's policy, an AWS rule the local cloud does not enforce
// (docs/local-cloud.md): an AWS::SNS::TopicPolicy replaces the topic's
// default policy.

// testEnv is what the pseudo parameters of a synthesized template stand
// for in resolve.
var testEnv = map[string]string{
	"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": "111122223333", "AWS::StackName": "HooklineTest",
}

// resolve evaluates a template value made of strings, Refs to pseudo
// parameters (testEnv) and Fn::Join, as CloudFormation would.
func resolve(t *testing.T, v any) string {
	t.Helper()
	switch x := v.(type) {
	case string:
		return x
	case obj:
		if ref, ok := x["Ref"].(string); ok {
			val, ok := testEnv[ref]
			require.Truef(t, ok, "Ref %s is not a pseudo parameter", ref)
			return val
		}
		if join, ok := x["Fn::Join"].(arr); ok {
			var parts []string
			for _, p := range join[1].(arr) {
				parts = append(parts, resolve(t, p))
			}
			return strings.Join(parts, join[0].(string))
		}
	}
	t.Fatalf("cannot resolve %#v", v)
	return ""
}

// alarmTopicStatements are the statements of the alarm topic's one
// AWS::SNS::TopicPolicy, by Sid (the TLS Deny's is "" or CDK's own).
func (s *synthesized) alarmTopicStatements(t *testing.T) []obj {
	t.Helper()
	topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
	var policies *map[string]*map[string]any
	check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::SNS::TopicPolicy"), nil) })
	var found []obj
	for id, p := range *policies {
		doc := roundTrip(t, p)
		if jsonOf(t, dig(t, doc, "Properties", "Topics")) != jsonOf(t, arr{refTo(topic)}) {
			continue
		}
		require.Nil(t, found, "the alarm topic has one policy, %s another", id)
		for _, st := range dig(t, doc, "Properties", "PolicyDocument", "Statement").(arr) {
			found = append(found, st.(obj))
		}
	}
	require.NotNil(t, found, "the alarm topic has a policy")
	return found
}

// requireAlarmsPublish asserts that the alarm topic's policy lets the
// instance's CloudWatch alarms publish, and no one else's, next to its
// TLS-only Deny. An AWS::SNS::TopicPolicy replaces the topic's default
// policy, whose owner-account Allow is what lets alarms publish: without
// this statement every alarm changes state and no one is told.
func requireAlarmsPublish(t *testing.T, s *synthesized) {
	t.Helper()
	topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
	var allow, deny obj
	for _, st := range s.alarmTopicStatements(t) {
		if strings.Contains(jsonOf(t, st["Principal"]), "cloudwatch.amazonaws.com") {
			require.Nil(t, allow, "one statement names CloudWatch")
			allow = st
		}
		if st["Effect"] == "Deny" {
			deny = st
		}
	}
	require.NotNil(t, allow, "the topic's policy lets CloudWatch alarms publish")
	cond := allow["Condition"].(obj)
	require.Equal(t, roundTripAny(t, obj{
		"Sid": "AlarmsPublish", "Effect": "Allow", "Action": "sns:Publish",
		"Principal": obj{"Service": "cloudwatch.amazonaws.com"}, "Resource": refTo(topic),
		"Condition": cond,
	}), roundTripAny(t, allow))
	require.Len(t, cond, 2, "conditioned on the account and the alarms' ARNs: %v", cond)
	require.Equal(t, roundTripAny(t, obj{"aws:SourceAccount": refTo("AWS::AccountId")}), roundTripAny(t, cond["StringEquals"]))
	source := resolve(t, dig(t, cond, "ArnLike", "aws:SourceArn"))
	require.Equal(t, "arn:aws:cloudwatch:us-east-1:111122223333:alarm:HooklineTest.Default.*", source)
	// Every alarm of the instance is named "<stack>.Default.<path>"
	// (nameAlarms): the pattern covers them all, and no alarm of a
	// sibling stack whose name begins with this one's ("HooklineTest-
	// Staging", whose alarms begin "HooklineTest-Staging."), as a
	// stack name holds no ".".
	var alarms *map[string]*map[string]any
	check(t, func() { alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), nil) })
	require.NotEmpty(t, *alarms)
	pattern := strings.TrimPrefix(source, "arn:aws:cloudwatch:us-east-1:111122223333:alarm:")
	names := map[string]bool{}
	for id, a := range *alarms {
		name := resolve(t, dig(t, roundTrip(t, a), "Properties", "AlarmName"))
		require.True(t, strings.HasPrefix(name, strings.TrimSuffix(pattern, "*")), "alarm %s (%s) inside the pattern", id, name)
		require.False(t, names[name], "alarm names are unique: %s", name)
		names[name] = true
		sibling := strings.Replace(name, "HooklineTest.", "HooklineTest-Staging.", 1)
		ok, err := path.Match(pattern, sibling)
		require.NoError(t, err)
		require.False(t, ok, "a sibling stack's alarm %s is outside the pattern", sibling)
	}
	require.True(t, names["HooklineTest.Default.Operations.OldestDeliveryAge"], "named by their path: %v", names)
	// The TLS-only Deny stays.
	require.NotNil(t, deny, "the TLS-only Deny stays")
	require.Equal(t, roundTripAny(t, obj{"Bool": obj{"aws:SecureTransport": "false"}}), roundTripAny(t, deny["Condition"]))
	require.Equal(t, "sns:Publish", deny["Action"])
}
