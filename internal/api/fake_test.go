package api_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/storefake"
	"github.com/stretchr/testify/require"
)

// testStore is the real store on the fake table (storefake) with the
// failure modes these tests add: a method that panics, every method failing as an unreachable
// table does, and a rotation that loses its race.
type testStore struct {
	*storefake.Store

	mu sync.Mutex
	// panicIn makes the named method (or every method, "*") panic.
	panicIn string
	// failWith makes every method fail with this (infrastructure) error;
	// failIn, with failInErr, only that method.
	failWith  error
	failIn    string
	failInErr error
	// conflictOnRotate makes RotateSecret lose a race (ErrConflict).
	conflictOnRotate bool
	// full names the tenants whose jobs fakeJobs refuses.
	full map[string]bool
	// started are the ids of the jobs fakeJobs started.
	started []string
	// typeStatsReads counts the calls of EndpointTypeStats.
	typeStatsReads int
}

// panicText is what the fake panics with; it must never reach a client.
const panicText = "fake store exploded: s3cr3t-panic-detail"

func newFakeStore(now func() time.Time) *testStore {
	s := &testStore{Store: storefake.New()}
	s.Store.Now = now
	return s
}

// ports is the server's Store: this store.
func (f *testStore) ports() api.Store {
	return f
}

// enter applies the configured failure modes to a call of method.
func (f *testStore) enter(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panicIn == "*" || f.panicIn == method {
		panic(panicText)
	}
	if f.failWith != nil {
		return fmt.Errorf("%s: %w", method, f.failWith)
	}
	if f.failIn == method {
		return fmt.Errorf("%s: %w", method, f.failInErr)
	}
	return nil
}

// guarded runs call as method, after the failure modes.
func guarded[T any](f *testStore, method string, call func() (T, error)) (T, error) {
	if err := f.enter(method); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

func (f *testStore) TenantForKey(ctx context.Context, hash string) (string, error) {
	return guarded(f, "TenantForKey", func() (string, error) { return f.Store.TenantForKey(ctx, hash) })
}

func (f *testStore) CreateTenant(ctx context.Context, t domain.Tenant) (domain.Tenant, error) {
	return guarded(f, "CreateTenant", func() (domain.Tenant, error) { return f.Store.CreateTenant(ctx, t) })
}

func (f *testStore) PutAPIKey(ctx context.Context, k domain.APIKey) (domain.APIKey, error) {
	return guarded(f, "PutAPIKey", func() (domain.APIKey, error) { return f.Store.PutAPIKey(ctx, k) })
}

func (f *testStore) RevokeAPIKey(ctx context.Context, tenantID, keyID string) error {
	_, err := guarded(f, "RevokeAPIKey", func() (struct{}, error) { return struct{}{}, f.Store.RevokeAPIKey(ctx, tenantID, keyID) })
	return err
}

func (f *testStore) CreateEndpoint(ctx context.Context, e domain.Endpoint) (domain.Endpoint, error) {
	return guarded(f, "CreateEndpoint", func() (domain.Endpoint, error) { return f.Store.CreateEndpoint(ctx, e) })
}

func (f *testStore) Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error) {
	return guarded(f, "Endpoint", func() (domain.Endpoint, error) { return f.Store.Endpoint(ctx, tenantID, endpointID) })
}

func (f *testStore) ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error) {
	type page struct {
		es   []domain.Endpoint
		next string
	}
	p, err := guarded(f, "ListEndpoints", func() (page, error) {
		es, next, err := f.Store.ListEndpoints(ctx, tenantID, limit, cursor)
		return page{es, next}, err
	})
	return p.es, p.next, err
}

func (f *testStore) UpdateEndpoint(ctx context.Context, tenantID, endpointID string, c store.EndpointChange) (domain.Endpoint, error) {
	return guarded(f, "UpdateEndpoint", func() (domain.Endpoint, error) { return f.Store.UpdateEndpoint(ctx, tenantID, endpointID, c) })
}

func (f *testStore) DeleteEndpoint(ctx context.Context, tenantID, endpointID string) error {
	_, err := guarded(f, "DeleteEndpoint", func() (struct{}, error) { return struct{}{}, f.Store.DeleteEndpoint(ctx, tenantID, endpointID) })
	return err
}

func (f *testStore) RotateSecret(ctx context.Context, tenantID, endpointID string, r store.Rotation) (domain.Endpoint, error) {
	return guarded(f, "RotateSecret", func() (domain.Endpoint, error) {
		f.mu.Lock()
		conflict := f.conflictOnRotate
		f.mu.Unlock()
		if conflict { // another rotation won: nothing is written
			if _, err := f.Store.Endpoint(ctx, tenantID, endpointID); err != nil {
				return domain.Endpoint{}, err
			}
			return domain.Endpoint{}, fmt.Errorf("endpoint %s changed during rotation, try again: %w", endpointID, store.ErrConflict)
		}
		return f.Store.RotateSecret(ctx, tenantID, endpointID, r)
	})
}

func (f *testStore) SetEndpointEnabled(ctx context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error) {
	return guarded(f, "SetEndpointEnabled", func() (domain.Endpoint, error) { return f.Store.SetEndpointEnabled(ctx, tenantID, endpointID, enabled) })
}

