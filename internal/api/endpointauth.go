package api

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store"
)

// Limits of an endpoint's auth fields. A secret is sealed by KMS, whose
// Encrypt takes at most 4,096 bytes of plaintext: a private key must fit
// (an EC key, or RSA up to 3,072 bits, does).
const (
	maxAuthIDBytes     = 256
	maxAuthSecretBytes = 1024
	maxAuthTextBytes   = 1024
	maxCertificateSize = 16 << 10
	maxPrivateKeyBytes = 4096
)

// AuthView is an endpoint's auth as the API shows it: its kind and public
// fields, never its secret (sealed, and the API cannot open it).
type AuthView struct {
	Type     domain.AuthKind `json:"type"`
	Username string          `json:"username,omitempty"`
	TokenURL string          `json:"token_url,omitempty"`
	ClientID string          `json:"client_id,omitempty"`
	Scope    string          `json:"scope,omitempty"`
	Audience string          `json:"audience,omitempty"`
	// Certificate describes an mTLS endpoint's client certificate.
	Certificate *CertificateView `json:"certificate,omitempty"`
}

// CertificateView is a client certificate as the API shows it.
type CertificateView struct {
	Subject  string    `json:"subject"`
	Issuer   string    `json:"issuer"`
	NotAfter time.Time `json:"not_after"`
	// FingerprintSHA256 is the SHA-256 of the certificate's DER, hex.
	FingerprintSHA256 string `json:"fingerprint_sha256"`
}

// authView is a as the API shows it; nil for none.
func authView(a *domain.EndpointAuth) *AuthView {
	if a == nil {
		return nil
	}
	v := &AuthView{Type: a.Kind, Username: a.Username, TokenURL: a.TokenURL, ClientID: a.ClientID, Scope: a.Scope, Audience: a.Audience}
	if a.Kind == domain.AuthMTLS {
		if cert, err := leaf(a.Certificate); err == nil {
			v.Certificate = certificateView(cert)
		}
	}
	return v
}

func certificateView(c *x509.Certificate) *CertificateView {
	sum := sha256.Sum256(c.Raw)
	return &CertificateView{Subject: c.Subject.String(), Issuer: c.Issuer.String(), NotAfter: c.NotAfter.UTC(), FingerprintSHA256: hex.EncodeToString(sum[:])}
}

// leaf is the first certificate of a PEM chain.
func leaf(chain string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(chain))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return x509.ParseCertificate(block.Bytes)
}

// authInput is the body of PUT /v1/endpoints/{id}/auth, and create's auth:
// type and the fields of that kind.
type authInput struct {
	Type         string  `json:"type"`
	Username     *string `json:"username"`
	Password     *string `json:"password"`
	TokenURL     *string `json:"token_url"`
	ClientID     *string `json:"client_id"`
	ClientSecret *string `json:"client_secret"`
	Scope        *string `json:"scope"`
	Audience     *string `json:"audience"`
	Certificate  *string `json:"certificate"`
	PrivateKey   *string `json:"private_key"`
}

// authField is one field of an authInput: its name, value, whether its
// kind requires it, its limit, and whether it is secret.
type authField struct {
	name     string
	v        *string
	required bool
	max      int
}

// fields are in's fields for kind (those of other kinds: others).
func (in authInput) fields(kind domain.AuthKind) (mine, others []authField) {
	all := []struct {
		kind domain.AuthKind
		f    authField
	}{
		{domain.AuthBasic, authField{"username", in.Username, true, maxAuthIDBytes}},
		{domain.AuthBasic, authField{"password", in.Password, true, maxAuthSecretBytes}},
		{domain.AuthOAuth2, authField{"token_url", in.TokenURL, true, 2048}},
		{domain.AuthOAuth2, authField{"client_id", in.ClientID, true, maxAuthIDBytes}},
		{domain.AuthOAuth2, authField{"client_secret", in.ClientSecret, true, maxAuthSecretBytes}},
		{domain.AuthOAuth2, authField{"scope", in.Scope, false, maxAuthTextBytes}},
		{domain.AuthOAuth2, authField{"audience", in.Audience, false, maxAuthTextBytes}},
		{domain.AuthMTLS, authField{"certificate", in.Certificate, true, maxCertificateSize}},
		{domain.AuthMTLS, authField{"private_key", in.PrivateKey, true, maxPrivateKeyBytes}},
	}
	for _, a := range all {
		if a.kind == kind {
			mine = append(mine, a.f)
		} else {
			others = append(others, a.f)
		}
	}
	return mine, others
}

