package upgradeplan

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The plan docs/deploying.md gives parses, and the upgrade test's chain
// through 52e80f2, c4d38bf and 94033e1 runs 52e80f2's first two steps,
// joins c4d38bf where its own message log upgrade stands, takes it to the
// defaults, where 94033e1 (the release before issue 37) joins, and ends
// with this version's defaults (the deploy the end-to-end tests use).
func TestDocumentedPlanChains(t *testing.T) {
	b, err := os.ReadFile("../../docs/deploying.md")
	require.NoError(t, err)
	plan, err := Parse(string(b))
	require.NoError(t, err)
	var names []string
	for _, r := range plan {
		names = append(names, r.Name())
	}
	require.Equal(t, []string{"52e80f2", "c4d38bf", "c4d38bf messageLogLegacyIndex=true", "94033e1"}, names)
	chain, err := Chain(plan, "52e80f2", "c4d38bf", "94033e1")
	require.NoError(t, err)
	require.Equal(t, []Action{
		{Release: "52e80f2"},
		{Context: Context{"messageLogLegacyIndex": "true", "deliveryLogIndex": "false"}},
		{Context: Context{"messageLogLegacyIndex": "true"}},
		{Release: "c4d38bf", Context: Context{"messageLogLegacyIndex": "true"}},
		{Context: nil},
		{Release: "94033e1"},
		{Context: nil},
	}, chain)
	require.Equal(t, []string{"-c", "deliveryLogIndex=false", "-c", "messageLogLegacyIndex=true"}, chain[1].Context.Args())
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"no marker":          "# nothing\n",
		"unclosed":           Marker + "\n```text\nfrom a\n  deploy\n",
		"not defaults":       Marker + "\n```text\nfrom a\n  deploy -c x=1\n```\n",
		"deploy before from": Marker + "\n```text\n  deploy\n```\n",
		"bad context":        Marker + "\n```text\nfrom a\n  deploy -c x\n```\n",
	} {
		_, err := Parse(doc)
		require.Error(t, err, name)
	}
	_, err := Chain([]Release{{Commit: "a", Steps: []Context{nil}}}, "a", "b")
	require.ErrorContains(t, err, "no step of a reaches")
}
