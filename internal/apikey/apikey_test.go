package apikey

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewKey(t *testing.T) {
	t.Parallel()
	k, err := New(rand.Reader)
	require.NoError(t, err)
	require.Regexp(t, `^hk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$`, k.Plain)
	require.Equal(t, k.ID, ID(k.Plain))
	require.Equal(t, Hash(k.Plain), k.Hash)
	require.NotContains(t, k.Hash, k.Plain)
	k2, err := New(rand.Reader)
	require.NoError(t, err)
	require.NotEqual(t, k.Plain, k2.Plain)
	_, err = New(bytes.NewReader(nil))
	require.Error(t, err, "a failing random source is an error, never a weak key")
}

func TestIDAndEqual(t *testing.T) {
	t.Parallel()
	require.Empty(t, ID("Bearer nonsense"))
	require.Empty(t, ID("hk_short_x"))
	require.True(t, Equal("op-key", "op-key"))
	require.False(t, Equal("op-key", "op-kez"))
	require.False(t, Equal("", ""), "an unset operator key matches nothing")
}

func TestNewPortalToken(t *testing.T) {
	t.Parallel()
	plain, hash, err := NewPortalToken(rand.Reader)
	require.NoError(t, err)
	require.Regexp(t, `^plt_[A-Za-z0-9_-]{43}$`, plain)
	require.True(t, IsPortalToken(plain))
	require.Equal(t, Hash(plain), hash)
	require.Empty(t, ID(plain), "a portal token has no key id to log")
	k, err := New(rand.Reader)
	require.NoError(t, err)
	require.False(t, IsPortalToken(k.Plain))
	_, _, err = NewPortalToken(bytes.NewReader(nil))
	require.Error(t, err)
}
