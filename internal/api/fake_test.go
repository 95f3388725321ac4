package api_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// fakeStore is an in-memory api.Store with the real store's semantics:
// endpoints keyed by tenant and id, API keys by hash (revocation keeps the
// record and answers ErrNotFound), deliveries by id carrying their tenant,
// cursor pagination over endpoint ids, and the same sentinel errors
// (ErrNotFound, ErrExists, ErrConflict, ErrBadCursor) wrapped as the store
// wraps them. Values are deep-copied in and out, as a round trip through
// DynamoDB would.
type fakeStore struct {
	mu  sync.Mutex
	now func() time.Time

	tenants    map[string]domain.Tenant
	keys       map[string]domain.APIKey              // by hash
	endpoints  map[string]map[string]domain.Endpoint // tenant -> endpoint id -> endpoint
	deliveries map[string]domain.Delivery            // by delivery id
	jobs       map[string]domain.ReplayJob           // by job id

	// panicIn makes the named method (or every method, "*") panic.
	panicIn string
	// failWith makes every method fail with this (infrastructure) error.
	failWith error
	// conflictOnRotate makes RotateSecret lose a race (ErrConflict).
	conflictOnRotate bool
	// full names the tenants whose replays fakeReplays refuses.
	full map[string]bool
}

var _ api.Store = (*fakeStore)(nil)

// panicText is what the fake panics with; it must never reach a client.
const panicText = "fake store exploded: s3cr3t-panic-detail"

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{
		now:        now,
		tenants:    map[string]domain.Tenant{},
		keys:       map[string]domain.APIKey{},
		endpoints:  map[string]map[string]domain.Endpoint{},
		deliveries: map[string]domain.Delivery{},
		jobs:       map[string]domain.ReplayJob{},
	}
}

