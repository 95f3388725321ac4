package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// signingKeys: an endpoint's signature schemes and Ed25519 keys are stored
// on create and changed by an update; a rotation that brings a key puts it
// first and retires the newest (older ones go), conditional on the keys
// read; one without a key leaves them alone.
func signingKeys(t *testing.T, u *suite) {
	ctx, s := context.Background(), u.s
	tenant := u.id("t_keys")
	_, err := s.CreateEndpoint(ctx, domain.Endpoint{
		TenantID: tenant, EndpointID: "ep_k", URL: "https://example.com/k", SealedSecrets: []string{"sealed_s1"},
		Signatures: []string{domain.SchemeV1a}, SealedSigningKeys: []string{"sealed_k1"}, PublicKeys: []string{"whpk_1"},
	})
	require.NoError(t, err)
	read, err := s.Endpoint(ctx, tenant, "ep_k")
	require.NoError(t, err)
	require.Equal(t, []string{domain.SchemeV1a}, read.Signatures)
	require.Equal(t, []string{"sealed_k1"}, read.SealedSigningKeys)
	require.Equal(t, []string{"whpk_1"}, read.PublicKeys)

	got, err := s.RotateSecret(ctx, tenant, "ep_k", store.Rotation{Sealed: "sealed_s2", Grace: time.Hour, SealedSigningKey: "sealed_k2", PublicKey: "whpk_2"})
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_k2", "sealed_k1"}, got.SealedSigningKeys)
	require.Equal(t, []string{"whpk_2", "whpk_1"}, got.PublicKeys)
	require.Equal(t, 2, got.ActiveKeys(u.clock.Now()))
	require.Equal(t, 1, got.ActiveKeys(u.clock.Now().Add(time.Hour)), "the retiring key stops at the secret's overlap")

	got, err = s.RotateSecret(ctx, tenant, "ep_k", store.Rotation{Sealed: "sealed_s3", Grace: time.Hour, SealedSigningKey: "sealed_k3", PublicKey: "whpk_3"})
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_k3", "sealed_k2"}, got.SealedSigningKeys, "only the newest retires")
	require.Equal(t, []string{"whpk_3", "whpk_2"}, got.PublicKeys)

	got, err = s.RotateSecret(ctx, tenant, "ep_k", store.Rotation{Sealed: "sealed_s4", Grace: time.Hour})
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_k3", "sealed_k2"}, got.SealedSigningKeys, "a rotation without a key leaves the keys")

	// Switching schemes, and a first key, by an update.
	v1, both := []string{domain.SchemeV1}, []string{domain.SchemeV1, domain.SchemeV1a}
	_, err = s.CreateEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_m", URL: "https://example.com/m", SealedSecrets: []string{"sealed_m"}})
	require.NoError(t, err)
	keys, pubs := []string{"sealed_mk"}, []string{"whpk_m"}
	got, err = s.UpdateEndpoint(ctx, tenant, "ep_m", store.EndpointChange{Signatures: &both, SealedSigningKeys: &keys, PublicKeys: &pubs})
	require.NoError(t, err)
	require.Equal(t, both, got.Signatures)
	require.Equal(t, keys, got.SealedSigningKeys)
	got, err = s.UpdateEndpoint(ctx, tenant, "ep_m", store.EndpointChange{Signatures: &v1})
	require.NoError(t, err)
	require.Equal(t, v1, got.Signatures)
	require.Equal(t, keys, got.SealedSigningKeys, "switching back to v1 keeps the key")

	// A rotation whose keys changed since it read them (its secret did
	// not) loses, and the winner's key stays.
	seal := func(ctx context.Context, plain string) (string, error) {
		wk, wp := []string{"sealed_kw"}, []string{"whpk_w"}
		_, err := s.UpdateEndpoint(ctx, tenant, "ep_race_k", store.EndpointChange{SealedSigningKeys: &wk, PublicKeys: &wp})
		require.NoError(t, err)
		return "sealed(" + plain + ")", nil
	}
	require.NoError(t, s.PutEndpoint(ctx, domain.Endpoint{TenantID: tenant, EndpointID: "ep_race_k", URL: "https://example.com/r", Secrets: []string{"whsec_old"}, SealedSigningKeys: []string{"sealed_k0"}, PublicKeys: []string{"whpk_0"}}))
	_, err = s.RotateSecret(ctx, tenant, "ep_race_k", store.Rotation{Sealed: "sealed_l", Seal: seal, SealedSigningKey: "sealed_kl", PublicKey: "whpk_l"})
	require.ErrorIs(t, err, store.ErrConflict)
	read, err = s.Endpoint(ctx, tenant, "ep_race_k")
	require.NoError(t, err)
	require.Equal(t, []string{"sealed_kw"}, read.SealedSigningKeys)
	require.Equal(t, []string{"whsec_old"}, read.Secrets)
}
