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
