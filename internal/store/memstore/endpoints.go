package memstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// PutEndpoint creates or replaces an endpoint (its CreatedAt, when zero,
// is now).
func (s *Store) PutEndpoint(_ context.Context, e domain.Endpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.now()
	}
	s.endpoints[endpointKey{e.TenantID, e.EndpointID}] = copyOf(e)
	return nil
}

// CreateEndpoint writes a new endpoint, or store.ErrExists (one with the
// same creation time is this write retried, as for CreateTenant).
func (s *Store) CreateEndpoint(_ context.Context, e domain.Endpoint) (domain.Endpoint, error) {
	if err := checkKey(keys.Tenant(e.TenantID), keys.Endpoint(e.EndpointID)); err != nil {
		return e, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.CreatedAt = s.now()
	k := endpointKey{e.TenantID, e.EndpointID}
	if old, ok := s.endpoints[k]; ok {
		if old.CreatedAt.Equal(e.CreatedAt) {
			return e, nil // its own write, retried
		}
		return e, fmt.Errorf("endpoint %s: %w", e.EndpointID, store.ErrExists)
	}
	s.endpoints[k] = copyOf(e)
	return e, nil
}

// CountEndpoints counts a tenant's endpoints, up to upTo, as the store's
// does.
func (s *Store) CountEndpoints(_ context.Context, tenantID string, upTo int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.endpoints {
		if k.tenant == tenantID && n < upTo {
			n++
		}
	}
	return n, nil
}

// Endpoint reads one endpoint of a tenant, or store.ErrNotFound.
func (s *Store) Endpoint(_ context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	if err := checkKey(keys.Tenant(tenantID), keys.Endpoint(endpointID)); err != nil {
		return domain.Endpoint{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.endpoints[endpointKey{tenantID, endpointID}]
	if !ok {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s of tenant %s: %w", endpointID, tenantID, store.ErrNotFound)
	}
	return copyOf(e), nil
}

// sortedEndpoints are a tenant's endpoints in id order (the table's sort
// key order). The caller holds the lock.
func (s *Store) sortedEndpoints(tenantID string) []domain.Endpoint {
	var out []domain.Endpoint
	for k, e := range s.endpoints {
		if k.tenant == tenantID {
			out = append(out, copyOf(e))
		}
	}
	slices.SortFunc(out, func(a, b domain.Endpoint) int { return strings.Compare(a.EndpointID, b.EndpointID) })
	return out
}

// Endpoints lists every endpoint of a tenant, in id order.
func (s *Store) Endpoints(_ context.Context, tenantID string) ([]domain.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedEndpoints(tenantID), nil
}

// ListEndpoints returns a page of a tenant's endpoints in id order, at most
// limit (above zero), after cursor ("" for the first page). A page stopped
// by its limit carries a cursor, even when nothing follows (as a DynamoDB
// Query stopped by its Limit does); a cursor this store did not make is
// store.ErrBadCursor.
func (s *Store) ListEndpoints(_ context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	if limit < 1 {
		return nil, "", fmt.Errorf("list endpoints of tenant %s: limit %d: ValidationException", tenantID, limit)
	}
	after := ""
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		after = string(raw)
		if err := checkKey(keys.Tenant(tenantID), keys.Endpoint(after)); err != nil {
			return nil, "", err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Endpoint
	for _, e := range s.sortedEndpoints(tenantID) {
		if cursor != "" && e.EndpointID <= after {
			continue
		}
		out = append(out, e)
		if len(out) == limit {
			return out, base64.RawURLEncoding.EncodeToString([]byte(e.EndpointID)), nil
		}
	}
	return out, "", nil
}

// UpdateEndpoint applies a change to an existing endpoint and returns it, or
// store.ErrNotFound. An empty description, event type list or header map
// removes it.
func (s *Store) UpdateEndpoint(_ context.Context, tenantID, endpointID string, c store.EndpointChange) (domain.Endpoint, error) {
	return s.changeEndpoint(tenantID, endpointID, "endpoint", func(e *domain.Endpoint) {
		s.applyChange(e, c)
		e.Revision++
	})
}

// changeEndpoint applies change to an existing endpoint under the lock,
// stores the result and returns a copy; a missing endpoint is
// store.ErrNotFound, its error prefixed with what.
func (s *Store) changeEndpoint(tenantID, endpointID, what string, change func(*domain.Endpoint)) (domain.Endpoint, error) {
	if err := checkKey(keys.Tenant(tenantID), keys.Endpoint(endpointID)); err != nil {
		return domain.Endpoint{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := endpointKey{tenantID, endpointID}
	e, ok := s.endpoints[k]
	if !ok {
		return domain.Endpoint{}, fmt.Errorf("%s %s: %w", what, endpointID, store.ErrNotFound)
	}
	change(&e)
	e = copyOf(e)
	s.endpoints[k] = e
	return copyOf(e), nil
}

// applyChange sets on e what c changes, through the attributes DynamoDB
// stores (store.EndpointChange.Fields), so both stores read one list.
func (s *Store) applyChange(e *domain.Endpoint, c store.EndpointChange) {
	e.UpdatedAt = stamp(s.now())
	item, err := attributevalue.MarshalMap(*e)
	if err != nil {
		panic(fmt.Sprintf("memstore: marshal endpoint: %v", err))
	}
	for _, f := range c.Fields() {
		if f.Empty {
			delete(item, f.Attr)
			continue
		}
		av, err := attributevalue.Marshal(f.Value)
		if err != nil {
			panic(fmt.Sprintf("memstore: marshal %s: %v", f.Attr, err))
		}
		item[f.Attr] = av
	}
	var out domain.Endpoint
	if err := attributevalue.UnmarshalMap(item, &out); err != nil {
		panic(fmt.Sprintf("memstore: unmarshal endpoint: %v", err))
	}
	*e = out
}

// DeleteEndpoint removes an endpoint, or answers store.ErrNotFound.
func (s *Store) DeleteEndpoint(_ context.Context, tenantID, endpointID string) error {
	if err := checkKey(keys.Tenant(tenantID), keys.Endpoint(endpointID)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := endpointKey{tenantID, endpointID}
	if _, ok := s.endpoints[k]; !ok {
		return fmt.Errorf("endpoint %s: %w", endpointID, store.ErrNotFound)
	}
	delete(s.endpoints, k)
	return nil
}

// RotateSecret makes r.Sealed the endpoint's signing secret, the current one
// retiring beside it for r.Grace (sealed by r.Seal when it is plaintext).
// The write is conditional on the secrets read: a rotation that another
// overtook while r.Seal ran is store.ErrConflict.
func (s *Store) RotateSecret(ctx context.Context, tenantID, endpointID string, r store.Rotation) (domain.Endpoint, error) {
	cur, err := s.Endpoint(ctx, tenantID, endpointID)
	if err != nil {
		return domain.Endpoint{}, err
	}
	retiring := ""
	switch {
	case len(cur.SealedSecrets) > 0:
		retiring = cur.SealedSecrets[0]
	case len(cur.Secrets) > 0:
		if r.Seal == nil {
			return domain.Endpoint{}, fmt.Errorf("rotate secret of endpoint %s: its secret is in plaintext and nothing seals it", endpointID)
		}
		if retiring, err = r.Seal(ctx, cur.Secrets[0]); err != nil {
			return domain.Endpoint{}, fmt.Errorf("rotate secret of endpoint %s: %w", endpointID, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := endpointKey{tenantID, endpointID}
	e, ok := s.endpoints[k]
	same := ok && slices.Equal(e.SealedSecrets, cur.SealedSecrets) && (len(cur.SealedSecrets) > 0 || slices.Equal(e.Secrets, cur.Secrets)) &&
		(r.SealedSigningKey == "" || slices.Equal(e.SealedSigningKeys, cur.SealedSigningKeys))
	if !same {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s changed during rotation, try again: %w", endpointID, store.ErrConflict)
	}
	now := s.now()
	e.SealedSecrets = []string{r.Sealed}
	e.RetiringUntil, e.UpdatedAt = stamp(now.Add(r.Grace)), stamp(now)
	e.Secrets, e.RetiringSecret, e.SealedRetiringSecret = nil, "", retiring
	if r.SealedSigningKey != "" {
		e.SealedSigningKeys, e.PublicKeys = domain.RotatedKeys(cur, r.SealedSigningKey, r.PublicKey)
	}
	e.Revision++
	e = copyOf(e)
	s.endpoints[k] = e
	return copyOf(e), nil
}

// SetEndpointEnabled enables (clearing the failure count and the disabled
// reason) or disables (by the tenant) an endpoint, or answers
// store.ErrNotFound.
func (s *Store) SetEndpointEnabled(_ context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error) {
	return s.changeEndpoint(tenantID, endpointID, "endpoint", func(e *domain.Endpoint) {
		e.UpdatedAt = stamp(s.now())
		e.Revision++
		if enabled {
			e.Disabled, e.ConsecutiveFailures, e.DisabledReason, e.DisabledAt, e.FailuresSince = false, 0, "", nil, nil
		} else {
			e.Disabled, e.DisabledReason, e.DisabledAt = true, domain.DisabledByTenant, stamp(s.now())
		}
	})
}

// DeliveriesOfEvent lists the deliveries of a tenant's event to the
// tenant's endpoints, in endpoint id order (one to an endpoint deleted
// since is not listed).
func (s *Store) DeliveriesOfEvent(ctx context.Context, tenantID, eventID string) ([]domain.Delivery, error) {
	m, err := s.DeliveriesOfEvents(ctx, tenantID, []string{eventID})
	return m[eventID], err
}

// DeliveriesOfEvents is DeliveriesOfEvent for several events, by event id
// (an event without deliveries has no entry).
func (s *Store) DeliveriesOfEvents(_ context.Context, tenantID string, eventIDs []string) (map[string][]domain.Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]domain.Delivery{}
	for _, ev := range eventIDs {
		for _, e := range s.sortedEndpoints(tenantID) {
			if d, ok := s.deliveries[domain.DeliveryID(ev, e.EndpointID)]; ok && d.TenantID == tenantID {
				out[ev] = append(out[ev], copyOf(d))
			}
		}
	}
	return out, nil
}

// TenantEndpoints lists a tenant's endpoints, or none and true when it is
// being erased.
func (s *Store) TenantEndpoints(_ context.Context, tenantID string) ([]domain.Endpoint, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tombstones[tenantID] {
		return nil, true, nil
	}
	return s.sortedEndpoints(tenantID), false, nil
}
