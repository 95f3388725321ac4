package hookline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// busRules are the template's rules on the operator's bus, by id.
func (s *synthesized) busRules(t *testing.T, bus string) map[string]obj {
	t.Helper()
	var rules *map[string]*map[string]any
	check(t, func() { rules = s.tpl.FindResources(jsii.String("AWS::Events::Rule"), nil) })
	out := map[string]obj{}
	for id, r := range *rules {
		props := roundTrip(t, r)["Properties"].(obj)
		if ref, ok := props["EventBusName"].(obj); ok && ref["Ref"] == bus {
			out[id] = props
		}
	}
	return out
}

// The operator's bus: one, named by CloudFormation's generated name,
// exported, named to enqueue (and to no other function); no rule on it by
// default.
func TestOperatorBus(t *testing.T) {
	s := synth(t, Props{})
	bus := dig(t, s.json, "Outputs", "OperatorEventBusName", "Value", "Ref").(string)
	s.resource(t, bus, "AWS::Events::EventBus")
	check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::Events::EventBus"), jsii.Number(1)) })
	require.Equal(t, getAtt(bus, "Arn"), dig(t, s.json, "Outputs", "OperatorEventBusARN", "Value"))
	s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{
		"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_EVENT_BUS": refTo(bus)})},
	})
	for _, fn := range []string{s.deliverFn, s.apiFn, s.replayFn} {
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_EVENT_BUS": assertions.Match_Absent()})},
		})
		require.False(t, mentions(s.rolePolicy(t, fn), getAtt(bus, "Arn")), "only enqueue puts events")
	}
	require.Empty(t, s.busRules(t, bus), "opt-in: no rule by default")
	topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
	require.Empty(t, s.eventsGrants(t, topic), "no publisher grant on the topic without the rule")
}

// eventsGrants are the statements of the topic's policies naming
// EventBridge.
func (s *synthesized) eventsGrants(t *testing.T, topic string) []obj {
	t.Helper()
	var policies *map[string]*map[string]any
	check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::SNS::TopicPolicy"), nil) })
	var grants []obj
	for _, p := range *policies {
		doc := roundTrip(t, p)
		if jsonOf(t, dig(t, doc, "Properties", "Topics")) != jsonOf(t, arr{refTo(topic)}) {
			continue
		}
		for _, st := range dig(t, doc, "Properties", "PolicyDocument", "Statement").(arr) {
			if strings.Contains(jsonOf(t, st.(obj)["Principal"]), "events.amazonaws.com") {
				grants = append(grants, st.(obj))
			}
		}
	}
	return grants
}

// OperatorEventsToAlarms adds one rule on the bus matching exactly the
// operational events (source hookline, the five detail-types) and
// targeting the alarm topic, whose policy lets EventBridge publish for
// that rule only: AWS drops the rule's deliveries without it, the local
// cloud does not check it.
func TestOperatorEventsToAlarms(t *testing.T) {
	s := synth(t, Props{OperatorEventsToAlarms: true})
	bus := dig(t, s.json, "Outputs", "OperatorEventBusName", "Value", "Ref").(string)
	topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
	rules := s.busRules(t, bus)
	require.Len(t, rules, 1)
	var ruleID string
	for id, props := range rules {
		ruleID = id
		require.Equal(t, "ENABLED", props["State"])
		require.Equal(t, roundTripAny(t, obj{"source": arr{"hookline"}, "detail-type": stringsAny(domain.OpEventTypes)}), props["EventPattern"])
		require.Equal(t, roundTripAny(t, arr{obj{"Id": "AlarmTopic", "Arn": refTo(topic)}}), props["Targets"])
	}
	require.ElementsMatch(t, []string{"endpoint.disabled", "endpoint.failing", "endpoint.recovered", "endpoint.degraded", "delivery.dead"}, domain.OpEventTypes)

	grants := s.eventsGrants(t, topic)
	require.Len(t, grants, 1, "one statement lets EventBridge publish")
	require.Equal(t, roundTripAny(t, obj{
		"Sid": "OperatorEventsToAlarms", "Effect": "Allow", "Action": "sns:Publish",
		"Principal": obj{"Service": "events.amazonaws.com"}, "Resource": refTo(topic),
		"Condition": obj{"ArnEquals": obj{"aws:SourceArn": getAtt(ruleID, "Arn")}},
	}), roundTripAny(t, grants[0]), "for this rule only")
	// Beside the alarms' own statement and the TLS-only Deny, in the one
	// policy of the topic.
	requireAlarmsPublish(t, s)
	require.Len(t, s.alarmTopicStatements(t), 3)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func stringsAny(ss []string) arr {
	out := arr{}
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