// validateAuth checks in, the auth of an endpoint whose URL is endpointURL,
// and adds what is wrong to errs under prefix ("auth." on create).
func (s *Server) validateAuth(errs *fieldErrors, prefix string, in authInput, endpointURL string) {
	kind := domain.AuthKind(in.Type)
	if !validAuthKind(kind) {
		errs.add(prefix+"type", "must be one of basic, oauth2_client_credentials, mtls")
		return
	}
	mine, others := in.fields(kind)
	for _, f := range others {
		if f.v != nil {
			errs.add(prefix+f.name, "is not a field of %s auth", kind)
		}
	}
	for _, f := range mine {
		switch {
		case f.v == nil || *f.v == "":
			if f.required {
				errs.add(prefix+f.name, "is required for %s auth", kind)
			}
		case len(*f.v) > f.max:
			errs.add(prefix+f.name, "is %d bytes, at most %d", len(*f.v), f.max)
		case f.name != "certificate" && f.name != "private_key" && !validHeaderValue(*f.v):
			errs.add(prefix+f.name, "has a control character")
		}
	}
	if len(*errs) > 0 {
		return
	}
	switch kind {
	case domain.AuthBasic:
		if strings.Contains(*in.Username, ":") {
			errs.add(prefix+"username", "has a colon, which Basic authentication cannot carry in a user name (RFC 7617)")
		}
	case domain.AuthOAuth2:
		if err := s.URLs.CheckURL(*in.TokenURL); err != nil {
			errs.add(prefix+"token_url", "%s", strings.TrimPrefix(err.Error(), "endpoint URL is not acceptable: "))
		}
	case domain.AuthMTLS:
		s.checkClientCertificate(errs, prefix, *in.Certificate, *in.PrivateKey, endpointURL)
	}
}

// checkClientCertificate checks an mTLS endpoint's certificate and key: a
// PEM certificate (chain) and the key of its first, valid now, for an
// https endpoint.
func (s *Server) checkClientCertificate(errs *fieldErrors, prefix, certificate, key, endpointURL string) {
	if u, err := url.Parse(endpointURL); err == nil && u.Scheme != "https" {
		errs.add(prefix+"type", "mtls needs an https endpoint URL: a client certificate is presented in the TLS handshake")
	}
	cert, err := leaf(certificate)
	if err != nil {
		errs.add(prefix+"certificate", "is not a PEM certificate: %s", err.Error())
		return
	}
	if _, err := tls.X509KeyPair([]byte(certificate), []byte(key)); err != nil {
		errs.add(prefix+"private_key", "is not the PEM private key of the certificate")
	}
	if now := s.now(); now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		errs.add(prefix+"certificate", "is valid from %s to %s, not now", cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))
	}
}

func validAuthKind(k domain.AuthKind) bool {
	for _, known := range domain.AuthKinds {
		if k == known {
			return true
		}
	}
	return false
}

// public is in as stored, its secret aside; secret is that secret.
func (in authInput) public() (a domain.EndpointAuth, secret string) {
	str := deref
	a.Kind = domain.AuthKind(in.Type)
	switch a.Kind {
	case domain.AuthBasic:
		a.Username, secret = str(in.Username), str(in.Password)
	case domain.AuthOAuth2:
		a.TokenURL, a.ClientID, a.Scope, a.Audience, secret = str(in.TokenURL), str(in.ClientID), str(in.Scope), str(in.Audience), str(in.ClientSecret)
	case domain.AuthMTLS:
		a.Certificate, secret = str(in.Certificate), str(in.PrivateKey)
	}
	return a, secret
}

// sealAuth is in as stored, its secret sealed for the endpoint ref names.
func (s *Server) sealAuth(ctx context.Context, ref sealing.Ref, in authInput) (domain.EndpointAuth, error) {
	a, secret := in.public()
	sealed, err := s.seal(ctx, ref, secret)
	switch a.Kind {
	case domain.AuthBasic:
		a.SealedPassword = sealed
	case domain.AuthOAuth2:
		a.SealedClientSecret = sealed
	case domain.AuthMTLS:
		a.SealedPrivateKey = sealed
	}
	return a, err
}

// setAuth is PUT /v1/endpoints/{id}/auth: the endpoint's auth set, or
// replaced (which rotates its secret at once: the next attempt uses the
// new one).
func (s *Server) setAuth(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	var in authInput
	if p := decode(w, r, &in); p != nil {
		return p
	}
	e, err := s.Store.Endpoint(r.Context(), tenant, id)
	if err != nil {
		return s.found(r, "endpoint "+strconv.Quote(id), err)
	}
	if e.Kind() != domain.TypeHTTP {
		return problem(http.StatusBadRequest, "endpoint %q is of type %s: auth is for http endpoints (an AWS destination is reached by its role)", id, e.Kind())
	}
	var errs fieldErrors
	s.validateAuth(&errs, "", in, e.URL)
	if len(errs) > 0 {
		return invalid(errs...)
	}
	auth, err := s.sealAuth(r.Context(), sealing.Ref{TenantID: tenant, EndpointID: id}, in)
	if err != nil {
		return s.internal(r, err)
	}
	next := e
	next.Auth = &auth
	if p := s.endpointSize(next); p != nil {
		return p
	}
	e, err = s.Store.UpdateEndpoint(r.Context(), tenant, id, store.EndpointChange{Auth: &auth})
	return s.writeEndpoint(w, r, id, e, err)
}

// deleteAuth is DELETE /v1/endpoints/{id}/auth: requests go without it.
func (s *Server) deleteAuth(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	id := r.PathValue("endpoint_id")
	e, err := s.Store.UpdateEndpoint(r.Context(), tenant, id, store.EndpointChange{Auth: &domain.EndpointAuth{}})
	return s.writeEndpoint(w, r, id, e, err)
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
