package deliver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// An endpoint's auth secret is opened as its signing secret is, and the
// request carries it beside the signature; a secret sealed for another
// endpoint never opens: the delivery is dead, nothing sent.
func TestAuthSecretIsOpenedAndSent(t *testing.T) {
	t.Parallel()
	f := newSignedFixture(t)
	auth := domain.EndpointAuth{Kind: domain.AuthBasic, Username: "hook", SealedPassword: f.seal(t, "t1", "ep_1", "p4ssword")}
	e, err := f.store.UpdateEndpoint(context.Background(), "t1", "ep_1", store.EndpointChange{Auth: &auth})
	require.NoError(t, err)
	require.Empty(t, f.run(t, stampedMessage(t, "a", e.Revision, "order.created", f.now)))
	f.mu.Lock()
	got := f.header.Get("Authorization")
	f.mu.Unlock()
	require.Equal(t, "Basic aG9vazpwNHNzd29yZA==", got, "hook:p4ssword")
	require.True(t, f.signedBy(t, f.secret), "and signed as ever")

	stolen := domain.EndpointAuth{Kind: domain.AuthBasic, Username: "hook", SealedPassword: f.seal(t, "t1", "ep_other", "p4ssword")}
	e, err = f.store.UpdateEndpoint(context.Background(), "t1", "ep_1", store.EndpointChange{Auth: &stolen})
	require.NoError(t, err)
	f.mu.Lock()
	f.header = nil
	f.mu.Unlock()
	require.Empty(t, f.run(t, stampedMessage(t, "b", e.Revision, "order.created", f.now)))
	d, err := f.store.Delivery(context.Background(), "b")
	require.NoError(t, err)
	require.Equal(t, domain.StateDead, d.State)
	require.Equal(t, domain.ReasonInvalidSecret, d.DeadReason)
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Nil(t, f.header, "nothing sent")
}
