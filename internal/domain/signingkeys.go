package domain

import (
	"slices"
	"time"
)

// Schemes are the signature schemes the endpoint is signed with:
// Signatures, or SchemeV1 alone when none is stored.
func (e Endpoint) Schemes() []string {
	if len(e.Signatures) == 0 {
		return []string{SchemeV1}
	}
	return e.Signatures
}

// SignsWith reports whether the endpoint is signed with scheme.
func (e Endpoint) SignsWith(scheme string) bool {
	return slices.Contains(e.Schemes(), scheme)
}

// ActiveKeys is how many of the endpoint's Ed25519 keys (SealedSigningKeys
// and PublicKeys, newest first) sign at now: the newest always, the one a
// rotation replaced while now is before RetiringUntil (the secret's
// overlap), none after. 0 when it has no key.
func (e Endpoint) ActiveKeys(now time.Time) int {
	n := min(len(e.SealedSigningKeys), len(e.PublicKeys))
	if n > 1 && (e.RetiringUntil == nil || !now.Before(*e.RetiringUntil)) {
		n = 1
	}
	return min(n, 2)
}

// RotatedKeys are an endpoint's Ed25519 keys after a rotation to sealed
// (and its public half pub): the new key first, then the current newest,
// which retires; older ones are dropped.
func RotatedKeys(cur Endpoint, sealed, pub string) (keys, pubs []string) {
	keys, pubs = []string{sealed}, []string{pub}
	if len(cur.SealedSigningKeys) > 0 && len(cur.PublicKeys) > 0 {
		keys, pubs = append(keys, cur.SealedSigningKeys[0]), append(pubs, cur.PublicKeys[0])
	}
	return keys, pubs
}
