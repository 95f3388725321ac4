package memstore

import (
	"context"
	"fmt"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// CreateTenant writes a new tenant, or store.ErrExists. One that exists with
// the same creation time (this clock's, to the nanosecond) is taken for this
// very write, retried after its answer was lost, as the real store does.
func (s *Store) CreateTenant(_ context.Context, t domain.Tenant) (domain.Tenant, error) {
	if err := checkKey(keys.Tenant(t.TenantID), "TENANT"); err != nil {
		return t, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.CreatedAt = s.now()
	if s.tombstones[t.TenantID] {
		return t, fmt.Errorf("tenant %s is being erased: %w", t.TenantID, store.ErrExists)
	}
	if old, ok := s.tenants[t.TenantID]; ok {
		if old.CreatedAt.Equal(t.CreatedAt) {
			return t, nil // its own write, retried
		}
		return t, fmt.Errorf("tenant %s: %w", t.TenantID, store.ErrExists)
	}
	s.tenants[t.TenantID] = copyOf(t)
	return t, nil
}

// Tenant reads a tenant, or store.ErrNotFound.
func (s *Store) Tenant(_ context.Context, id string) (domain.Tenant, error) {
	if err := checkKey(keys.Tenant(id), "TENANT"); err != nil {
		return domain.Tenant{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tenants[id]
	if !ok {
		return domain.Tenant{}, fmt.Errorf("tenant %s: %w", id, store.ErrNotFound)
	}
	return copyOf(t), nil
}

// PutAPIKey stores a new key of an existing tenant (store.ErrNotFound
// otherwise); a hash already stored is refused (store.ErrExists).
func (s *Store) PutAPIKey(_ context.Context, k domain.APIKey) (domain.APIKey, error) {
	if err := checkKey(keys.Tenant(k.TenantID), "TENANT"); err != nil {
		return k, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[k.TenantID]; !ok || s.tombstones[k.TenantID] {
		return k, fmt.Errorf("tenant %s: %w", k.TenantID, store.ErrNotFound)
	}
	k.CreatedAt = s.now()
	if _, ok := s.keys[k.Hash]; ok {
		return k, fmt.Errorf("put API key %s: %w", k.KeyID, store.ErrExists)
	}
	s.keys[k.Hash] = copyOf(k)
	return k, nil
}

// TenantForKey returns the tenant of an unrevoked key hash, or
// store.ErrNotFound, also while its tenant has a tombstone, as store.Store
// does.
func (s *Store) TenantForKey(_ context.Context, hash string) (string, error) {
	if err := checkKey(keys.APIKey(hash), "APIKEY"); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[hash]
	if !ok {
		return "", fmt.Errorf("API key: %w", store.ErrNotFound)
	}
	if k.RevokedAt != nil {
		return "", fmt.Errorf("API key %s is revoked: %w", k.KeyID, store.ErrNotFound)
	}
	if s.tombstones[k.TenantID] {
		return "", fmt.Errorf("API key %s: tenant %s is being erased: %w", k.KeyID, k.TenantID, store.ErrNotFound)
	}
	return k.TenantID, nil
}

// RevokeAPIKey revokes a tenant's key by its id (the first revocation's
// time stays), or answers store.ErrNotFound.
func (s *Store) RevokeAPIKey(_ context.Context, tenantID, keyID string) error {
	if err := checkKey(keys.TenantIndex(tenantID, "KEYS"), keyID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, k := range s.keys {
		if k.TenantID == tenantID && k.KeyID == keyID {
			if k.RevokedAt == nil {
				k.RevokedAt = stamp(s.now())
				s.keys[hash] = k
			}
			return nil
		}
	}
	return fmt.Errorf("API key %s of tenant %s: %w", keyID, tenantID, store.ErrNotFound)
}

// APIKeys returns every API key stored: for a test's assertions, not a
// store method.
func (s *Store) APIKeys() []domain.APIKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.APIKey
	for _, k := range s.keys {
		out = append(out, copyOf(k))
	}
	return out
}
