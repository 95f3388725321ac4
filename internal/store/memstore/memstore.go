package memstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
)

// Store is the in-memory store. Build it with New.
type Store struct {
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// DepthSettle is how long a tenant's DLQ depth counter must have stood
	// still before ReconcileDLQDepth recounts it. Default
	// store.DefaultDepthSettle.
	DepthSettle time.Duration

	mu         sync.Mutex
	tenants    map[string]domain.Tenant
	keys       map[string]domain.APIKey     // by hash
	portal     map[string]domain.PortalLink // by hash
	endpoints  map[endpointKey]domain.Endpoint
	deliveries map[string]domain.Delivery
	dead       map[string]deadEntry // delivery id -> its place in the dead index
	windows    map[string]*domain.OpDeliveryDeadEvent
	rejections map[string]domain.Rejection
	jobs       map[string]domain.ReplayJob
	slots      map[string]map[string]bool // tenant -> ids of its open jobs
	depths     map[string]*counter
	sweptAt    *time.Time
	stats      map[statsKey]domain.StatsBucket
	rates      map[string]int   // rate window ("tenant\x00endpoint\x00second") -> slots taken
	gates      map[string]*gate // endpoint gate ("tenant\x00endpoint")
	tombstones map[string]bool  // tenants being erased
}

type endpointKey struct{ tenant, endpoint string }

// counter is a tenant's DLQ depth counter.
type counter struct {
	depth, moves int
	movedAt      time.Time
}

// New returns an empty store on the wall clock.
func New() *Store {
	return &Store{
		Now: time.Now, DepthSettle: store.DefaultDepthSettle,
		tenants: map[string]domain.Tenant{}, keys: map[string]domain.APIKey{},
		endpoints: map[endpointKey]domain.Endpoint{}, deliveries: map[string]domain.Delivery{},
		dead: map[string]deadEntry{}, rejections: map[string]domain.Rejection{},
		jobs: map[string]domain.ReplayJob{}, slots: map[string]map[string]bool{},
		depths: map[string]*counter{}, windows: map[string]*domain.OpDeliveryDeadEvent{},
	}
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// copyOf is v after a round trip through the DynamoDB attribute encoding,
// as the real store returns what it wrote.
func copyOf[T any](v T) T {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		panic(fmt.Sprintf("memstore: marshal %T: %v", v, err))
	}
	var out T
	if err := attributevalue.UnmarshalMap(item, &out); err != nil {
		panic(fmt.Sprintf("memstore: unmarshal %T: %v", v, err))
	}
	return out
}

// keyTime is a time as the store writes it into keys and expressions:
// fixed-width RFC 3339 in UTC, which sorts as a string.
const keyFormat = "2006-01-02T15:04:05.000000000Z07:00"

func keyTime(t time.Time) string { return t.UTC().Format(keyFormat) }

// stamp is a time as the store writes one from its clock (to the
// nanosecond, UTC).
func stamp(t time.Time) *time.Time {
	t = t.UTC()
	return &t
}

// checkKey refuses, as DynamoDB does (a ValidationException, which the real
// store passes on wrapped by no sentinel), a key over its limits: 2048
// bytes for a partition key, 1024 for a sort key. The local cloud may not
// refuse it; AWS does.
func checkKey(pk, sk string) error {
	if len(pk) > 2048 || len(sk) > 1024 {
		return fmt.Errorf("ValidationException: One or more parameter values were invalid: key size exceeded (partition key %d bytes, sort key %d)", len(pk), len(sk))
	}
	return nil
}

// Tenants and API keys.

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
// store.ErrNotFound.
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

// Endpoints.

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

// applyChange sets on e what c changes.
func (s *Store) applyChange(e *domain.Endpoint, c store.EndpointChange) {
	e.UpdatedAt = stamp(s.now())
	if c.URL != nil {
		e.URL = *c.URL
	}
	if c.Description != nil {
		e.Description = *c.Description
	}
	if c.EventTypes != nil {
		e.EventTypes = slices.Clone(*c.EventTypes)
	}
	if c.Headers != nil {
		e.Headers = maps.Clone(*c.Headers)
	}
	if c.RateLimit != nil {
		e.RateLimit = *c.RateLimit
	}
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
	same := ok && slices.Equal(e.SealedSecrets, cur.SealedSecrets) && (len(cur.SealedSecrets) > 0 || slices.Equal(e.Secrets, cur.Secrets))
	if !same {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s changed during rotation, try again: %w", endpointID, store.ErrConflict)
	}
	now := s.now()
	e.SealedSecrets = []string{r.Sealed}
	e.RetiringUntil, e.UpdatedAt = stamp(now.Add(r.Grace)), stamp(now)
	e.Secrets, e.RetiringSecret, e.SealedRetiringSecret = nil, "", retiring
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
		if enabled {
			e.Disabled, e.ConsecutiveFailures, e.DisabledReason, e.DisabledAt, e.FailuresSince = false, 0, "", nil, nil
		} else {
			e.Disabled, e.DisabledReason, e.DisabledAt = true, domain.DisabledByTenant, stamp(s.now())
		}
	})
}

// DisableEndpoint turns an existing, enabled endpoint off with the reason
// (disabled_at now, failing since now unless it was) and reports whether
// this call disabled it; a missing one is an error (nothing is created).
func (s *Store) DisableEndpoint(_ context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error) {
	disabledNow := false
	_, err := s.changeEndpoint(tenantID, endpointID, "disable endpoint", func(e *domain.Endpoint) {
		if !e.Disabled {
			*e, disabledNow = s.disabled(*e, reason), true
		}
	})
	return disabledNow, err
}

