package hookline

import (
	"testing"

	"github.com/hookline/hookline/internal/store"
	outboxpkg "github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// TestIndexProjections holds every index of both tables to its projection:
// gsi1 all attributes (every record kind it lists is read whole from it);
// the dead index exactly store.DeadIndexAttributes, never the message or
// the attempt log (a death is then one index write unit, whatever its
// event's size; CloudFormation cannot change a projection in place, so a
// wrong one costs an index dropped and added again); the message log's
// indexes the three attributes of its listing. An index not named here
// fails: a new one says what it projects.
func TestIndexProjections(t *testing.T) {
	t.Parallel()
	s := synth(t, Props{KeepLegacyMessageLogIndex: true}) // every index there is
	logAttrs := []string{outboxpkg.AttrType, outboxpkg.AttrOccurredAt, outboxpkg.AttrEndpointID}
	want := map[string]struct {
		typ     string
		include []string
	}{
		store.IndexTenant:            {"ALL", nil},
		store.IndexDead:              {"INCLUDE", store.DeadIndexAttributes},
		store.IndexLog:               {"INCLUDE", store.LogIndexAttributes},
		outboxpkg.IndexByTenant:      {"INCLUDE", logAttrs},
		outboxpkg.IndexByTenantShard: {"INCLUDE", logAttrs},
	}
	seen := map[string]bool{}
	for _, table := range []string{s.stateTable, s.outboxTable} {
		gsis := s.resource(t, table, "AWS::DynamoDB::Table")["Properties"].(obj)["GlobalSecondaryIndexes"].(arr)
		// DynamoDB's limits: 20 global indexes a table, and 100
		// projected non-key attributes over all of a table's indexes.
		require.LessOrEqual(t, len(gsis), 20, table)
		projected := 0
		for _, g := range gsis {
			if attrs, ok := g.(obj)["Projection"].(obj)["NonKeyAttributes"].(arr); ok {
				projected += len(attrs)
			}
		}
		require.LessOrEqual(t, projected, 100, "%s: projected attributes over its indexes", table)
		for _, g := range gsis {
			name := g.(obj)["IndexName"].(string)
			w, ok := want[name]
			require.True(t, ok, "index %s: its projection is not held here", name)
			seen[name] = true
			p := g.(obj)["Projection"].(obj)
			require.Equal(t, w.typ, p["ProjectionType"], name)
			var got []string
			if attrs, ok := p["NonKeyAttributes"].(arr); ok {
				for _, a := range attrs {
					got = append(got, a.(string))
				}
			}
			require.ElementsMatch(t, w.include, got, name)
			require.NotContains(t, got, "message", name)
			require.NotContains(t, got, "attempt_log", name)
		}
	}
	require.Len(t, seen, len(want), "every index is in the template")
	require.ElementsMatch(t, []string{"endpoint_id", "event_id", "event_type", "state", "dead_reason", "attempts", "last_status", "last_error", "replayed_at"},
		store.DeadIndexAttributes, "the dead index's projection changes only with a new index")
	require.ElementsMatch(t, []string{"endpoint_id", "event_id", "event_type", "state", "attempts", "last_status", "last_error", "dead_reason"},
		store.LogIndexAttributes, "the delivery log's projection changes only with a new index")
}
