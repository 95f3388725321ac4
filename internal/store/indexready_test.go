package store

import (
	"context"
	"errors"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// A reader of an index DynamoDB is still backfilling (CREATING: a deploy
// has just added it, and CloudFormation does not wait for the backfill)
// gets a typed *IndexNotReadyError naming the index, which the api
// answers 503, never a bare ValidationException it would answer 500; once
// the index is ACTIVE the same read succeeds. An index not on the table
// yet (its deploy under way) is the same error.
func TestReadersOfACreatingIndexGetIndexNotReady(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		index string
		read  func(*Store) error
	}{
		{IndexDead, func(s *Store) error {
			_, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 10, "")
			return err
		}},
		{IndexLog, func(s *Store) error {
			_, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 10, "")
			return err
		}},
	} {
		t.Run(tc.index, func(t *testing.T) {
			db := newFakeDB()
			s := New(db, "state")
			db.SetIndexCreating(tc.index, true)
			err := tc.read(s)
			var notReady *IndexNotReadyError
			require.True(t, errors.As(err, &notReady), "%v", err)
			require.Equal(t, tc.index, notReady.Index)
			require.Contains(t, notReady.Message, "Cannot read from backfilling global secondary index", "DynamoDB's own message is kept")

			db.SetIndexCreating(tc.index, false)
			require.NoError(t, tc.read(s), "ACTIVE: the same read succeeds")
		})
	}
}

func TestIndexNotReadyClassifies(t *testing.T) {
	other := errors.New("ValidationException: Consistent reads are not supported on global secondary indexes")
	require.Same(t, other, IndexNotReady(other, "by_log"), "another validation error stays what it is")
	down := errors.New("table unreachable")
	require.Same(t, down, IndexNotReady(down, "by_log"))
	missing := errors.New("ValidationException: The table does not have the specified index: by_log")
	var notReady *IndexNotReadyError
	require.True(t, errors.As(IndexNotReady(missing, "by_log"), &notReady), "an index a deploy has not added yet")
	require.NoError(t, IndexNotReady(nil, "by_log"))
}
