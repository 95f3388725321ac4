//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

// endpointItem reads an endpoint's item from the state table as it is
// stored, attribute by attribute.
func endpointItem(t *testing.T, tenantID, endpointID string) map[string]types.AttributeValue {
	t.Helper()
	out, err := env.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: &env.out.StateTableName, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "TENANT#" + tenantID},
			"sk": &types.AttributeValueMemberS{Value: "ENDPOINT#" + endpointID},
		},
	})
	require.NoError(t, err)
	require.NotNil(t, out.Item, "endpoint %s of %s", endpointID, tenantID)
	return out.Item
}

// requireNoPlaintextSecret asserts that an endpoint's item holds its
// signing secrets sealed only: no plaintext attribute, and no attribute
// whose value holds a secret, or the key part of one.
func requireNoPlaintextSecret(t *testing.T, item map[string]types.AttributeValue, secrets ...string) {
	t.Helper()
	require.NotContains(t, item, "secrets", "no plaintext secrets attribute")
	require.NotContains(t, item, "retiring_secret", "no plaintext retiring secret attribute")
	require.Contains(t, item, "sealed_secrets")
	var all map[string]any
	require.NoError(t, attributevalue.UnmarshalMap(item, &all))
	text := fmt.Sprint(all)
	require.NotContains(t, text, "whsec_")
	for _, s := range secrets {
		if s != "" {
			require.NotContains(t, text, strings.TrimPrefix(s, "whsec_"))
		}
	}
}

// opener opens sealed secrets with the stack's key, as deliver does.
func opener() *sealing.Opener {
	return &sealing.Opener{KMS: env.kms, KeyID: env.out.SecretsKeyARN}
}

func newSecret(t *testing.T) string {
	t.Helper()
	s, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	return s
}

// plaintextSecrets is held by the tests that write endpoints with
// plaintext secrets and run the migration, which seals every plaintext
// endpoint of the table: one's migration must not seal the other's
// endpoints in the middle of its checks (clean-clone run 47 failed so).
var plaintextSecrets sync.Mutex

// The store's rotation and the operator's migration, against the table and
// the KMS of the local cloud.
func TestSealedSecretsInTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tenantID := fmt.Sprintf("t_sealed_%d", time.Now().UnixNano())
	seal := func(ctx context.Context, ref sealing.Ref, s string) (string, error) {
		return env.sealer.Seal(ctx, ref, s)
	}
	open := func(t *testing.T, ref sealing.Ref, sealed string) string {
		t.Helper()
		s, err := opener().Open(ctx, ref, sealed)
		require.NoError(t, err)
		return s
	}

	t.Run("a rotation keeps both secrets sealed", func(t *testing.T) {
		ref := sealing.Ref{TenantID: tenantID, EndpointID: "ep_rot"}
		first, second := newSecret(t), newSecret(t)
		s1, err := seal(ctx, ref, first)
		require.NoError(t, err)
		_, err = env.store.CreateEndpoint(ctx, domain.Endpoint{TenantID: ref.TenantID, EndpointID: ref.EndpointID, URL: "https://example.com", SealedSecrets: []string{s1}})
		require.NoError(t, err)
		requireNoPlaintextSecret(t, endpointItem(t, ref.TenantID, ref.EndpointID), first)

		s2, err := seal(ctx, ref, second)
		require.NoError(t, err)
		e, err := env.store.RotateSecret(ctx, ref.TenantID, ref.EndpointID, store.Rotation{Sealed: s2, Grace: time.Hour})
		require.NoError(t, err)
		requireNoPlaintextSecret(t, endpointItem(t, ref.TenantID, ref.EndpointID), first, second)
		require.Equal(t, []string{s2}, e.SealedSecrets)
		require.Equal(t, second, open(t, ref, e.SealedSecrets[0]))
		require.Equal(t, first, open(t, ref, e.SealedRetiringSecret))

		// A ciphertext does not open for another endpoint: KMS checks the
		// encryption context.
		_, err = opener().Open(ctx, sealing.Ref{TenantID: tenantID, EndpointID: "ep_other"}, s2)
		require.ErrorIs(t, err, sealing.ErrInvalid)
	})

	t.Run("a rotation of a plaintext secret seals it", func(t *testing.T) {
		ref := sealing.Ref{TenantID: tenantID, EndpointID: "ep_legacy_rot"}
		old, older, next := newSecret(t), newSecret(t), newSecret(t)
		until := time.Now().Add(time.Hour)
		require.NoError(t, env.store.PutEndpoint(ctx, domain.Endpoint{TenantID: ref.TenantID, EndpointID: ref.EndpointID, URL: "https://example.com",
			Secrets: []string{old}, RetiringSecret: older, RetiringUntil: &until}))
		require.Contains(t, endpointItem(t, ref.TenantID, ref.EndpointID), "secrets", "written as before secrets were sealed")

		sn, err := seal(ctx, ref, next)
		require.NoError(t, err)
		e, err := env.store.RotateSecret(ctx, ref.TenantID, ref.EndpointID, store.Rotation{
			Sealed: sn, Grace: time.Hour, Seal: func(ctx context.Context, p string) (string, error) { return seal(ctx, ref, p) },
		})
		require.NoError(t, err)
		requireNoPlaintextSecret(t, endpointItem(t, ref.TenantID, ref.EndpointID), old, older, next)
		require.Equal(t, next, open(t, ref, e.SealedSecrets[0]))
		require.Equal(t, old, open(t, ref, e.SealedRetiringSecret))
	})

	t.Run("the migration seals every plaintext secret, once", func(t *testing.T) {
		plaintextSecrets.Lock()
		defer plaintextSecrets.Unlock()
		type legacy struct {
			ref           sealing.Ref
			cur, retiring string
		}
		var eps []legacy
		for i := range 3 {
			l := legacy{ref: sealing.Ref{TenantID: tenantID, EndpointID: fmt.Sprintf("ep_mig_%d", i)}, cur: newSecret(t)}
			e := domain.Endpoint{TenantID: l.ref.TenantID, EndpointID: l.ref.EndpointID, URL: "https://example.com", Secrets: []string{l.cur}}
			if i == 1 { // rotated before secrets were sealed: a retiring one too
				l.retiring = newSecret(t)
				until := time.Now().Add(time.Hour)
				e.RetiringSecret, e.RetiringUntil = l.retiring, &until
			}
			require.NoError(t, env.store.PutEndpoint(ctx, e))
			eps = append(eps, l)
		}
		migrate := func() store.SealReport {
			rep, err := store.SealPlaintextSecrets(ctx, env.ddb, env.out.StateTableName, func(ctx context.Context, r store.EndpointRef, p string) (string, error) {
				return seal(ctx, sealing.Ref{TenantID: r.TenantID, EndpointID: r.EndpointID}, p)
			})
			require.NoError(t, err)
			return rep
		}
		rep := migrate()
		require.GreaterOrEqual(t, rep.Sealed, len(eps), "other tests' plaintext endpoints are sealed too")
		for _, l := range eps {
			item := endpointItem(t, l.ref.TenantID, l.ref.EndpointID)
			requireNoPlaintextSecret(t, item, l.cur, l.retiring)
			e, err := env.store.Endpoint(ctx, l.ref.TenantID, l.ref.EndpointID)
			require.NoError(t, err)
			require.Equal(t, l.cur, open(t, l.ref, e.SealedSecrets[0]))
			if l.retiring != "" {
				require.Equal(t, l.retiring, open(t, l.ref, e.SealedRetiringSecret))
			} else {
				require.Empty(t, e.SealedRetiringSecret)
			}
			require.Equal(t, "https://example.com", e.URL, "nothing else changes")
		}
		// Again: these are sealed, so nothing of theirs changes.
		before := endpointItem(t, eps[0].ref.TenantID, eps[0].ref.EndpointID)
		migrate()
		require.Equal(t, before, endpointItem(t, eps[0].ref.TenantID, eps[0].ref.EndpointID))
	})
}

