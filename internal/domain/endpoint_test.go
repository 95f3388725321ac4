package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSigningSecrets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Minute), now.Add(-time.Minute)
	for name, tc := range map[string]struct {
		e    Endpoint
		want []StoredSecret
	}{
		"sealed": {
			e:    Endpoint{SealedSecrets: []string{"S1"}},
			want: []StoredSecret{{Sealed: "S1"}},
		},
		"sealed, rotating": {
			e:    Endpoint{SealedSecrets: []string{"S2"}, SealedRetiringSecret: "S1", RetiringUntil: &later},
			want: []StoredSecret{{Sealed: "S2"}, {Sealed: "S1"}},
		},
		"sealed, grace over": {
			e:    Endpoint{SealedSecrets: []string{"S2"}, SealedRetiringSecret: "S1", RetiringUntil: &earlier},
			want: []StoredSecret{{Sealed: "S2"}},
		},
		"plaintext, written before secrets were sealed": {
			e:    Endpoint{Secrets: []string{"whsec_a"}},
			want: []StoredSecret{{Plain: "whsec_a"}},
		},
		"plaintext, rotating": {
			e:    Endpoint{Secrets: []string{"whsec_b"}, RetiringSecret: "whsec_a", RetiringUntil: &later},
			want: []StoredSecret{{Plain: "whsec_b"}, {Plain: "whsec_a"}},
		},
		"sealed wins over plaintext": {
			e:    Endpoint{SealedSecrets: []string{"S2"}, Secrets: []string{"whsec_b"}, SealedRetiringSecret: "S1", RetiringSecret: "whsec_a", RetiringUntil: &later},
			want: []StoredSecret{{Sealed: "S2"}, {Sealed: "S1"}},
		},
		"no grace time: the retiring secret does not sign": {
			e:    Endpoint{SealedSecrets: []string{"S2"}, SealedRetiringSecret: "S1"},
			want: []StoredSecret{{Sealed: "S2"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.e.SigningSecrets(now))
		})
	}
}
