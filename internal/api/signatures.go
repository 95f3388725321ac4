package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
)

// An endpoint's signature schemes (endpointInput.Signatures): a list of
// "v1" (HMAC-SHA256 with the endpoint's whsec_ secret, the default) and
// "v1a" (Ed25519 with a key hookline generates and keeps sealed; receivers
// verify with its whpk_ public key), both during a migration. Every
// endpoint keeps its secret whichever it signs with, so switching back and
// forth needs no new secret; the first time an endpoint is to sign v1a, an
// Ed25519 key is generated for it, and it keeps that key (rotated with the
// secret) when it goes back to v1.

// knownSchemes are the schemes an endpoint may sign with, in the order
// they are stored and sent.
var knownSchemes = []string{domain.SchemeV1, domain.SchemeV1a}

// checkSignatures checks an endpoint's signatures (nil: absent): one or
// both of the known schemes, each once.
func (errs *fieldErrors) checkSignatures(schemes *[]string) {
	if schemes == nil {
		return
	}
	if len(*schemes) == 0 {
		errs.add("signatures", `must name at least one scheme: ["v1"], ["v1a"] or ["v1","v1a"]`)
	}
	for i, sc := range *schemes {
		switch {
		case !slices.Contains(knownSchemes, sc):
			errs.add("signatures["+strconv.Itoa(i)+"]", `is not a signature scheme: "v1" (HMAC-SHA256) or "v1a" (Ed25519)`)
		case slices.Index(*schemes, sc) < i:
			errs.add("signatures["+strconv.Itoa(i)+"]", "repeats %q", sc)
		}
	}
}

// normalSchemes is a checked list of schemes in their stored order.
func normalSchemes(schemes []string) []string {
	out := make([]string, 0, len(knownSchemes))
	for _, sc := range knownSchemes {
		if slices.Contains(schemes, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// newSigningKey generates an Ed25519 key for an endpoint and seals it (as
// signing secrets are: sealing.Ref, the stack's KMS key); it returns the
// sealed key and its whpk_ public half. The private key is never kept
// elsewhere, returned or logged.
func (s *Server) newSigningKey(ctx context.Context, ref sealing.Ref) (sealed, pub string, err error) {
	key, err := signing.NewSigningKey(s.random())
	if err != nil {
		return "", "", err
	}
	if pub, err = signing.PublicKeyOf(key); err != nil {
		return "", "", err
	}
	if sealed, err = s.seal(ctx, ref, key); err != nil {
		return "", "", err
	}
	return sealed, pub, nil
}

// setSignatures sets a new endpoint's schemes (nil: the default, v1
// only), with a new Ed25519 key when they include v1a.
func (s *Server) setSignatures(ctx context.Context, e *domain.Endpoint, schemes *[]string) error {
	if schemes == nil {
		return nil
	}
	e.Signatures = normalSchemes(*schemes)
	if !e.SignsWith(domain.SchemeV1a) {
		return nil
	}
	sealed, pub, err := s.newSigningKey(ctx, sealing.Ref{TenantID: e.TenantID, EndpointID: e.EndpointID})
	if err != nil {
		return err
	}
	e.SealedSigningKeys, e.PublicKeys = []string{sealed}, []string{pub}
	return nil
}

// changeSignatures adds a change of schemes to c: the schemes, and a first
// Ed25519 key when they include v1a and the endpoint has none. It reads
// the endpoint for that (a missing one is 404).
func (s *Server) changeSignatures(r *http.Request, tenant, id string, schemes *[]string, c *store.EndpointChange) *Problem {
	if schemes == nil {
		return nil
	}
	norm := normalSchemes(*schemes)
	c.Signatures = &norm
	if !slices.Contains(norm, domain.SchemeV1a) {
		return nil
	}
	cur, err := s.Store.Endpoint(r.Context(), tenant, id)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	if len(cur.SealedSigningKeys) > 0 {
		return nil
	}
	sealed, pub, err := s.newSigningKey(r.Context(), sealing.Ref{TenantID: tenant, EndpointID: id})
	if err != nil {
		return s.internal(r, err)
	}
	keys, pubs := []string{sealed}, []string{pub}
	c.SealedSigningKeys, c.PublicKeys = &keys, &pubs
	return nil
}

// rotationKey is the Ed25519 part of a rotation of endpoint id: a new key
// when the endpoint has one or signs v1a, none otherwise.
func (s *Server) rotationKey(r *http.Request, tenant, id string, rot *store.Rotation) *Problem {
	cur, err := s.Store.Endpoint(r.Context(), tenant, id)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	if len(cur.SealedSigningKeys) == 0 && !cur.SignsWith(domain.SchemeV1a) {
		return nil
	}
	if rot.SealedSigningKey, rot.PublicKey, err = s.newSigningKey(r.Context(), sealing.Ref{TenantID: tenant, EndpointID: id}); err != nil {
		return s.internal(r, err)
	}
	return nil
}

// activePublicKeys are the whpk_ keys that sign the endpoint's requests at
// now (the newest, and the one it replaced during its overlap).
func (s *Server) activePublicKeys(e domain.Endpoint) []string {
	n := e.ActiveKeys(s.now())
	if n == 0 {
		return nil
	}
	return slices.Clone(e.PublicKeys[:n])
}

// JWK is an Ed25519 public key as a JSON Web Key (RFC 8037).
type JWK struct {
	Kty string `json:"kty"` // "OKP"
	Crv string `json:"crv"` // "Ed25519"
	// X is the public key, unpadded base64url.
	X string `json:"x"`
	// Kid is "<endpoint id>.<RFC 7638 thumbprint of the key>".
	Kid string `json:"kid"`
	Use string `json:"use"` // "sig"
	Alg string `json:"alg"` // "EdDSA"
}

// JWKS is the answer to GET /v1/jwks.json.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// jwkOf is endpoint id's whpk_ key pub as a JWK; false if pub is not one.
func jwkOf(id, pub string) (JWK, bool) {
	key, err := signing.ParsePublicKey(pub)
	if err != nil {
		return JWK{}, false
	}
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(key), Kid: id + "." + signing.Thumbprint(key), Use: "sig", Alg: "EdDSA"}, true
}

// jwks answers the tenant's JWKS document: the active Ed25519 public keys
// of every endpoint of the tenant that signs v1a, the newest of each
// first. Another tenant's endpoints are never read (the listing is the
// tenant's); the tenant's are bounded by Caps.MaxEndpoints.
func (s *Server) jwks(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	out := JWKS{Keys: []JWK{}}
	cursor := ""
	for {
		es, next, err := s.Store.ListEndpoints(r.Context(), tenant, 100, cursor)
		if err != nil {
			return s.internal(r, err)
		}
		for _, e := range es {
			if !e.SignsWith(domain.SchemeV1a) {
				continue
			}
			for _, pub := range s.activePublicKeys(e) {
				if k, ok := jwkOf(e.EndpointID, pub); ok {
					out.Keys = append(out.Keys, k)
				}
			}
		}
		if next == "" || len(es) == 0 {
			break
		}
		cursor = next
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
