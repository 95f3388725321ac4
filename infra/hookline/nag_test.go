//lint:file-ignore SA1019 assertions.Annotations answers cxapi.SynthesisMessage in the Go bindings; the type its deprecation points to has no Go binding yet

package hookline

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/require"
)

// TestNagAwsSolutions runs cdk-nag's AwsSolutions rule pack on the stack as
// it deploys (default props, with an alarm e-mail subscription, and the
// opt-in resources: operator events to alarms, tracing, static egress): no finding
// may be left unsuppressed, every suppression (infra/hookline/nag.go) gives its
// reason, and every suppression still suppresses something, so that one
// made stale by a fix is removed rather than left to hide the next finding.
func TestNagAwsSolutions(t *testing.T) {
	app := newApp(t)
	stack, _, accepted, err := newStack(app, "HooklineNag", &Props{
		Code:                   CodeFromDir(fakeAssets(t)),
		AlarmEmail:             "oncall@example.com",
		OperatorEventsToAlarms: true, // every resource, the opt-in ones too
		Tracing:                true,
		StaticEgressAZs:        2,
		NotifyFrom:             "alerts@hookline.example",
	})
	require.NoError(t, err)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{
		LogIgnores: jsii.Bool(true), // a suppressed finding is reported as info
		Reports:    jsii.Bool(false),
	}), nil)
	ann := assertions.Annotations_FromStack(stack)
	rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-"))

	var findings []string
	for level, msgs := range map[string]*[]*cxapi.SynthesisMessage{
		"error":   ann.FindError(jsii.String("*"), rule),
		"warning": ann.FindWarning(jsii.String("*"), rule),
	} {
		for _, m := range *msgs {
			findings = append(findings, fmt.Sprintf("%s at %s: %v", level, *m.Id, m.Entry.Data))
		}
	}
	sort.Strings(findings)
	require.Empty(t, findings, "cdk-nag findings neither fixed nor suppressed with a reason in infra/hookline/nag.go")

	suppressed := ann.FindInfo(jsii.String("*"), rule)
	t.Logf("%d findings suppressed, by %d suppressions", len(*suppressed), len(accepted))
	for _, s := range accepted {
		require.GreaterOrEqual(t, len(s.Reason), 40, "suppression of %s on %s explains itself", s.Rule, *s.On.Node().Path())
		// cdk-nag reports a suppressed finding as
		// "CdkNagSuppression[<applies to>]: <rule> was triggered but suppressed."
		findings := s.AppliesTo
		if len(findings) == 0 {
			findings = []string{""} // the rule, whatever its finding
		}
		for _, applies := range findings {
			used := false
			for _, m := range *suppressed {
				msg := fmt.Sprint(m.Entry.Data)
				if strings.HasPrefix(*m.Id, "/"+*s.On.Node().Path()+"/") && strings.Contains(msg, s.Rule+" was triggered") &&
					(applies == "" || strings.Contains(msg, "["+applies+"]")) {
					used = true
				}
			}
			require.True(t, used, "suppression of %s %s on %s suppresses nothing: remove it from infra/hookline/nag.go", s.Rule, applies, *s.On.Node().Path())
		}
	}
}
