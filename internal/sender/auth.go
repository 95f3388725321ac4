package sender

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// Auth is an attempt's endpoint authentication (domain.EndpointAuth), its
// secret opened. Its String never shows a secret.
type Auth struct {
	Kind domain.AuthKind
	// Username and Password: domain.AuthBasic.
	Username, Password string
	// TokenURL, ClientID, ClientSecret, Scope and Audience:
	// domain.AuthOAuth2.
	TokenURL, ClientID, ClientSecret, Scope, Audience string
	// Certificate and PrivateKey, PEM: domain.AuthMTLS.
	Certificate, PrivateKey string
}

// String names the auth's kind only, so that a stray %v logs no secret.
func (a *Auth) String() string { return "auth(" + string(a.Kind) + ")" }

// Token fetching and the client certificates' transports, per instance.
const (
	// MaxTokens bounds the OAuth 2.0 tokens a Client keeps; past it the
	// expired ones go, then all (they are fetched again as needed).
	MaxTokens = 4096
	// MaxCertTransports bounds the client-certificate transports a Client
	// keeps (each with its own connections); past it one goes, its idle
	// connections closed.
	MaxCertTransports = 256
	// tokenBodyBytes bounds the token endpoint's answer read.
	tokenBodyBytes = 64 << 10
	// maxTokenBytes bounds an access token (a header value).
	maxTokenBytes = 8 << 10
	// tokenWithoutExpiry is how long a token is kept whose answer gave no
	// expires_in: a 401 fetches it again sooner.
	tokenWithoutExpiry = 5 * time.Minute
	// tokenMargin is how long before its expiry a token is fetched anew
	// (half its lifetime when that is shorter).
	tokenMargin = 30 * time.Second
)

// errToken says a token could not be had: the attempt is retried as after
// a network failure, with Result.Error "auth_token".
var errToken = errors.New("no OAuth 2.0 token")

// tokenKey names a token by everything that makes it: the token endpoint,
// the client and its secret, the scope and the audience. A rotated secret
// is a new key: its token is fetched with it.
func tokenKey(a *Auth) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.Join([]string{a.TokenURL, a.ClientID, a.ClientSecret, a.Scope, a.Audience}, "\x00")))
}

// tokens keeps a Client's OAuth 2.0 tokens: one fetch at a time per key,
// so concurrent attempts to one endpoint share a token.
type tokens struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*tokenEntry
}

type tokenEntry struct {
	mu    sync.Mutex // held while fetching
	token string
	until time.Time
}

// entry returns key's entry, made when missing, within MaxTokens.
func (t *tokens) entry(key [sha256.Size]byte, now time.Time) *tokenEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[key]; ok {
		return e
	}
	if t.entries == nil {
		t.entries = map[[sha256.Size]byte]*tokenEntry{}
	}
	if len(t.entries) >= MaxTokens {
		for k, e := range t.entries {
			if e.mu.TryLock() {
				if !now.Before(e.until) {
					delete(t.entries, k)
				}
				e.mu.Unlock()
			}
		}
		if len(t.entries) >= MaxTokens {
			clear(t.entries)
		}
	}
	e := &tokenEntry{}
	t.entries[key] = e
	return e
}

// token returns a's bearer token: the kept one while it is valid (fresh
// false), else one fetched now (fresh true). stale, when not empty, is a
// token the receiver refused: it is not returned again.
func (c *Client) token(ctx context.Context, a *Auth, stale string) (token string, fresh bool, err error) {
	now := c.now()
	e := c.tokens.entry(tokenKey(a), now)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && e.token != stale && now.Before(e.until) {
		return e.token, false, nil
	}
	token, ttl, err := c.fetchToken(ctx, a)
	if err != nil {
		e.token = ""
		return "", false, err
	}
	e.token, e.until = token, now.Add(ttl-min(tokenMargin, ttl/2))
	return token, true, nil
}

// tokenAnswer is the token endpoint's JSON answer (RFC 6749 section 5.1).
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   *int64 `json:"expires_in"`
}

// fetchToken asks a's token endpoint for a token with the client
// credentials grant, the client authenticated by HTTP Basic (RFC 6749
// section 2.3.1), through the guarded transport: the SSRF guard holds the
// token URL as it holds the endpoint's. Its errors wrap errToken and never
// carry the secret or the endpoint's answer.
func (c *Client) fetchToken(ctx context.Context, a *Auth) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if a.Scope != "" {
		form.Set("scope", a.Scope)
	}
	if a.Audience != "" {
		form.Set("audience", a.Audience)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("%w: the token URL is not a URL", errToken)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.SetBasicAuth(url.QueryEscape(a.ClientID), url.QueryEscape(a.ClientSecret))
	resp, err := c.baseTransport().RoundTrip(req)
	if err != nil {
		return "", 0, fmt.Errorf("%w: the token endpoint: %s", errToken, classifyError(err).Error)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("%w: the token endpoint answered %d", errToken, resp.StatusCode)
	}
	var ans tokenAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, tokenBodyBytes)).Decode(&ans); err != nil {
		return "", 0, fmt.Errorf("%w: the token endpoint's answer is not a token (JSON)", errToken)
	}
	switch {
	case ans.AccessToken == "", len(ans.AccessToken) > maxTokenBytes, !domain.ValidHeaderValue(ans.AccessToken):
		return "", 0, fmt.Errorf("%w: the token endpoint's access_token is missing, over %d bytes or not a header value", errToken, maxTokenBytes)
	case ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer"):
		return "", 0, fmt.Errorf("%w: the token endpoint's token_type is %q, not Bearer", errToken, ans.TokenType)
	}
	ttl := tokenWithoutExpiry
	if ans.ExpiresIn != nil {
		if *ans.ExpiresIn <= 0 {
			return "", 0, fmt.Errorf("%w: the token endpoint's expires_in is %d", errToken, *ans.ExpiresIn)
		}
		ttl = time.Duration(min(*ans.ExpiresIn, 366*24*3600)) * time.Second
	}
	return ans.AccessToken, ttl, nil
}

// certTransports keeps a transport per client certificate: connections
// made with one certificate are never reused with another, as they would
// be in one pool keyed by host.
type certTransports struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]*http.Transport
}

// certTransport returns the transport that presents a's certificate in
// the TLS handshake: base's settings (the guarded dialer, the timeouts),
// its own connections.
func (c *Client) certTransport(a *Auth) (http.RoundTripper, error) {
	key := sha256.Sum256([]byte(a.Certificate + "\x00" + a.PrivateKey))
	ct := &c.certs
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if t, ok := ct.m[key]; ok {
		return t, nil
	}
	pair, err := tls.X509KeyPair([]byte(a.Certificate), []byte(a.PrivateKey))
	if err != nil {
		return nil, errors.New("the client certificate and key do not make a pair")
	}
	base, ok := c.baseTransport().(*http.Transport)
	if !ok {
		return nil, errors.New("the client cannot present a certificate: its transport is not an *http.Transport")
	}
	t := base.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.Certificates = []tls.Certificate{pair}
	if ct.m == nil {
		ct.m = map[[sha256.Size]byte]*http.Transport{}
	}
	if len(ct.m) >= MaxCertTransports {
		for k, old := range ct.m {
			old.CloseIdleConnections()
			delete(ct.m, k)
			break
		}
	}
	ct.m[key] = t
	return t, nil
}

// baseTransport is the transport of requests without a client certificate.
func (c *Client) baseTransport() http.RoundTripper {
	if c.HTTP.Transport == nil {
		return http.DefaultTransport
	}
	return c.HTTP.Transport
}

// now is the Client's clock.
func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
