package deliver

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/verify"
)

// useSchemes makes t1/ep_1 sign with schemes and gives it a new Ed25519
// key, sealed as the API seals it; it returns the key's public half and
// the endpoint's revision.
func (sf *signedFixture) useSchemes(t *testing.T, schemes ...string) (string, int64) {
	t.Helper()
	key, err := signing.NewSigningKey(rand.Reader)
	require.NoError(t, err)
	pub, err := signing.PublicKeyOf(key)
	require.NoError(t, err)
	keys, pubs := []string{sf.seal(t, "t1", "ep_1", key)}, []string{pub}
	e, err := sf.store.UpdateEndpoint(context.Background(), "t1", "ep_1", store.EndpointChange{Signatures: &schemes, SealedSigningKeys: &keys, PublicKeys: &pubs})
	require.NoError(t, err)
	return pub, e.Revision
}

// entries are the versions of the last request's signature entries.
func (sf *signedFixture) entries() []string {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	var out []string
	for _, e := range strings.Fields(sf.header.Get(verify.HeaderSignature)) {
		out = append(out, e[:strings.Index(e, ",")])
	}
	return out
}

func TestV1aSignsWithTheEndpointsSchemes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		schemes []string
		entries []string
	}{
		{[]string{domain.SchemeV1a}, []string{"v1a"}},
		{[]string{domain.SchemeV1, domain.SchemeV1a}, []string{"v1", "v1a"}},
		{[]string{domain.SchemeV1}, []string{"v1"}},
	} {
		t.Run(strings.Join(tc.schemes, "+"), func(t *testing.T) {
			t.Parallel()
			f := newSignedFixture(t)
			pub, rev := f.useSchemes(t, tc.schemes...)
			require.Empty(t, f.run(t, stampedMessage(t, "a", rev, "order.created", f.now)))
			require.Equal(t, tc.entries, f.entries())
			require.Equal(t, slices.Contains(tc.schemes, domain.SchemeV1a), f.signedBy(t, pub), "the public key verifies")
			require.Equal(t, slices.Contains(tc.schemes, domain.SchemeV1), f.signedBy(t, f.secret), "the secret verifies")
		})
	}
}

// TestV1aRotationOverlap: after a rotation both keys sign until the
// secret's grace ends, then the new one alone.
func TestV1aRotationOverlap(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	oldPub, rev := f.useSchemes(t, domain.SchemeV1a)
	require.Empty(t, f.run(t, stampedMessage(t, "a", rev, "order.created", f.now)))
	require.True(t, f.signedBy(t, oldPub))

	key, err := signing.NewSigningKey(rand.Reader)
	require.NoError(t, err)
	newPub, err := signing.PublicKeyOf(key)
	require.NoError(t, err)
	secret, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	e, err := f.store.RotateSecret(context.Background(), "t1", "ep_1", store.Rotation{
		Sealed: f.seal(t, "t1", "ep_1", secret), Grace: time.Hour, SealedSigningKey: f.seal(t, "t1", "ep_1", key), PublicKey: newPub,
	})
	require.NoError(t, err)
	require.Empty(t, f.run(t, stampedMessage(t, "b", e.Revision, "order.created", f.now)))
	require.Equal(t, []string{"v1a", "v1a"}, f.entries())
	require.True(t, f.signedBy(t, newPub))
	require.True(t, f.signedBy(t, oldPub), "the previous key signs during the overlap")

	f.now = f.now.Add(time.Hour + domain.DefaultEndpointCacheTTL)
	require.Empty(t, f.run(t, stampedMessage(t, "c", e.Revision, "order.created", f.now)))
	require.Equal(t, []string{"v1a"}, f.entries())
	require.True(t, f.signedBy(t, newPub))
	require.False(t, f.signedBy(t, oldPub), "not after it")
}

// TestV1aWithoutAKeyIsNotSent: an endpoint that should sign v1a and has
// no key is never sent unsigned.
func TestV1aWithoutAKeyIsNotSent(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	schemes := []string{domain.SchemeV1a}
	e, err := f.store.UpdateEndpoint(context.Background(), "t1", "ep_1", store.EndpointChange{Signatures: &schemes})
	require.NoError(t, err)
	f.run(t, stampedMessage(t, "a", e.Revision, "order.created", f.now))
	require.Zero(t, f.hits.Load())
}
