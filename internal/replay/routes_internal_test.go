package replay

import (
	"slices"
	"testing"

	"github.com/hookline/hookline/internal/jobs"
	"github.com/stretchr/testify/require"
)

// Every kind of message has its handler in the one table, and the table
// routes no kind that jobs does not name.
func TestEveryKindIsRouted(t *testing.T) {
	t.Parallel()
	for _, k := range jobs.Kinds() {
		require.Contains(t, routes, k)
	}
	for k := range routes {
		require.True(t, slices.Contains(jobs.Kinds(), k), "%s", k)
	}
}
