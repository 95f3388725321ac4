package jobs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// idsArgs and sinceArgs stand for two kinds' arguments, as a job package
// writes them.
type idsArgs struct {
	IDs []string `json:"ids"`
}

func (idsArgs) JobKind() domain.JobKind { return domain.KindIDs }

type sinceArgs struct {
	Skipped int `json:"skipped"`
}

func (sinceArgs) JobKind() domain.JobKind { return domain.KindSince }

// stored are arguments as a store reads them (its own encoding).
type stored struct {
	kind domain.JobKind
	raw  string
}

func (s stored) JobKind() domain.JobKind   { return s.kind }
func (s stored) DecodeArgs(into any) error { return json.Unmarshal([]byte(s.raw), into) }

func TestArgsOf(t *testing.T) {
	t.Parallel()
	t.Run("stored arguments are decoded once, and changes stay in the job", func(t *testing.T) {
		t.Parallel()
		j := &domain.Job{JobID: "j", Kind: domain.KindIDs, Args: stored{domain.KindIDs, `{"ids":["d1","d2"]}`}}
		a, err := jobs.ArgsOf[idsArgs](j)
		require.NoError(t, err)
		require.Equal(t, []string{"d1", "d2"}, a.IDs)
		a.IDs = append(a.IDs, "d3")
		again, err := jobs.ArgsOf[idsArgs](j)
		require.NoError(t, err)
		require.Same(t, a, again, "the job holds the decoded arguments")
		require.Equal(t, []string{"d1", "d2", "d3"}, j.Args.(*idsArgs).IDs)
	})
	t.Run("a value is taken, nil is the kind's zero", func(t *testing.T) {
		t.Parallel()
		j := &domain.Job{Kind: domain.KindIDs, Args: idsArgs{IDs: []string{"d"}}}
		a, err := jobs.ArgsOf[idsArgs](j)
		require.NoError(t, err)
		require.Equal(t, []string{"d"}, a.IDs)
		z, err := jobs.ArgsOf[sinceArgs](&domain.Job{Kind: domain.KindSince})
		require.NoError(t, err)
		require.Zero(t, *z)
	})
	t.Run("another kind's arguments are an error", func(t *testing.T) {
		t.Parallel()
		_, err := jobs.ArgsOf[sinceArgs](&domain.Job{JobID: "j", Kind: domain.KindIDs, Args: stored{domain.KindIDs, `{"ids":["d"]}`}})
		require.ErrorContains(t, err, "job j is a ids job, not a since job")
		_, err = jobs.ArgsOf[sinceArgs](&domain.Job{JobID: "j", Kind: domain.KindSince, Args: &idsArgs{}})
		require.ErrorContains(t, err, "arguments *jobs_test.idsArgs, not jobs_test.sinceArgs")
		_, err = jobs.ArgsOf[idsArgs](&domain.Job{JobID: "j", Kind: domain.KindIDs, Args: stored{domain.KindIDs, `{"ids":7}`}})
		require.Error(t, err, "undecodable")
	})
}

// A job started without its kind's arguments is refused, nothing
// recorded: a replay by filter would have no bound.
func TestStartNeedsTheKindsArguments(t *testing.T) {
	t.Parallel()
	e := newRunner(t)
	for _, j := range []*domain.Job{
		{JobID: "none", TenantID: "acme", Kind: domain.KindIDs},
		{JobID: "other", TenantID: "acme", Kind: domain.KindIDs, Args: &sinceArgs{}},
	} {
		require.ErrorContains(t, e.r.Starter.Start(context.Background(), j), "started with arguments", j.JobID)
		_, err := e.st.Job(context.Background(), j.JobID)
		require.ErrorIs(t, err, store.ErrNotFound, j.JobID)
	}
	open, err := e.st.TenantJobs(context.Background(), "acme")
	require.NoError(t, err)
	require.Empty(t, open, "no place taken")
}
