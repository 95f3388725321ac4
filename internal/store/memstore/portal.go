package memstore

import (
	"context"
	"fmt"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// PutPortalLink stores a new portal link of an existing tenant, as
// store.Store does (store.ErrNotFound for no such tenant or one being
// erased, store.ErrExists for a hash already stored).
func (s *Store) PutPortalLink(_ context.Context, l domain.PortalLink) (domain.PortalLink, error) {
	if err := checkKey(keys.Portal(l.Hash), "PORTAL"); err != nil {
		return l, err
	}
	if err := checkKey(keys.TenantIndex(l.TenantID, "PORTAL"), l.LinkID); err != nil {
		return l, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tenants[l.TenantID]; !ok || s.tombstones[l.TenantID] {
		return l, fmt.Errorf("tenant %s: %w", l.TenantID, store.ErrNotFound)
	}
	if _, ok := s.portal[l.Hash]; ok {
		return l, fmt.Errorf("portal link %s: %w", l.LinkID, store.ErrExists)
	}
	l.CreatedAt = s.now()
	if s.portal == nil {
		s.portal = map[string]domain.PortalLink{}
	}
	s.portal[l.Hash] = copyOf(l)
	return l, nil
}

// PortalLink reads a portal link by its token's hash, or store.ErrNotFound.
func (s *Store) PortalLink(_ context.Context, hash string) (domain.PortalLink, error) {
	if err := checkKey(keys.Portal(hash), "PORTAL"); err != nil {
		return domain.PortalLink{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.portal[hash]
	if !ok {
		return l, fmt.Errorf("portal link: %w", store.ErrNotFound)
	}
	return copyOf(l), nil
}

// RevokePortalLink revokes a tenant's portal link by its id (the first
// revocation's time stays), or answers store.ErrNotFound.
func (s *Store) RevokePortalLink(_ context.Context, tenantID, linkID string) error {
	if err := checkKey(keys.TenantIndex(tenantID, "PORTAL"), linkID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, l := range s.portal {
		if l.TenantID == tenantID && l.LinkID == linkID {
			if l.RevokedAt == nil {
				l.RevokedAt = stamp(s.now())
				s.portal[hash] = l
			}
			return nil
		}
	}
	return fmt.Errorf("portal link %s of tenant %s: %w", linkID, tenantID, store.ErrNotFound)
}