func (f *testStore) Delivery(ctx context.Context, id string) (domain.Delivery, error) {
	return guarded(f, "Delivery", func() (domain.Delivery, error) { return f.Store.Delivery(ctx, id) })
}

func (f *testStore) DeliveriesOfEvents(ctx context.Context, tenantID string, events []domain.Event) (map[string][]domain.Delivery, error) {
	return guarded(f, "DeliveriesOfEvents", func() (map[string][]domain.Delivery, error) {
		return f.Store.DeliveriesOfEvents(ctx, tenantID, events)
	})
}

func (f *testStore) DeliveriesOfEvent(ctx context.Context, tenantID string, ev domain.Event) ([]domain.Delivery, error) {
	return guarded(f, "DeliveriesOfEvent", func() ([]domain.Delivery, error) { return f.Store.DeliveriesOfEvent(ctx, tenantID, ev) })
}

func (f *testStore) ListDead(ctx context.Context, tenantID string, flt domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	type page struct {
		ds   []domain.Delivery
		next string
	}
	p, err := guarded(f, "ListDead", func() (page, error) {
		ds, next, err := f.Store.ListDead(ctx, tenantID, flt, limit, cursor)
		return page{ds, next}, err
	})
	return p.ds, p.next, err
}

func (f *testStore) ListDeliveries(ctx context.Context, tenantID string, flt domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error) {
	type page struct {
		ds   []domain.Delivery
		next string
	}
	p, err := guarded(f, "ListDeliveries", func() (page, error) {
		ds, next, err := f.Store.ListDeliveries(ctx, tenantID, flt, limit, cursor)
		return page{ds, next}, err
	})
	return p.ds, p.next, err
}

func (f *testStore) Job(ctx context.Context, id string) (domain.Job, error) {
	return guarded(f, "Job", func() (domain.Job, error) { return f.Store.Job(ctx, id) })
}

func (f *testStore) DLQDepths(ctx context.Context) (map[string]int, error) {
	return guarded(f, "DLQDepths", func() (map[string]int, error) { return f.Store.DLQDepths(ctx) })
}

// Test helpers: direct access, bypassing the failure modes.

func (f *testStore) putDelivery(d domain.Delivery) { f.PutDelivery(d) }

func (f *testStore) delivery(id string) (domain.Delivery, bool) {
	d, err := f.Store.Delivery(context.Background(), id)
	return d, err == nil
}

func (f *testStore) endpoint(tenantID, endpointID string) (domain.Endpoint, bool) {
	e, err := f.Store.Endpoint(context.Background(), tenantID, endpointID)
	return e, err == nil
}

func (f *testStore) setEndpoint(e domain.Endpoint) {
	if err := f.PutEndpoint(context.Background(), e); err != nil {
		panic(err)
	}
}

func (f *testStore) endpointCount(tenantID string) int {
	es, _ := f.Store.Endpoints(context.Background(), tenantID)
	return len(es)
}

// job reads a job as stored (the zero job if there is none).
func (f *testStore) job(id string) domain.Job {
	j, _ := f.Store.Job(context.Background(), id)
	return j
}

// argsOf decodes job j's arguments as their kind's type A.
func argsOf[A domain.JobArgs](t *testing.T, j domain.Job) *A {
	t.Helper()
	a, err := jobs.ArgsOf[A](&j)
	require.NoError(t, err)
	return a
}

func (f *testStore) apiKeys() []domain.APIKey { return f.APIKeys() }

// addKey stores a key hash for a tenant directly (creating the tenant).
func (f *testStore) addKey(tenantID, keyID, hash string) {
	ctx := context.Background()
	if _, err := f.Store.Tenant(ctx, tenantID); err != nil {
		if _, err := f.Store.CreateTenant(ctx, domain.Tenant{TenantID: tenantID}); err != nil {
			panic(err)
		}
	}
	if _, err := f.Store.PutAPIKey(ctx, domain.APIKey{KeyID: keyID, TenantID: tenantID, Hash: hash}); err != nil {
		panic(err)
	}
}

func (f *testStore) setPanic(method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.panicIn = method
}

func (f *testStore) setFailIn(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failIn, f.failInErr = method, err
}

func (f *testStore) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failWith = err
}

func (f *testStore) setConflictOnRotate(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conflictOnRotate = v
}

var errTableDown = errors.New("dynamodb: table unreachable (fake)")

// fakeJobs records started jobs in the store, and refuses a tenant's
// with store.ErrTooManyJobs while the store's full says so.
type fakeJobs struct{ f *testStore }

func (r fakeJobs) Start(ctx context.Context, j *domain.Job) error {
	r.f.mu.Lock()
	full := r.f.full[j.TenantID]
	r.f.mu.Unlock()
	if full {
		return fmt.Errorf("tenant %s: %w", j.TenantID, store.ErrTooManyJobs)
	}
	if err := r.f.Store.SaveJob(ctx, j); err != nil {
		return err
	}
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	r.f.started = append(r.f.started, j.JobID)
	return nil
}

func (f *testStore) EndpointTypeStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error) {
	f.mu.Lock()
	f.typeStatsReads++
	f.mu.Unlock()
	return guarded(f, "EndpointTypeStats", func() ([]domain.TypeStatsBucket, error) {
		return f.Store.EndpointTypeStats(ctx, tenantID, endpointID, since, until)
	})
}
