package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// portalLinks: a link is stored once, for an existing tenant, read back by
// its hash with its scopes (none: read and replay) whatever its state (the API tells expired and revoked apart), and
// revoked by its id by its own tenant only.
func portalLinks(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_portal")
	_, err := s.CreateTenant(ctx, domain.Tenant{TenantID: tenant})
	require.NoError(t, err)
	expires := u.clock.Now().Add(15 * time.Minute).Truncate(time.Second)

	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_0", TenantID: u.id("t_nobody"), Hash: u.id("hp0"), ExpiresAt: expires})
	require.ErrorIs(t, err, store.ErrNotFound, "a link needs its tenant")
	_, err = s.PortalLink(ctx, u.id("hp0"))
	require.ErrorIs(t, err, store.ErrNotFound)

	made, err := s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_1", TenantID: tenant, Hash: u.id("hp1"), ExpiresAt: expires})
	require.NoError(t, err)
	require.Equal(t, u.clock.Now(), made.CreatedAt)
	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_2", TenantID: tenant, Hash: u.id("hp1"), ExpiresAt: expires})
	require.ErrorIs(t, err, store.ErrExists, "a hash is stored once")
	_, err = s.PutPortalLink(ctx, domain.PortalLink{LinkID: "pl_2", TenantID: tenant, Hash: u.id("hp2"), ExpiresAt: expires,
		Scopes: []domain.Scope{domain.ScopeEndpointsWrite, domain.ScopeEventsPublish}})
	require.NoError(t, err)

	got, err := s.PortalLink(ctx, u.id("hp1"))
	require.NoError(t, err)
	require.Equal(t, "pl_1", got.LinkID)
	require.Equal(t, tenant, got.TenantID)
	require.True(t, expires.Equal(got.ExpiresAt), "expiry %s, want %s", got.ExpiresAt, expires)
	require.Nil(t, got.RevokedAt)
	require.Empty(t, got.Scopes, "a link minted without scopes reads and replays only")
	scoped, err := s.PortalLink(ctx, u.id("hp2"))
	require.NoError(t, err)
	require.Equal(t, []domain.Scope{domain.ScopeEndpointsWrite, domain.ScopeEventsPublish}, scoped.Scopes, "the scopes come back as stored, in order")

	require.ErrorIs(t, s.RevokePortalLink(ctx, u.id("t_other"), "pl_1"), store.ErrNotFound, "another tenant's link is as good as missing")
	require.ErrorIs(t, s.RevokePortalLink(ctx, tenant, "pl_missing"), store.ErrNotFound)
	require.NoError(t, s.RevokePortalLink(ctx, tenant, "pl_1"))
	first := u.clock.Now()
	u.clock.Advance(time.Minute)
	require.NoError(t, s.RevokePortalLink(ctx, tenant, "pl_1"), "revoking twice is harmless")
	got, err = s.PortalLink(ctx, u.id("hp1"))
	require.NoError(t, err, "a revoked link is still read, to say so")
	require.NotNil(t, got.RevokedAt)
	require.True(t, first.Equal(*got.RevokedAt), "the first revocation's time stays")
	other, err := s.PortalLink(ctx, u.id("hp2"))
	require.NoError(t, err)
	require.Nil(t, other.RevokedAt, "the other link is untouched")
}
