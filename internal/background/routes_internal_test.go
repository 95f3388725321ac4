package background

import (
	"slices"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/stretchr/testify/require"
)

// Every kind of message but a step (the runner's own) has its handler in
// the one table, and every kind of job its step; neither table routes a
// kind that jobs or domain does not name.
func TestEveryKindIsRouted(t *testing.T) {
	t.Parallel()
	w := &Worker{}
	routes, steps := w.routes(), w.jobSteps()
	for _, k := range jobs.Kinds() {
		if k == jobs.KindStep {
			require.NotContains(t, routes, k, "a step is routed by the runner, through the job's kind")
			continue
		}
		require.Contains(t, routes, k)
	}
	for k := range routes {
		require.True(t, slices.Contains(jobs.Kinds(), k), "%s", k)
	}
	for _, k := range domain.JobKinds() {
		require.Contains(t, steps, k)
	}
	require.Len(t, steps, len(domain.JobKinds()))
}