// disabled is e disabled for reason now.
func (s *Store) disabled(e domain.Endpoint, reason domain.DisableReason) domain.Endpoint {
	e.Disabled, e.DisabledReason, e.DisabledAt = true, reason, stamp(s.now())
	if e.FailingSince == nil {
		e.FailingSince = stamp(s.now())
	}
	return e
}

// RecordEndpointFailure counts a failed attempt against an existing
// endpoint (starting its run's clock on the run's first), opens its
// circuit breaker and marks it failing at th.FailingAfter (once per
// episode), opens the breaker again for a doubled cooldown on a failed
// probe (th.Probe), and disables it at th.DisableAfter once the run has
// lasted th.DisableAfterFor, as store.Store does.
func (s *Store) RecordEndpointFailure(_ context.Context, tenantID, endpointID string, th store.HealthThresholds) (store.FailureEffect, error) {
	var fx store.FailureEffect
	_, err := s.changeEndpoint(tenantID, endpointID, "count failure of endpoint", func(e *domain.Endpoint) {
		now := s.now()
		e.ConsecutiveFailures++
		fx.Failures = e.ConsecutiveFailures
		if e.FailuresSince == nil {
			e.FailuresSince = stamp(now)
		}
		if th.FailingAfter > 0 && fx.Failures >= th.FailingAfter {
			tripBreaker(e, th, now, &fx)
		}
		if th.DisableAfter > 0 && fx.Failures >= th.DisableAfter && now.Sub(*e.FailuresSince) >= th.DisableAfterFor && !e.Disabled {
			*e = s.disabled(*e, domain.DisabledConsecutiveFailures)
			fx.Disabled, fx.DisabledAt = true, *e.DisabledAt
		}
	})
	return fx, err
}

// tripBreaker marks e failing, and for a retryable failure opens its
// circuit breaker when it is closed, or again for the next cooldown after a
// failed probe.
func tripBreaker(e *domain.Endpoint, th store.HealthThresholds, now time.Time, fx *store.FailureEffect) {
	switch {
	case !th.Retryable:
		if e.FailingSince == nil {
			e.FailingSince = stamp(now)
			fx.Failing, fx.FailingSince = true, *e.FailingSince
		}
		return
	case e.BreakerUntil == nil:
		e.BreakerUntil, e.BreakerTrips = stamp(now.Add(th.Breaker.Open(0))), 0
		if e.FailingSince == nil {
			e.FailingSince = stamp(now)
			fx.Failing, fx.FailingSince = true, *e.FailingSince
		}
	case th.Probe:
		e.BreakerTrips++
		e.BreakerUntil = stamp(now.Add(th.Breaker.Open(e.BreakerTrips)))
	default:
		return
	}
	u := *e.BreakerUntil
	fx.BreakerUntil = &u
}

// ResetEndpointFailures sets an existing endpoint's failure count to zero,
// closes its breaker and clears its failing mark, which it returns (nil:
// none).
func (s *Store) ResetEndpointFailures(_ context.Context, tenantID, endpointID string) (*time.Time, error) {
	var since *time.Time
	_, err := s.changeEndpoint(tenantID, endpointID, "reset failures of endpoint", func(e *domain.Endpoint) {
		since = e.FailingSince
		e.ConsecutiveFailures, e.FailingSince, e.FailuresSince, e.BreakerUntil, e.BreakerTrips = 0, nil, nil, nil, 0
	})
	return since, err
}

// AddDeath adds a dead delivery to its endpoint's coalescing window and
// returns the window's count, as store.Store does.
func (s *Store) AddDeath(_ context.Context, tenantID, endpointID string, start, _ time.Time, d domain.OpDeath) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantID + "\x00" + endpointID + "\x00" + start.UTC().Format(time.RFC3339Nano)
	w := s.windows[k]
	if w == nil {
		w = &domain.OpDeliveryDeadEvent{Reasons: map[domain.DeadReason]int{}}
		s.windows[k] = w
	}
	w.Count++
	w.Reasons[d.Reason]++
	if len(w.Deaths) < domain.OpDeadSample {
		w.Deaths = append(w.Deaths, d)
	}
	return w.Count, nil
}

// DeadWindow reads an endpoint's coalescing window, or store.ErrNotFound.
func (s *Store) DeadWindow(_ context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[tenantID+"\x00"+endpointID+"\x00"+start.UTC().Format(time.RFC3339Nano)]
	if w == nil {
		return domain.OpDeliveryDeadEvent{}, fmt.Errorf("dead window of endpoint %s: %w", endpointID, store.ErrNotFound)
	}
	out := *w
	out.Reasons = maps.Clone(w.Reasons)
	out.Deaths = append([]domain.OpDeath(nil), w.Deaths...)
	return out, nil
}

// Rejections.

// PutRejection records a rejected outbox item (the same key twice is one
// record, the later).
func (s *Store) PutRejection(_ context.Context, r domain.Rejection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.RejectedAt = s.now()
	s.rejections[r.Key] = copyOf(r)
	return nil
}

// Rejection reads a rejection by its key, or store.ErrNotFound.
func (s *Store) Rejection(_ context.Context, k string) (domain.Rejection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rejections[k]
	if !ok {
		return domain.Rejection{}, fmt.Errorf("rejection %s: %w", k, store.ErrNotFound)
	}
	return copyOf(r), nil
}

// Rejections returns every rejection recorded, by key: for a test's
// assertions, not a store method.
func (s *Store) Rejections() map[string]domain.Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]domain.Rejection{}
	for k, r := range s.rejections {
		out[k] = copyOf(r)
	}
	return out
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
