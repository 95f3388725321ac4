package hookline

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"
)

// Lambda's recursive-loop detection, an AWS rule the local cloud does not
// enforce (docs/local-cloud.md).

// requireRecursionBounded asserts that exactly the functions that continue
// their work through their own queues, deliver and replay (each with its
// bound stated in code: allowRecursiveLoop, allowReplayLoop), opt out of
// Lambda's recursive-loop detection, and that an alarm on each function's
// RecursiveInvocationsDropped notifies the topic.
func requireRecursionBounded(t *testing.T, s *synthesized) {
	t.Helper()
	for fn, want := range map[string]any{s.deliverFn: "Allow", s.replayFn: "Allow", s.enqueueFn: nil, s.apiFn: nil} {
		loop := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties").(obj)["RecursiveLoop"]
		if want == nil {
			require.Contains(t, []any{nil, "Terminate"}, loop, "function %s keeps Lambda's recursive-loop detection", fn)
			continue
		}
		require.Equal(t, want, loop, "function %s", fn)
	}
	topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
	for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
		var found *map[string]*map[string]any
		check(t, func() {
			found = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), obj{"Properties": obj{
				"Namespace": "AWS/Lambda", "MetricName": "RecursiveInvocationsDropped",
				"Dimensions": arr{obj{"Name": "FunctionName", "Value": refTo(fn)}},
				"Statistic":  "Sum", "Period": 300, "EvaluationPeriods": 1,
				"Threshold": 0, "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
				"AlarmActions": assertions.Match_ArrayWith(&arr{refTo(topic)}),
			}})
		})
		require.Len(t, *found, 1, "one RecursiveInvocationsDropped alarm on %s, to the topic", fn)
	}
}
