// Package desttest is the conformance suite of the AWS destinations'
// services as hookline's sender (internal/destination) uses them: STS's
// AssumeRole, SNS's Publish and EventBridge's PutEvents, each a Target of
// its own (RunSTS, RunSNS, RunEventBridge). Its cases are the semantics
// the sender depends on (a role assumed with the right external id gives
// credentials, a Publish or PutEvents reaches the topic's or bus's
// subscriber) and every AWS rule the fakes (stsfake, snsfake, ebfake)
// enforce, each case asserting AWS's answer: an error code, or a failed
// entry's ErrorCode for PutEvents. It runs on the fakes (this package's
// unit test) and on the local cloud (e2e/destcloud's
// TestDestinationsConformance), as sqstest does for SQS, so that a fake is
// held to the service. Every case runs in parallel on a bundle of its own
// (Target.Setup).
//
// Every answer is logged (t.Logf) with AWS's beside it, so that one run on
// a target shows what it does. A case named in Target.Forgives still runs:
// it is skipped, with the answers that differ from AWS's, when the target
// forgives at least one of them, and it fails when the target answers
// every request as AWS does, so that the list is kept to what the target
// forgives.
package desttest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
)

// Target is one implementation of a service under test; B is the
// service's bundle (STSBundle, SNSBundle, EventBridgeBundle).
type Target[B any] struct {
	// Setup returns a fresh bundle for one case, called once per case
	// (fresh role, topic or bus names); it cleans up through t.Cleanup.
	Setup func(ctx context.Context, t *testing.T) *B
	// Forgives names the cases the target does not enforce although AWS
	// does, with the reason. The fakes forgive nothing.
	Forgives map[string]string
}

// Accepted is the answer to a request that succeeded (for PutEvents: with
// no failed entry).
const Accepted = "accepted"

// Check is a case's view of its test: it records each answer against
// AWS's.
type Check struct {
	*testing.T
	forgiven bool
	misses   []string
}

// Answer logs the target's answer to the request label beside AWS's, and
// fails the case when they differ (records the difference when the case
// is forgiven).
func (c *Check) Answer(label, aws, got string) {
	c.Helper()
	c.Logf("%-48s -> %s (AWS: %s)", label, got, aws)
	if got == aws {
		return
	}
	if c.forgiven {
		c.misses = append(c.misses, label+": "+got)
		return
	}
	c.Errorf("%s: answered %s, AWS answers %s", label, got, aws)
}

// Code is the answer a call's error stands for: Accepted when nil, the
// AWS error code when it has one, else the error's text.
func Code(err error) string {
	var ae smithy.APIError
	switch {
	case err == nil:
		return Accepted
	case errors.As(err, &ae):
		return ae.ErrorCode()
	default:
		return err.Error()
	}
}

type testCase[B any] struct {
	name string
	run  func(c *Check, b *B)
}

func run[B any](t *testing.T, tg Target[B], cases []testCase[B]) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			why, forgiven := tg.Forgives[tc.name]
			c := &Check{T: t, forgiven: forgiven}
			tc.run(c, tg.Setup(t.Context(), t))
			switch {
			case !forgiven || t.Failed():
			case len(c.misses) == 0:
				t.Errorf("forgiven (%s), but every answer is AWS's: remove %s from Forgives", why, tc.name)
			default:
				t.Skipf("the target forgives what AWS refuses: %s; %s", why, strings.Join(c.misses, "; "))
			}
		})
	}
}

// answer is Code of a call's error, its output dropped.
func answer[T any](_ T, err error) string { return Code(err) }
