package messagelog

import (
	"context"
	"errors"
	"testing"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// The message log read from an index DynamoDB is still creating (an
// upgrade has just added by_tenant_shard, or by_tenant back) is a typed
// store.IndexNotReadyError naming it, which the api answers 503; once the
// index is ACTIVE the listing reads it.
func TestListingACreatingIndexIsIndexNotReady(t *testing.T) {
	for _, tc := range []struct {
		index  string
		legacy bool
	}{{outbox.IndexByTenantShard, false}, {outbox.IndexByTenant, true}} {
		t.Run(tc.index, func(t *testing.T) {
			f := newOutbox()
			r := &Reader{DB: f, Table: "outbox", Legacy: tc.legacy}
			f.SetIndexCreating(tc.index, true)
			_, _, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{}, 10, "")
			var notReady *store.IndexNotReadyError
			require.True(t, errors.As(err, &notReady), "%v", err)
			require.Equal(t, tc.index, notReady.Index)
			f.SetIndexCreating(tc.index, false)
			_, _, err = r.ListEvents(context.Background(), "acme", domain.EventFilter{}, 10, "")
			require.NoError(t, err)
		})
	}
}
