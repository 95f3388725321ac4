package main

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"
)

// The app's EgressIPs output: with staticEgressAZs, the NAT gateways'
// Elastic IPs joined by commas (what internal/stackoutputs reads and
// docs/receiving.md tells receivers to allowlist); without it, no such
// output.
func TestEgressIPsOutput(t *testing.T) {
	// Not parallel: the jsii runtime is one process (stack_test.go).
	outputs := func(ctx map[string]string) map[string]struct{ Value any } {
		t.Helper()
		ctx["assetDir"] = fakeAssets(t)
		props, name, err := propsFromContext(func(k string) string { return ctx[k] })
		require.NoError(t, err)
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
		require.NoError(t, newStack(app, name, props))
		stack := app.Node().FindChild(jsii.String(name)).(awscdk.Stack)
		b, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
		require.NoError(t, err)
		var tpl struct {
			Outputs map[string]struct{ Value any }
		}
		require.NoError(t, json.Unmarshal(b, &tpl))
		return tpl.Outputs
	}
	require.NotContains(t, outputs(map[string]string{}), "EgressIPs")

	out := outputs(map[string]string{"staticEgressAZs": "2"})
	require.Contains(t, out, "EgressIPs")
	join := out["EgressIPs"].Value.(map[string]any)["Fn::Join"].([]any)
	require.Equal(t, ",", join[0])
	ips := join[1].([]any)
	require.Len(t, ips, 2, "one address per zone")
	for _, ip := range ips {
		att := ip.(map[string]any)["Fn::GetAtt"].([]any)
		require.Equal(t, "PublicIp", att[1], "%v is an Elastic IP's address", att[0])
	}
}