// enter locks the store and applies the configured failure modes. The
// caller must defer f.mu.Unlock() when enter returns nil.
func (f *fakeStore) enter(method string) error {
	f.mu.Lock()
	if f.panicIn == "*" || f.panicIn == method {
		f.mu.Unlock()
		panic(panicText)
	}
	if f.failWith != nil {
		err := f.failWith
		f.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (f *fakeStore) clock() time.Time { return f.now().UTC() }

// checkKey fails as DynamoDB does (a ValidationException, which the real
// store passes on unwrapped by any sentinel) for key values over its limits:
// 2048 bytes for a partition key, 1024 for a sort key.
func checkKey(pk, sk string) error {
	if len(pk) > 2048 || len(sk) > 1024 {
		return errors.New("ValidationException: One or more parameter values were invalid: key size exceeded (fake)")
	}
	return nil
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func copyEndpoint(e domain.Endpoint) domain.Endpoint {
	e.Secrets = slices.Clone(e.Secrets)
	e.SealedSecrets = slices.Clone(e.SealedSecrets)
	e.EventTypes = slices.Clone(e.EventTypes)
	e.Headers = maps.Clone(e.Headers)
	e.RetiringUntil = copyTime(e.RetiringUntil)
	e.UpdatedAt = copyTime(e.UpdatedAt)
	return e
}

func copyDelivery(d domain.Delivery) domain.Delivery {
	d.EnqueuedAt = copyTime(d.EnqueuedAt)
	d.DeliveredAt = copyTime(d.DeliveredAt)
	d.DeadAt = copyTime(d.DeadAt)
	d.ReplayedAt = copyTime(d.ReplayedAt)
	d.AttemptLog = slices.Clone(d.AttemptLog)
	return d
}

func (f *fakeStore) TenantForKey(_ context.Context, hash string) (string, error) {
	if err := f.enter("TenantForKey"); err != nil {
		return "", err
	}
	defer f.mu.Unlock()
	k, ok := f.keys[hash]
	if !ok {
		return "", fmt.Errorf("API key: %w", store.ErrNotFound)
	}
	if k.RevokedAt != nil {
		return "", fmt.Errorf("API key %s is revoked: %w", k.KeyID, store.ErrNotFound)
	}
	return k.TenantID, nil
}

func (f *fakeStore) CreateTenant(_ context.Context, t domain.Tenant) (domain.Tenant, error) {
	if err := f.enter("CreateTenant"); err != nil {
		return t, err
	}
	defer f.mu.Unlock()
	t.CreatedAt = f.clock()
	if _, ok := f.tenants[t.TenantID]; ok {
		return t, fmt.Errorf("tenant %s: %w", t.TenantID, store.ErrExists)
	}
	f.tenants[t.TenantID] = t
	return t, nil
}

func (f *fakeStore) PutAPIKey(_ context.Context, k domain.APIKey) (domain.APIKey, error) {
	if err := f.enter("PutAPIKey"); err != nil {
		return k, err
	}
	defer f.mu.Unlock()
	if err := checkKey("TENANT#"+k.TenantID, "TENANT"); err != nil {
		return k, fmt.Errorf("get tenant: %w", err)
	}
	if _, ok := f.tenants[k.TenantID]; !ok {
		return k, fmt.Errorf("tenant %s: %w", k.TenantID, store.ErrNotFound)
	}
	k.CreatedAt = f.clock()
	if _, ok := f.keys[k.Hash]; ok {
		// The real store's conditional put fails with a plain (not
		// ErrExists) error: a hash collision is an infrastructure oddity.
		return k, fmt.Errorf("put API key %s: conditional check failed", k.KeyID)
	}
	k.RevokedAt = nil
	f.keys[k.Hash] = k
	return k, nil
}

func (f *fakeStore) RevokeAPIKey(_ context.Context, tenantID, keyID string) error {
	if err := f.enter("RevokeAPIKey"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if err := checkKey("TENANT#"+tenantID+"#KEYS", keyID); err != nil {
		return fmt.Errorf("find API key: %w", err)
	}
	for h, k := range f.keys {
		if k.TenantID == tenantID && k.KeyID == keyID {
			if k.RevokedAt == nil {
				now := f.clock()
				k.RevokedAt = &now
				f.keys[h] = k
			}
			return nil
		}
	}
	return fmt.Errorf("API key %s of tenant %s: %w", keyID, tenantID, store.ErrNotFound)
}

func (f *fakeStore) CreateEndpoint(_ context.Context, e domain.Endpoint) (domain.Endpoint, error) {
	if err := f.enter("CreateEndpoint"); err != nil {
		return e, err
	}
	defer f.mu.Unlock()
	e = copyEndpoint(e)
	e.CreatedAt = f.clock()
	if _, ok := f.endpoints[e.TenantID][e.EndpointID]; ok {
		return e, fmt.Errorf("endpoint %s: %w", e.EndpointID, store.ErrExists)
	}
	if f.endpoints[e.TenantID] == nil {
		f.endpoints[e.TenantID] = map[string]domain.Endpoint{}
	}
	f.endpoints[e.TenantID][e.EndpointID] = copyEndpoint(e)
	return e, nil
}

// lookup returns a tenant's endpoint; the caller holds the lock.
func (f *fakeStore) lookup(tenantID, endpointID string) (domain.Endpoint, error) {
	if err := checkKey("TENANT#"+tenantID, "ENDPOINT#"+endpointID); err != nil {
		return domain.Endpoint{}, fmt.Errorf("get endpoint: %w", err)
	}
	e, ok := f.endpoints[tenantID][endpointID]
	if !ok {
		return domain.Endpoint{}, fmt.Errorf("endpoint %s: %w", endpointID, store.ErrNotFound)
	}
	return copyEndpoint(e), nil
}

func (f *fakeStore) Endpoint(_ context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	if err := f.enter("Endpoint"); err != nil {
		return domain.Endpoint{}, err
	}
	defer f.mu.Unlock()
	return f.lookup(tenantID, endpointID)
}

func (f *fakeStore) ListEndpoints(_ context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	if err := f.enter("ListEndpoints"); err != nil {
		return nil, "", err
	}
	defer f.mu.Unlock()
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		after = string(b)
		if err := checkKey("TENANT#"+tenantID, "ENDPOINT#"+after); err != nil {
			return nil, "", fmt.Errorf("list endpoints: %w", err)
		}
	}
	ids := slices.Sorted(maps.Keys(f.endpoints[tenantID]))
	var es []domain.Endpoint
	for _, id := range ids {
		if cursor != "" && id <= after {
			continue
		}
		if len(es) == limit {
			break
		}
		es = append(es, copyEndpoint(f.endpoints[tenantID][id]))
	}
	// DynamoDB returns a LastEvaluatedKey whenever the page stopped at the
	// limit, even when nothing follows: the next page is then empty.
	next := ""
	if len(es) == limit && len(es) > 0 {
		next = base64.RawURLEncoding.EncodeToString([]byte(es[len(es)-1].EndpointID))
	}
	return es, next, nil
}

func (f *fakeStore) UpdateEndpoint(_ context.Context, tenantID, endpointID string, c store.EndpointChange) (domain.Endpoint, error) {
	if err := f.enter("UpdateEndpoint"); err != nil {
		return domain.Endpoint{}, err
	}
	defer f.mu.Unlock()
	e, err := f.lookup(tenantID, endpointID)
	if err != nil {
		return domain.Endpoint{}, err
	}
	now := f.clock()
	e.UpdatedAt = &now
	if c.URL != nil {
		e.URL = *c.URL
	}
	if c.Description != nil {
		e.Description = *c.Description
	}
	if c.EventTypes != nil {
		e.EventTypes = slices.Clone(*c.EventTypes)
		if len(e.EventTypes) == 0 {
			e.EventTypes = nil // REMOVE event_types
		}
	}
	if c.Headers != nil {
		e.Headers = maps.Clone(*c.Headers)
		if len(e.Headers) == 0 {
			e.Headers = nil // REMOVE headers
		}
	}
	f.endpoints[tenantID][endpointID] = copyEndpoint(e)
	return e, nil
}

func (f *fakeStore) DeleteEndpoint(_ context.Context, tenantID, endpointID string) error {
	if err := f.enter("DeleteEndpoint"); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if _, err := f.lookup(tenantID, endpointID); err != nil {
		return err
	}
	delete(f.endpoints[tenantID], endpointID)
	return nil
}

func (f *fakeStore) RotateSecret(ctx context.Context, tenantID, endpointID string, r store.Rotation) (domain.Endpoint, error) {
	if err := f.enter("RotateSecret"); err != nil {
		return domain.Endpoint{}, err
	}
	e, err := f.lookup(tenantID, endpointID)
	if err == nil && f.conflictOnRotate {
		err = fmt.Errorf("endpoint %s changed during rotation, try again: %w", endpointID, store.ErrConflict)
	}
	f.mu.Unlock()
	if err != nil {
		return domain.Endpoint{}, err
	}
	// As the store does: the current secret retires sealed; a plaintext one
	// (written before secrets were sealed) is sealed first, and removed.
	retiring := ""
	switch {
	case len(e.SealedSecrets) > 0:
		retiring = e.SealedSecrets[0]
	case len(e.Secrets) > 0:
		if retiring, err = r.Seal(ctx, e.Secrets[0]); err != nil {
			return domain.Endpoint{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock()
	until := now.Add(r.Grace)
	e.SealedRetiringSecret = retiring
	e.SealedSecrets = []string{r.Sealed}
	e.Secrets, e.RetiringSecret = nil, ""
	e.RetiringUntil = &until
	e.UpdatedAt = &now
	f.endpoints[tenantID][endpointID] = copyEndpoint(e)
	return e, nil
}

func (f *fakeStore) SetEndpointEnabled(_ context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error) {
	if err := f.enter("SetEndpointEnabled"); err != nil {
		return domain.Endpoint{}, err
	}
	defer f.mu.Unlock()
	e, err := f.lookup(tenantID, endpointID)
	if err != nil {
		return domain.Endpoint{}, err
	}
	now := f.clock()
	e.UpdatedAt = &now
	if enabled {
		e.Disabled, e.ConsecutiveFailures, e.DisabledReason = false, 0, ""
	} else {
		e.Disabled, e.DisabledReason = true, "disabled_by_tenant"
	}
	f.endpoints[tenantID][endpointID] = copyEndpoint(e)
	return e, nil
}

func (f *fakeStore) Delivery(_ context.Context, id string) (domain.Delivery, error) {
	if err := f.enter("Delivery"); err != nil {
		return domain.Delivery{}, err
	}
	defer f.mu.Unlock()
	if err := checkKey("DELIVERY#"+id, "DELIVERY"); err != nil {
		return domain.Delivery{}, fmt.Errorf("get delivery: %w", err)
	}
	d, ok := f.deliveries[id]
	if !ok {
		return domain.Delivery{}, fmt.Errorf("delivery %s: %w", id, store.ErrNotFound)
	}
	return copyDelivery(d), nil
}

func (f *fakeStore) DeliveriesOfEvent(_ context.Context, tenantID, eventID string) ([]domain.Delivery, error) {
	if err := f.enter("DeliveriesOfEvent"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if err := checkKey("TENANT#"+tenantID+"#EVENT#"+eventID, ""); err != nil {
		return nil, fmt.Errorf("list deliveries of event: %w", err)
	}
	var out []domain.Delivery
	for _, d := range f.deliveries {
		if d.TenantID == tenantID && d.EventID == eventID {
			out = append(out, copyDelivery(d))
		}
	}
	// The event index sorts by endpoint id (gsi2sk).
	sort.Slice(out, func(i, j int) bool {
		if out[i].EndpointID != out[j].EndpointID {
			return out[i].EndpointID < out[j].EndpointID
		}
		return out[i].DeliveryID < out[j].DeliveryID
	})
	return out, nil
}

// Test helpers: direct access, bypassing the failure modes.

func (f *fakeStore) putDelivery(d domain.Delivery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliveries[d.DeliveryID] = copyDelivery(d)
}

func (f *fakeStore) delivery(id string) (domain.Delivery, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.deliveries[id]
	return copyDelivery(d), ok
}

func (f *fakeStore) endpoint(tenantID, endpointID string) (domain.Endpoint, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.endpoints[tenantID][endpointID]
	return copyEndpoint(e), ok
}

func (f *fakeStore) setEndpoint(e domain.Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.endpoints[e.TenantID] == nil {
		f.endpoints[e.TenantID] = map[string]domain.Endpoint{}
	}
	f.endpoints[e.TenantID][e.EndpointID] = copyEndpoint(e)
}

func (f *fakeStore) endpointCount(tenantID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.endpoints[tenantID])
}

func (f *fakeStore) apiKeys() []domain.APIKey {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Values(f.keys))
}

// addKey stores a key hash for a tenant directly (creating the tenant).
func (f *fakeStore) addKey(tenantID, keyID, hash string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tenants[tenantID]; !ok {
		f.tenants[tenantID] = domain.Tenant{TenantID: tenantID, CreatedAt: f.clock()}
	}
	f.keys[hash] = domain.APIKey{KeyID: keyID, TenantID: tenantID, Hash: hash, CreatedAt: f.clock()}
}

func (f *fakeStore) setPanic(method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.panicIn = method
}

func (f *fakeStore) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWith = err
}

func (f *fakeStore) setConflictOnRotate(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conflictOnRotate = v
}

var errTableDown = errors.New("dynamodb: table unreachable (fake)")

// deadQuery names the query a filter makes, for the fake's cursors.
func deadQuery(flt domain.DeadFilter) string {
	return fmt.Sprint(flt.EndpointID, "\x00", flt.EventType, "\x00", flt.Since.UnixNano(), "\x00", flt.Until.UnixNano())
}

// ListDead lists a tenant's dead deliveries, oldest death first, filtered;
// the cursor is the last delivery id returned and the query it belongs to.
// Like the store, it refuses a filter whose times its keys cannot hold or
// whose until is before its since (ErrBadFilter), and a cursor of another
// query (ErrCursorMismatch).
func (f *fakeStore) ListDead(_ context.Context, tenantID string, flt domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	if err := f.enter("ListDead"); err != nil {
		return nil, "", err
	}
	defer f.mu.Unlock()
	for _, t := range []time.Time{flt.Since, flt.Until} {
		if !t.IsZero() && !store.KeyTime(t) {
			return nil, "", fmt.Errorf("time %s: %w", t, store.ErrBadFilter)
		}
	}
	if !flt.Since.IsZero() && !flt.Until.IsZero() && flt.Until.Before(flt.Since) {
		return nil, "", fmt.Errorf("until before since: %w", store.ErrBadFilter)
	}
	var all []domain.Delivery
	for _, d := range f.deliveries {
		if d.TenantID != tenantID || d.State != "dead" || d.DeadAt == nil {
			continue
		}
		if (flt.EndpointID != "" && d.EndpointID != flt.EndpointID) || (flt.EventType != "" && d.EventType != flt.EventType) ||
			(!flt.Since.IsZero() && d.DeadAt.Before(flt.Since)) || (!flt.Until.IsZero() && d.DeadAt.After(flt.Until)) {
			continue
		}
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].DeadAt.Before(*all[j].DeadAt) || (all[i].DeadAt.Equal(*all[j].DeadAt) && all[i].DeliveryID < all[j].DeliveryID)
	})
	start := 0
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		id, query, ok := strings.Cut(string(raw), "|")
		if !ok {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		if query != deadQuery(flt) {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
		}
		start = len(all)
		for i, d := range all {
			if d.DeliveryID == id {
				start = i + 1
			}
		}
	}
	end := min(len(all), start+limit)
	next := ""
	if end < len(all) {
		next = base64.RawURLEncoding.EncodeToString([]byte(all[end-1].DeliveryID + "|" + deadQuery(flt)))
	}
	return slices.Clone(all[start:end]), next, nil
}

// Job reads a replay job recorded by fakeReplays.
func (f *fakeStore) Job(_ context.Context, id string) (domain.ReplayJob, error) {
	if err := f.enter("Job"); err != nil {
		return domain.ReplayJob{}, err
	}
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return domain.ReplayJob{}, fmt.Errorf("replay job %s: %w", id, store.ErrNotFound)
	}
	return j, nil
}

// fakeReplays records started jobs in the fake store, and refuses a
// tenant's with store.ErrTooManyJobs while the store's full says so.
type fakeReplays struct{ f *fakeStore }

func (r fakeReplays) Start(_ context.Context, j *domain.ReplayJob) error {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	if r.f.full[j.TenantID] {
		return fmt.Errorf("tenant %s: %w", j.TenantID, store.ErrTooManyJobs)
	}
	j.CreatedAt, j.UpdatedAt = r.f.clock(), r.f.clock()
	r.f.jobs[j.JobID] = *j
	return nil
}

// DLQDepths counts each tenant's dead deliveries.
func (f *fakeStore) DLQDepths(_ context.Context) (map[string]int, error) {
	if err := f.enter("DLQDepths"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, d := range f.deliveries {
		if d.State == "dead" {
			out[d.TenantID]++
		}
	}
	return out, nil
}
