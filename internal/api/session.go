package api

import (
	"net/http"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// portalLinkKey keys the portal link that authenticated a request in its
// context (none: an API key).
type portalLinkKey struct{}

// Credential kinds of SessionView.
const (
	CredentialAPIKey     = "api_key"
	CredentialPortalLink = "portal_link"
)

// SessionView answers GET /v1/session: who the credential is, and what it
// may write. The console hides what it may not do.
type SessionView struct {
	TenantID string `json:"tenant_id"`
	// Credential is CredentialAPIKey or CredentialPortalLink.
	Credential string `json:"credential"`
	// Scopes are the writes the credential may make beside reading,
	// replaying and resending: every scope for an API key, those it was
	// minted with for a portal link ([] for none).
	Scopes []string `json:"scopes"`
	// LinkID and ExpiresAt are a portal link's; absent for an API key.
	LinkID    string     `json:"link_id,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request, tenant string) *Problem {
	v := SessionView{TenantID: tenant, Credential: CredentialAPIKey, Scopes: scopeNames(domain.Scopes())}
	if l, ok := r.Context().Value(portalLinkKey{}).(*domain.PortalLink); ok {
		exp := l.ExpiresAt.UTC()
		v.Credential, v.Scopes, v.LinkID, v.ExpiresAt = CredentialPortalLink, scopeNames(l.Scopes), l.LinkID, &exp
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
