package hookline

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// tableIndexes are the names of the outbox's and the state table's global
// secondary indexes in s's template, sorted.
func tableIndexes(t *testing.T, s *synthesized) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, id := range map[string]string{"outbox": s.outboxTable, "state": s.stateTable} {
		out[name] = []string{}
		gsis, _ := s.resource(t, id, "AWS::DynamoDB::Table")["Properties"].(obj)["GlobalSecondaryIndexes"].(arr)
		for _, g := range gsis {
			out[name] = append(out[name], g.(obj)["IndexName"].(string))
		}
		slices.Sort(out[name])
	}
	return out
}

// indexChanges counts, per table, the indexes created or deleted from
// before to after.
func indexChanges(before, after map[string][]string) map[string]int {
	n := map[string]int{}
	for table := range after {
		for _, name := range after[table] {
			if !slices.Contains(before[table], name) {
				n[table]++
			}
		}
		for _, name := range before[table] {
			if !slices.Contains(after[table], name) {
				n[table]++
			}
		}
	}
	return n
}

// The upgrade from each supported release's own template is held by
// TestUpgradeStepsOneIndexPerTable (infra, the app), step by step as
// docs/deploying.md gives it; this file holds the settings against each
// other.

// Every change of one setting that moves the tables' indexes, from any
// configuration the construct takes, creates or deletes at most one index
// of a table; the one that would delete two (the message log off while
// its legacy index is kept) is refused with what to do instead.
// Not parallel: the jsii runtime takes one synth at a time.
func TestIndexSettingsChangeOneIndexAtATime(t *testing.T) {
	configs := []Props{{}, {KeepLegacyMessageLogIndex: true}, {DisableMessageLog: true}, {DeferDeliveryLogIndex: true}, {KeepLegacyMessageLogIndex: true, DeferDeliveryLogIndex: true}}
	indexes := make([]map[string][]string, len(configs))
	for i, p := range configs {
		indexes[i] = tableIndexes(t, synth(t, p))
	}
	require.Equal(t, []string{"by_tenant", "by_tenant_shard"}, indexes[1]["outbox"])
	require.Empty(t, indexes[2]["outbox"])
	require.Equal(t, []string{"by_dead", "gsi1"}, indexes[3]["state"], "the delivery log deferred")
	for i := range configs {
		for j := range configs {
			if i == j {
				continue
			}
			for table, n := range indexChanges(indexes[i], indexes[j]) {
				if differsInOneSetting(configs[i], configs[j]) {
					require.LessOrEqual(t, n, 1, "%+v -> %+v: %s", configs[i], configs[j], table)
				}
			}
		}
	}
	_, err := Props{DisableMessageLog: true, KeepLegacyMessageLogIndex: true}.withDefaults()
	require.ErrorContains(t, err, "deploy without the legacy index first")
}

// differsInOneSetting reports whether a and b differ in one of the index
// settings only.
func differsInOneSetting(a, b Props) bool {
	n := 0
	if a.DisableMessageLog != b.DisableMessageLog {
		n++
	}
	if a.KeepLegacyMessageLogIndex != b.KeepLegacyMessageLogIndex {
		n++
	}
	if a.DeferDeliveryLogIndex != b.DeferDeliveryLogIndex {
		n++
	}
	return n == 1
}
