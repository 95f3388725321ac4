package store

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// With the KEYS index lagging the table (as gsi1 does on DynamoDB), a key
// made a moment before its tenant's tombstone is still revoked by the
// tombstone (found by its reference, a strongly consistent read), and
// never authenticates while the tombstone lasts; a key made a moment
// before RevokeAPIKey is revoked, not 404. Before the references, the
// index query missed both keys: the first outlived the erasure's
// revocation and authenticated, the second could not be revoked.
func TestKeysAreRevokedWithoutWaitingForTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	for _, id := range []string{"gone", "kept"} {
		_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: id})
		require.NoError(t, err)
	}
	db.LagIndex = true
	db.Propagate()

	_, err := s.PutAPIKey(ctx, domain.APIKey{KeyID: "k_late", TenantID: "gone", Hash: "h_late"})
	require.NoError(t, err)
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k_kept", TenantID: "kept", Hash: "h_kept"})
	require.NoError(t, err)
	require.NoError(t, s.Tombstone(ctx, "gone"))

	_, err = s.TenantForKey(ctx, "h_late")
	require.ErrorIs(t, err, ErrNotFound, "a key made just before the tombstone stops authenticating")
	out := db.Item(apiKeyKey("h_late"))
	var k domain.APIKey
	require.NoError(t, attributevalue.UnmarshalMap(out, &k))
	require.NotNil(t, k.RevokedAt, "and is revoked, though the index did not show it yet")

	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k_after", TenantID: "gone", Hash: "h_after"})
	require.ErrorIs(t, err, ErrNotFound, "no key is made once the tombstone is written")
	require.Nil(t, db.Item(apiKeyKey("h_after")))

	owner, err := s.TenantForKey(ctx, "h_kept")
	require.NoError(t, err)
	require.Equal(t, "kept", owner)
	require.NoError(t, s.RevokeAPIKey(ctx, "kept", "k_kept"), "a key the index does not show yet is revoked")
	_, err = s.TenantForKey(ctx, "h_kept")
	require.ErrorIs(t, err, ErrNotFound)
}

// TenantForKey honours the tombstone whatever the key item says: a key
// left unrevoked (written by a version before the references, say) does
// not authenticate while its tenant is being erased.
func TestTenantForKeyHonoursTheTombstone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "gone"})
	require.NoError(t, err)
	item, err := attributevalue.MarshalMap(domain.APIKey{KeyID: "k_old", TenantID: "gone", Hash: "h_old"})
	require.NoError(t, err)
	db.SetItem(withKey(item, apiKeyKey("h_old"))) // no reference, not in the index
	owner, err := s.TenantForKey(ctx, "h_old")
	require.NoError(t, err)
	require.Equal(t, "gone", owner)
	require.NoError(t, s.Tombstone(ctx, "gone"))
	_, err = s.TenantForKey(ctx, "h_old")
	require.ErrorIs(t, err, ErrNotFound)
}

// A key whose item an erasure deleted while the KEYS index (eventually
// consistent) still lists it is not there to revoke: 404, not a 500 from
// the update's failed condition (schemathesis found it: DELETE
// /v1/admin/tenants/{tenant_id}/keys/{key_id} racing an erasure).
func TestRevokingAKeyTheIndexStillListsIsNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: "t"})
	require.NoError(t, err)
	_, err = s.PutAPIKey(ctx, domain.APIKey{KeyID: "k_gone", TenantID: "t", Hash: "h_gone"})
	require.NoError(t, err)
	db.Propagate()
	db.LagIndex = true
	// The erasure's deletes: the key's item and its reference; the index
	// has not caught up.
	db.RemoveItem(apiKeyKey("h_gone"))
	db.RemoveItem(keyRefKey("t", "k_gone"))
	require.ErrorIs(t, s.RevokeAPIKey(ctx, "t", "k_gone"), ErrNotFound)
}
