package domain

// AuthKind names how hookline authenticates itself to an endpoint, beside
// the signature every request carries.
type AuthKind string

const (
	// AuthBasic sends HTTP Basic credentials (RFC 7617) with every request.
	AuthBasic AuthKind = "basic"
	// AuthOAuth2 fetches a bearer token from the endpoint's token URL with
	// the OAuth 2.0 client credentials grant (RFC 6749 section 4.4) and
	// sends it with every request, kept per instance until shortly before
	// it expires and fetched again on a 401.
	AuthOAuth2 AuthKind = "oauth2_client_credentials"
	// AuthMTLS presents a client certificate in the TLS handshake.
	AuthMTLS AuthKind = "mtls"
)

// AuthKinds are the kinds an endpoint may carry, in the order the docs
// list them.
var AuthKinds = []AuthKind{AuthBasic, AuthOAuth2, AuthMTLS}

// EndpointAuth is how hookline authenticates to an HTTP endpoint: one kind,
// its public fields as the tenant wrote them, and its secret sealed as a
// signing secret is (package sealing: bound to the endpoint by the
// encryption context, opened only by the deliver function). Nothing shows
// a secret again once written; setting the auth anew rotates it.
type EndpointAuth struct {
	Kind AuthKind `dynamodbav:"kind"`
	// Username and SealedPassword: AuthBasic.
	Username       string `dynamodbav:"username,omitempty"`
	SealedPassword string `dynamodbav:"sealed_password,omitempty"`
	// TokenURL, ClientID, SealedClientSecret, Scope and Audience:
	// AuthOAuth2. Scope and Audience are sent only when set.
	TokenURL           string `dynamodbav:"token_url,omitempty"`
	ClientID           string `dynamodbav:"client_id,omitempty"`
	SealedClientSecret string `dynamodbav:"sealed_client_secret,omitempty"`
	Scope              string `dynamodbav:"scope,omitempty"`
	Audience           string `dynamodbav:"audience,omitempty"`
	// Certificate (PEM: the client certificate, then any intermediates)
	// and SealedPrivateKey (PEM, sealed): AuthMTLS.
	Certificate      string `dynamodbav:"certificate,omitempty"`
	SealedPrivateKey string `dynamodbav:"sealed_private_key,omitempty"`
}

// Sealed is the auth's sealed secret: the password, the client secret or
// the private key.
func (a EndpointAuth) Sealed() string {
	switch a.Kind {
	case AuthBasic:
		return a.SealedPassword
	case AuthOAuth2:
		return a.SealedClientSecret
	case AuthMTLS:
		return a.SealedPrivateKey
	}
	return ""
}

// TenantBytes is the size of what the tenant wrote into a, its secret
// aside (sealed, hookline's, bounded by the API's limit on it).
func (a EndpointAuth) TenantBytes() int {
	return len(a.Username) + len(a.TokenURL) + len(a.ClientID) + len(a.Scope) + len(a.Audience) + len(a.Certificate)
}
