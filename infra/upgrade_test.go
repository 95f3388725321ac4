package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/upgradeplan"
	"github.com/stretchr/testify/require"
)

var recordReleases = flag.Bool("record-releases", false,
	"synthesize each release the upgrade plan names from its own commit (scripts/release-synth.sh) and rewrite testdata/releases.golden.json")

// releasesGolden holds, for each release the upgrade plan of
// docs/deploying.md starts from (its commit and context), the tables'
// indexes of that release's own synthesized template: recorded from the
// release's synth, never from this version's.
var releasesGolden = filepath.Join("testdata", "releases.golden.json")

// readPlan is the upgrade plan of docs/deploying.md.
func readPlan(t *testing.T) []upgradeplan.Release {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "deploying.md"))
	require.NoError(t, err)
	plan, err := upgradeplan.Parse(string(b))
	require.NoError(t, err)
	return plan
}

// synthTables synthesizes this version's app with ctx and reads its
// tables' indexes.
func synthTables(t *testing.T, ctx upgradeplan.Context) tableIndexes {
	t.Helper()
	assets := fakeAssets(t)
	props, name, err := propsFromContext(func(k string) string {
		if k == "assetDir" {
			return assets
		}
		return ctx[k]
	})
	require.NoError(t, err, "context %v", ctx)
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	require.NoError(t, newStack(app, name, props))
	stack := app.Node().FindChild(jsii.String(name)).(awscdk.Stack)
	b, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
	require.NoError(t, err)
	tables, err := tablesOf(b)
	require.NoError(t, err)
	return tables
}

// Every deploy of the documented upgrade plan, from each supported
// release's own template (the golden), changes at most one index of a
// table, a changed key schema or projection counted as a delete and a
// create: what CloudFormation takes in one update (it refuses more, and
// the local cloud takes anything, so only this test and the upgrade test
// catch it). The plan's last deploy of each release is this version's
// defaults. A future release that changes an index adds its steps to
// docs/deploying.md and, once it has landed, records its own tables:
// go test ./infra -run TestUpgradeStepsOneIndexPerTable -record-releases
// (which needs the release's commit in the clone).
// Not parallel: the jsii runtime takes one synth at a time.
func TestUpgradeStepsOneIndexPerTable(t *testing.T) {
	plan := readPlan(t)
	if *recordReleases {
		recorded := map[string]tableIndexes{}
		for _, r := range plan {
			args := append([]string{r.Commit}, strings.Split(r.Context.Key(), ",")...)
			if r.Context.Key() == "" {
				args = args[:1]
			}
			out, err := exec.Command(filepath.Join("..", "scripts", "release-synth.sh"), args...).Output()
			require.NoError(t, err, "synthesize %s", r.Name())
			b, err := os.ReadFile(strings.TrimSpace(string(out)))
			require.NoError(t, err)
			recorded[r.Name()], err = tablesOf(b)
			require.NoError(t, err, r.Name())
		}
		b, err := json.MarshalIndent(recorded, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(releasesGolden, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(releasesGolden)
	require.NoError(t, err)
	var releases map[string]tableIndexes
	require.NoError(t, json.Unmarshal(b, &releases))

	synthesized := map[string]tableIndexes{}
	tablesFor := func(ctx upgradeplan.Context) tableIndexes {
		if _, ok := synthesized[ctx.Key()]; !ok {
			synthesized[ctx.Key()] = synthTables(t, ctx)
		}
		return synthesized[ctx.Key()]
	}
	for _, r := range plan {
		before, ok := releases[r.Name()]
		require.True(t, ok, "release %s has no recorded tables in %s: record them with -record-releases", r.Name(), releasesGolden)
		for i, step := range r.Steps {
			after := tablesFor(step)
			for table, updates := range indexUpdates(before, after) {
				require.LessOrEqual(t, len(updates), 1,
					"from %s, deploy %d (%v), table %s: %v; CloudFormation creates or deletes one index of a table per update",
					r.Name(), i+1, step.Args(), table, updates)
			}
			before = after
		}
	}
	// What the plan ends with is what a new stack has.
	require.Equal(t, tablesFor(nil), synthesized[""])
}

// indexUpdates counts a changed key schema or projection as a delete and
// a create, and names the indexes created and deleted.
func TestIndexUpdatesCountsAChangeTwice(t *testing.T) {
	ix := func(name, projection string, keys ...string) indexDef {
		return indexDef{Name: name, Keys: keys, Projection: projection}
	}
	before := tableIndexes{"state": {ix("gsi1", "ALL", "gsi1pk HASH", "gsi1sk RANGE"), ix("old", "KEYS_ONLY", "a HASH")}}
	require.Empty(t, indexUpdates(before, before)["state"])
	require.Equal(t, []string{"delete gsi1 (key schema or projection changed)", "create gsi1"},
		indexUpdates(before, tableIndexes{"state": {ix("gsi1", "INCLUDE a", "gsi1pk HASH", "gsi1sk RANGE"), before["state"][1]}})["state"])
	require.Len(t, indexUpdates(before, tableIndexes{"state": {ix("gsi1", "ALL", "gsi1pk HASH"), before["state"][1]}})["state"], 2, "a key schema change")
	require.Equal(t, []string{"create new", "delete old"},
		indexUpdates(before, tableIndexes{"state": {before["state"][0], ix("new", "KEYS_ONLY", "a HASH")}})["state"])
}