// An endpoint written before secrets were sealed keeps signing with its
// plaintext secret; once the migration has sealed it, deliver opens the
// sealed one, and the receiver sees no difference.
func TestPlaintextSecretSignsBeforeAndAfterTheMigration(t *testing.T) {
	t.Parallel()
	plaintextSecrets.Lock()
	defer plaintextSecrets.Unlock()
	rcv := newReceiver(t, status(http.StatusOK))
	secret := newSecret(t)
	id := fmt.Sprintf("t_legacy_%d", time.Now().UnixNano())
	ep := domain.Endpoint{TenantID: id, EndpointID: "ep_1", URL: rcv.URL, Secrets: []string{secret}}
	require.NoError(t, env.store.PutEndpoint(context.Background(), ep))
	tn := tenant{ID: id, Endpoint: ep, Secret: secret}
	v, err := signing.NewVerifier(secret)
	require.NoError(t, err)

	write(t, event(tn, "evt_legacy_1_"+id, "order.created", `{"n":1}`))
	r := rcv.waitFor(t, 1, 30*time.Second)[0]
	require.NoError(t, v.VerifyRequest(r.Header, r.Body), "the plaintext secret signs")

	_, err = store.SealPlaintextSecrets(context.Background(), env.ddb, env.out.StateTableName, func(ctx context.Context, ref store.EndpointRef, p string) (string, error) {
		return env.sealer.Seal(ctx, sealing.Ref{TenantID: ref.TenantID, EndpointID: ref.EndpointID}, p)
	})
	require.NoError(t, err)
	requireNoPlaintextSecret(t, endpointItem(t, id, "ep_1"), secret)

	write(t, event(tn, "evt_legacy_2_"+id, "order.created", `{"n":2}`))
	r = rcv.waitFor(t, 2, 30*time.Second)[1]
	require.NoError(t, v.VerifyRequest(r.Header, r.Body), "the sealed secret signs, the same secret")
}

// A ciphertext copied from another endpoint's record does not sign: KMS
// refuses it under this endpoint's encryption context, and the delivery
// goes dead (invalid_secret) without a request.
func TestSwappedCiphertextDoesNotSign(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusOK))
	victim := newTenant(t, "https://victim.example.com/hook")
	tn := newTenant(t, rcv.URL)
	ep := tn.Endpoint
	ep.SealedSecrets = victim.Endpoint.SealedSecrets
	require.NoError(t, env.store.PutEndpoint(context.Background(), ep))

	ev := event(tn, "evt_swapped_"+tn.ID, "order.created", `{}`)
	write(t, ev)
	d := waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, ep.EndpointID, ev.OccurredAt), 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, "invalid_secret", string(d.DeadReason))
	require.Empty(t, rcv.requests(), "nothing was sent")
}
