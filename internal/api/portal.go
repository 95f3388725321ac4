package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookline/hookline/internal/apigw"
	"github.com/hookline/hookline/internal/apikey"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// PortalLinks are the tenants' portal links: the operator mints and
// revokes them, a tenant route authenticates a portal token by its hash.
type PortalLinks interface {
	PutPortalLink(ctx context.Context, l domain.PortalLink) (domain.PortalLink, error)
	PortalLink(ctx context.Context, hash string) (domain.PortalLink, error)
	RevokePortalLink(ctx context.Context, tenantID, linkID string) error
}

// Portal link lives: ttl_seconds defaults to DefaultPortalTTL and is at
// most MaxPortalTTL (the least is Server.PortalMinTTL).
const (
	DefaultPortalTTL = 15 * time.Minute
	MaxPortalTTL     = time.Hour
)

// The details of a portal token refused: the console shows them when it
// ends the session.
const (
	detailPortalExpired = "the portal link has expired"
	detailPortalRevoked = "the portal link was revoked"
)

// PortalLinkView answers the minting of a portal link: the only time its
// token is shown. URL is the console's address with the token in its
// fragment, which browsers never send to a server.
type PortalLinkView struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	ExpiresAt time.Time `json:"expires_at"`
	// Scopes are the writes the link may make, beside reading, replaying
	// and resending; [] for none.
	Scopes []string `json:"scopes"`
	Token  string   `json:"token"`
	URL    string   `json:"url"`
}

// scopeNames renders scopes for an answer: [] rather than null for none.
func scopeNames(scopes []domain.Scope) []string {
	out := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		out = append(out, string(sc))
	}
	return out
}

func (s *Server) portalMinTTL() time.Duration {
	if s.PortalMinTTL > 0 {
		return s.PortalMinTTL
	}
	return time.Minute
}

func (s *Server) createPortalLink(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	tenant := r.PathValue("tenant_id")
	var in struct {
		TTLSeconds *int      `json:"ttl_seconds"`
		Scopes     *[]string `json:"scopes"`
	}
	if r.ContentLength != 0 {
		if p := decode(w, r, &in); p != nil {
			return p
		}
	}
	ttl, least := DefaultPortalTTL, s.portalMinTTL()
	if in.TTLSeconds != nil {
		// The seconds are checked before they become a Duration: a count
		// of seconds past about 292 years overflows it, and could wrap
		// into the allowed range.
		secs := *in.TTLSeconds
		ttl = time.Duration(secs) * time.Second
		if secs < 0 || secs > int(MaxPortalTTL/time.Second) || ttl < least {
			return invalid(FieldError{Field: "ttl_seconds", Message: "must be from " + strconv.Itoa(int(least/time.Second)) + " to " + strconv.Itoa(int(MaxPortalTTL/time.Second))})
		}
	}
	var asked []string
	if in.Scopes != nil {
		asked = *in.Scopes
	}
	scopes, err := domain.ParseScopes(asked)
	if err != nil {
		return invalid(FieldError{Field: "scopes", Message: err.Error()})
	}
	id, err := s.newID("pl_")
	if err != nil {
		return s.internal(r, err)
	}
	plain, hash, err := apikey.NewPortalToken(s.random())
	if err != nil {
		return s.internal(r, err)
	}
	expires := s.now().UTC().Add(ttl).Truncate(time.Second)
	if _, err := s.Store.PutPortalLink(r.Context(), domain.PortalLink{LinkID: id, TenantID: tenant, Hash: hash, ExpiresAt: expires, Scopes: scopes}); err != nil {
		return s.found(r, "tenant "+strconv.Quote(tenant), err)
	}
	writeJSON(w, http.StatusCreated, PortalLinkView{ID: id, TenantID: tenant, ExpiresAt: expires, Scopes: scopeNames(scopes),
		Token: plain, URL: consoleURL(r) + "#portal=" + plain})
	return nil
}

func (s *Server) revokePortalLink(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	tenant, id := r.PathValue("tenant_id"), r.PathValue("link_id")
	if err := s.Store.RevokePortalLink(r.Context(), tenant, id); err != nil {
		return s.found(r, "portal link "+strconv.Quote(id)+" of tenant "+strconv.Quote(tenant), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// portalTenant authenticates a portal token for a route that needs scope
// ("" for none): its tenant, link id and link, or the 401 that says why
// not (unknown, expired, revoked), or the 403 that names the scope the
// link lacks.
func (s *Server) portalTenant(r *http.Request, token string, scope domain.Scope) (tenant, linkID string, link *domain.PortalLink, p *Problem) {
	l, err := s.Store.PortalLink(r.Context(), apikey.Hash(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", "", nil, problem(http.StatusUnauthorized, "the API key is not valid (unknown or revoked)")
	case err != nil:
		return "", "", nil, s.internal(r, err)
	case l.RevokedAt != nil:
		return "", l.LinkID, nil, problem(http.StatusUnauthorized, detailPortalRevoked)
	case !s.now().Before(l.ExpiresAt):
		return "", l.LinkID, nil, problem(http.StatusUnauthorized, detailPortalExpired)
	case scope != "" && !slices.Contains(l.Scopes, scope):
		return l.TenantID, l.LinkID, &l, missingScope(scope)
	}
	return l.TenantID, l.LinkID, &l, nil
}

// missingScope is the 403 of a portal link without the scope a route needs.
func missingScope(scope domain.Scope) *Problem {
	p := problem(http.StatusForbidden, "this portal link may not do this: it lacks the scope %s (the operator grants it when minting the link)", scope)
	p.MissingScope = string(scope)
	return p
}

// consoleURL is the console's address as the client of r reaches this API:
// its scheme (X-Forwarded-Proto, which API Gateway sets), its host, and
// basePath.
func consoleURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host + basePath(r, "/v1/") + "/console/"
}

// basePath is the path under which the client of r reaches this API: the
// part of r's path before marker (a stage's, if any; "" on the $default
// stage), and on the local cloud, which serves the API at
// /_aws/execute-api/{apiId}/ on its own host (the event's domain name is
// then not the host the client used), that prefix before it.
func basePath(r *http.Request, marker string) string {
	prefix, _, _ := strings.Cut(r.URL.Path, marker)
	if rc, ok := apigw.EventContext(r.Context()); ok && rc.APIID != "" && r.Host != rc.DomainName &&
		strings.HasPrefix(rc.DomainName, rc.APIID+".execute-api.") {
		prefix = "/_aws/execute-api/" + rc.APIID + prefix
	}
	return prefix
}
