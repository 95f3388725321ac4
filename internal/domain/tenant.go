package domain

import "time"

// Tenant owns endpoints, deliveries and API keys.
type Tenant struct {
	TenantID  string    `dynamodbav:"tenant_id"`
	Name      string    `dynamodbav:"name"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// APIKey is the stored form of a tenant's API key: its hash, never the key.
type APIKey struct {
	KeyID     string     `dynamodbav:"key_id"`
	TenantID  string     `dynamodbav:"tenant_id"`
	Hash      string     `dynamodbav:"hash"`
	CreatedAt time.Time  `dynamodbav:"created_at"`
	RevokedAt *time.Time `dynamodbav:"revoked_at,omitempty"`
}

// PortalLink is a short-lived credential of one tenant that the operator
// mints for the console (a sign-in link to embed in a SaaS's own pages).
// Like an API key, it is stored only as the hash of its token. It reads
// and replays; it writes only what its Scopes allow.
type PortalLink struct {
	LinkID   string `dynamodbav:"link_id"`
	TenantID string `dynamodbav:"tenant_id"`
	Hash     string `dynamodbav:"hash"`
	// Scopes are the writes the link may make (ParseScopes' order). Nil:
	// read and replay only.
	Scopes []Scope `dynamodbav:"scopes,omitempty"`
	// ExpiresAt is when the token stops authenticating (checked on every
	// use; the item itself is deleted by the table's TTL later).
	ExpiresAt time.Time  `dynamodbav:"valid_until"`
	CreatedAt time.Time  `dynamodbav:"created_at"`
	RevokedAt *time.Time `dynamodbav:"revoked_at,omitempty"`
}
