package hookline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hooklineFunctions are the template's four functions (those with the
// state table in their environment), by logical id, and the policies'
// documents, as JSON, by the role they are attached to.
func hooklineFunctions(t *testing.T, s *synthesized) (fns map[string]map[string]any, policies map[string]string) {
	t.Helper()
	fns, policies = map[string]map[string]any{}, map[string]string{}
	for id, r := range s.json["Resources"].(map[string]any) {
		res := r.(map[string]any)
		props, _ := res["Properties"].(map[string]any)
		switch res["Type"] {
		case "AWS::Lambda::Function":
			env, _ := props["Environment"].(map[string]any)
			if vars, _ := env["Variables"].(map[string]any); vars["HOOKLINE_STATE_TABLE"] != nil {
				fns[id] = props
			}
		case "AWS::IAM::Policy":
			doc, err := json.Marshal(props["PolicyDocument"])
			require.NoError(t, err)
			for _, role := range props["Roles"].([]any) {
				ref := role.(map[string]any)["Ref"].(string)
				policies[ref] += string(doc)
			}
		}
	}
	require.Len(t, fns, 4, "api, deliver, enqueue, replay")
	return fns, policies
}

// Tracing (the "tracing" context) turns on X-Ray active tracing on every
// function, with the grant the daemon's segments need and the variable
// that tells the function to send them, with the share of traces to send
// (TracingSampleRate, default 5%); off (the default), none of it.
func TestTracingProp(t *testing.T) {
	fns, policies := hooklineFunctions(t, synth(t, Props{Tracing: true}))
	for id, props := range fns {
		require.Equal(t, map[string]any{"Mode": "Active"}, props["TracingConfig"], id)
		vars := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		require.Equal(t, "xray", vars["HOOKLINE_TRACING"], id)
		role := props["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		require.Contains(t, policies[role], `"xray:PutTraceSegments"`, id)
		require.Contains(t, policies[role], `"xray:PutTelemetryRecords"`, id)
		require.Equal(t, "0.05", vars["HOOKLINE_TRACING_SAMPLE_RATE"], "X-Ray's default rule's rate: %s", id)
	}
	fns, _ = hooklineFunctions(t, synth(t, Props{Tracing: true, TracingSampleRate: 1}))
	for id, props := range fns {
		vars := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		require.Equal(t, "1", vars["HOOKLINE_TRACING_SAMPLE_RATE"], id)
	}
	for _, bad := range []float64{-0.5, 1.01} {
		_, err := Props{Tracing: true, TracingSampleRate: bad}.withDefaults()
		require.ErrorContains(t, err, "tracing sample rate", "%g", bad)
	}

	fns, policies = hooklineFunctions(t, synth(t, Props{}))
	for id, props := range fns {
		require.NotContains(t, props, "TracingConfig", id)
		vars := props["Environment"].(map[string]any)["Variables"].(map[string]any)
		require.NotContains(t, vars, "HOOKLINE_TRACING", id)
		require.NotContains(t, vars, "HOOKLINE_TRACING_SAMPLE_RATE", id)
	}
	for role, doc := range policies {
		require.False(t, strings.Contains(doc, "xray:"), "no X-Ray grant without tracing: %s", role)
	}
}
