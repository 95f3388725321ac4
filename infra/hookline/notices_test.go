package hookline

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// sesStatements are the statements of fnID's role that name an SES
// action.
func (s *synthesized) sesStatements(t *testing.T, fnID string) []statement {
	t.Helper()
	var out []statement
	for _, st := range s.rolePolicy(t, fnID) {
		for _, a := range st.Actions {
			if strings.HasPrefix(a, "ses:") {
				out = append(out, st)
				break
			}
		}
	}
	return out
}

// Off by default: no rule from the bus, no SES grant, no sender variable.
func TestNoticesOffByDefault(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	s := synth(t, Props{})
	bus := dig(t, s.json, "Outputs", "OperatorEventBusName", "Value", "Ref").(string)
	require.Empty(t, s.busRules(t, bus))
	for _, fn := range []string{s.apiFn, s.replayFn, s.deliverFn, s.enqueueFn} {
		require.Empty(t, s.sesStatements(t, fn))
		require.NotContains(t, s.envOf(t, fn), "HOOKLINE_NOTIFY_FROM")
	}
}

// With NotifyFrom: one rule on the operator's bus, matching exactly the
// operational events, targeting the replay function's operations queue,
// whose policy lets EventBridge send for that rule only; the api and
// replay functions (and no other) may send e-mail through the identity,
// as the one address, and are told it.
func TestNotices(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	s := synth(t, Props{NotifyFrom: "alerts@hookline.example", NotifyConfigurationSet: "hookline"})
	bus := dig(t, s.json, "Outputs", "OperatorEventBusName", "Value", "Ref").(string)
	rules := s.busRules(t, bus)
	require.Len(t, rules, 1)
	var ruleID string
	for id, props := range rules {
		ruleID = id
		require.Equal(t, roundTripAny(t, obj{"source": arr{"hookline"}, "detail-type": stringsAny(domain.OpEventTypes)}), props["EventPattern"])
		targets := props["Targets"].(arr)
		require.Len(t, targets, 1)
		require.Equal(t, getAtt(s.replayOps, "Arn"), targets[0].(obj)["Arn"])
		require.Nil(t, targets[0].(obj)["Input"], "the event whole: the replay function reads EventBridge's envelope")
	}

	var policies *map[string]*map[string]any
	check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::SQS::QueuePolicy"), nil) })
	var sends []obj
	for _, p := range *policies {
		doc := roundTrip(t, p)
		if jsonOf(t, dig(t, doc, "Properties", "Queues")) != jsonOf(t, arr{refTo(s.replayOps)}) {
			continue
		}
		for _, st := range dig(t, doc, "Properties", "PolicyDocument", "Statement").(arr) {
			if strings.Contains(jsonOf(t, st.(obj)["Principal"]), "events.amazonaws.com") && strings.Contains(jsonOf(t, st), ruleID) {
				sends = append(sends, st.(obj))
			}
		}
	}
	require.Len(t, sends, 1)
	require.Equal(t, roundTripAny(t, obj{"ArnEquals": obj{"aws:SourceArn": getAtt(ruleID, "Arn")}}), roundTripAny(t, sends[0]["Condition"]), "for this rule only")

	identity := obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":ses:", obj{"Ref": "AWS::Region"}, ":", obj{"Ref": "AWS::AccountId"}, ":identity/hookline.example"}}}
	configSet := obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":ses:", obj{"Ref": "AWS::Region"}, ":", obj{"Ref": "AWS::AccountId"}, ":configuration-set/hookline"}}}
	for _, fn := range []string{s.apiFn, s.replayFn} {
		sts := s.sesStatements(t, fn)
		require.Len(t, sts, 1)
		require.Equal(t, []string{"ses:SendEmail"}, sts[0].Actions)
		require.ElementsMatch(t, roundTripAny(t, arr{identity, configSet}), roundTripAny(t, sts[0].Resource), "the stack's identity (the sender's domain by default) and configuration set only")
		require.Equal(t, roundTripAny(t, obj{"StringEquals": obj{"ses:FromAddress": "alerts@hookline.example"}}), roundTripAny(t, sts[0].Condition), "as the one address")
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
			"HOOKLINE_NOTIFY_FROM": "alerts@hookline.example", "HOOKLINE_NOTIFY_CONFIGURATION_SET": "hookline",
		})}})
	}
	for _, fn := range []string{s.deliverFn, s.enqueueFn} {
		require.Empty(t, s.sesStatements(t, fn), "only the api and replay functions send e-mail")
	}
}

// The sender is a bare address; the identity, the address or its domain.
func TestNoticesProps(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	for _, tc := range []struct {
		p   Props
		err string
	}{
		{Props{NotifyFrom: "Alerts <alerts@hookline.example>"}, "bare e-mail address"},
		{Props{NotifyFrom: "alerts@hookline.example", NotifyIdentity: "evil.example"}, "as the address itself or its domain"},
		{Props{NotifyIdentity: "hookline.example"}, "without notifyFrom"},
	} {
		_, err := tc.p.withDefaults()
		require.ErrorContains(t, err, tc.err)
	}
	p, err := Props{NotifyFrom: "alerts@hookline.example", NotifyIdentity: "alerts@hookline.example"}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, "alerts@hookline.example", p.NotifyIdentity)
}
