package hookline

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// maxEnvBytes is Lambda's limit on a function's environment: 4 KB, the
// names and values together (the local cloud does not enforce it).
const maxEnvBytes = 4 << 10

// physicalName bounds a name CloudFormation gives a resource of a stack
// named by stackName bytes: "<stack>-<logical id>-<12 characters>", the
// logical ids of hookline's resources under 32 characters.
func physicalName(stackName int) int { return stackName + 1 + 32 + 1 + 12 }

// resolvedBytes bounds the size of a value CloudFormation resolves at
// deploy, by what it is: a pseudo parameter at its longest (the stack's
// name at stackName bytes), a Ref to a resource as a queue's URL
// (https://sqs.<region>.amazonaws.com/<account>/<name>, the longest a Ref
// gives), an ARN (arn:<partition>:<service>:<region>:<account>:<name>, at
// the longest partition and region), an Elastic IP's address at 15, a join
// as its parts and separators; a literal as its bytes. (The local stack's api
// function holds 2,732 bytes by Lambda's count.)
func resolvedBytes(v any, stackName int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case obj:
		if ref, ok := x["Ref"].(string); ok {
			switch ref {
			case "AWS::Region":
				return 14
			case "AWS::AccountId":
				return 12
			case "AWS::Partition":
				return 10
			case "AWS::URLSuffix":
				return 16
			case "AWS::StackName":
				return stackName
			}
			return 47 + physicalName(stackName) // a queue's URL, the longest
		}
		if att, ok := x["Fn::GetAtt"].(arr); ok && len(att) == 2 {
			if att[1] == "PublicIp" {
				return 15
			}
			return 48 + physicalName(stackName) // an ARN
		}
		if j, ok := x["Fn::Join"].(arr); ok && len(j) == 2 {
			parts := j[1].(arr)
			n := len(j[0].(string)) * max(len(parts)-1, 0)
			for _, p := range parts {
				n += resolvedBytes(p, stackName)
			}
			return n
		}
	}
	return 256 // an intrinsic this bound does not know: more than any of ours
}

// envBytes bounds the size of a function's environment as Lambda counts
// it: the names and the values as resolved (resolvedBytes).
func envBytes(env obj, stackName int) int {
	n := 0
	for k, v := range env {
		n += len(k) + resolvedBytes(v, stackName)
	}
	return n
}

// With every setting that adds a variable on (static egress in 3 zones,
// notices with a configuration set, a catalog, tracing), every function's
// environment stays within Lambda's 4 KB for a stack name of up to 24
// characters ("Hookline" is 8): the catalog travels in the code, not a
// variable. Longer names are logged, not held: the api function's
// HOOKLINE_OWN_RESOURCES (every ARN of the stack's own, which an AWS
// destination may not be) grows with the name, and at 64 characters the
// bound passes 4 KB: a list to make compact before such names are taken.
func TestEveryEnvironmentFitsLambdasLimit(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	s := synth(t, Props{
		StaticEgressAZs: 3, NotifyFrom: "alerts@hookline.example", NotifyConfigurationSet: "hookline-notices",
		EventTypes: []EventType{shipment()}, Tracing: true, AlarmEmail: "oncall@example.com", OperatorEventsToAlarms: true,
	})
	for _, fn := range []string{s.deliverFn, s.enqueueFn, s.apiFn, s.replayFn} {
		n := envBytes(s.envOf(t, fn), 24)
		require.LessOrEqual(t, n, maxEnvBytes, "function %s's environment is about %d bytes with a 24-character stack name", fn, n)
		t.Logf("%s: at most %d of %d bytes with a 24-character stack name, %d with 64", fn, n, maxEnvBytes, envBytes(s.envOf(t, fn), 64))
	}
}
