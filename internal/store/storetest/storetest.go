// Package storetest is the store's conformance suite: one set of
// assertions, run against the store on the fake table (package storefake,
// which the consumers' unit tests use) by its unit tests and against the
// store on the local cloud's table by the e2e tests, so that the fake
// DynamoDB behaves as the table does. A behaviour either one gains is added
// here, and both must pass.
//
// The suite writes under fresh tenant, event and job ids each run, so it
// can share a table with other tests; the clock it gives the store stays
// within minutes of the wall clock (records expire by TTL on a real
// table).
package storetest

import (
	"context"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// Store is every store method a consumer's port names: what the suite
// holds both implementations to.
type Store interface {
	CreateTenant(ctx context.Context, t domain.Tenant) (domain.Tenant, error)
	Tenant(ctx context.Context, id string) (domain.Tenant, error)
	PutAPIKey(ctx context.Context, k domain.APIKey) (domain.APIKey, error)
	TenantForKey(ctx context.Context, hash string) (string, error)
	RevokeAPIKey(ctx context.Context, tenantID, keyID string) error
	PutPortalLink(ctx context.Context, l domain.PortalLink) (domain.PortalLink, error)
	PortalLink(ctx context.Context, hash string) (domain.PortalLink, error)
	RevokePortalLink(ctx context.Context, tenantID, linkID string) error

	PutEndpoint(ctx context.Context, e domain.Endpoint) error
	CreateEndpoint(ctx context.Context, e domain.Endpoint) (domain.Endpoint, error)
	Endpoint(ctx context.Context, tenantID, endpointID string) (domain.Endpoint, error)
	Endpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, error)
	CountEndpoints(ctx context.Context, tenantID string, upTo int) (int, error)
	ListEndpoints(ctx context.Context, tenantID string, limit int, cursor string) ([]domain.Endpoint, string, error)
	UpdateEndpoint(ctx context.Context, tenantID, endpointID string, c store.EndpointChange) (domain.Endpoint, error)
	DeleteEndpoint(ctx context.Context, tenantID, endpointID string) error
	RotateSecret(ctx context.Context, tenantID, endpointID string, r store.Rotation) (domain.Endpoint, error)
	SetEndpointEnabled(ctx context.Context, tenantID, endpointID string, enabled bool) (domain.Endpoint, error)
	DisableEndpoint(ctx context.Context, tenantID, endpointID string, reason domain.DisableReason) (bool, error)
	RecordEndpointHealth(ctx context.Context, tenantID, endpointID string, reset bool, failures int, th store.HealthThresholds) (store.HealthEffect, error)
	MarkEndpointDegraded(ctx context.Context, tenantID, endpointID string, degraded bool) (store.DegradedEffect, error)
	AddDeath(ctx context.Context, tenantID, endpointID string, start, end time.Time, d domain.OpDeath) (int, error)
	DeadWindow(ctx context.Context, tenantID, endpointID string, start time.Time) (domain.OpDeliveryDeadEvent, error)
	TakeSlots(ctx context.Context, tenantID, endpointID string, window time.Time, n, limit int) (store.Slots, error)
	TakeAPIRequest(ctx context.Context, tenantID string, at time.Time, limit int) (bool, error)
	TakeGate(ctx context.Context, tenantID, endpointID string, a store.GateAsk) (store.Hold, bool, error)
	ReleaseGate(ctx context.Context, tenantID, endpointID string, h store.Hold, fastUntil *time.Time) error
	MarkGate(ctx context.Context, tenantID, endpointID string, fastUntil *time.Time) error

	Delivery(ctx context.Context, id string) (domain.Delivery, error)
	DeliveriesOfEvent(ctx context.Context, tenantID string, ev domain.Event) ([]domain.Delivery, error)
	DeliveriesOfEvents(ctx context.Context, tenantID string, events []domain.Event) (map[string][]domain.Delivery, error)
	Load(ctx context.Context, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	LoadWith(ctx context.Context, opts store.LoadOptions, deliveryIDs []string, endpoints []store.EndpointRef) (store.Snapshot, error)
	RecordAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
	RecordResendAttempt(ctx context.Context, d domain.Delivery, a domain.Attempt) error
	RecordFirstAttempts(ctx context.Context, firsts []store.FirstAttempt) (notWritten []int, err error)
	RecordAttemptIfUnchanged(ctx context.Context, d domain.Delivery, a domain.Attempt, o domain.Outcome) error
	MarkDeadBeforeLastAttempt(ctx context.Context, d domain.Delivery, reason domain.DeadReason, message string, at time.Time) error
	CancelDelivery(ctx context.Context, d domain.Delivery, job string, at time.Time) (domain.Delivery, bool, error)

	PutRejection(ctx context.Context, r domain.Rejection) error
	Rejection(ctx context.Context, key string) (domain.Rejection, error)

	ListDead(ctx context.Context, tenantID string, f domain.DeadFilter, limit int, cursor string) ([]domain.Delivery, string, error)
	ListDeliveries(ctx context.Context, tenantID string, f domain.DeliveryFilter, limit int, cursor string) ([]domain.Delivery, string, error)
	ClaimForReplay(ctx context.Context, reads []domain.Delivery, tenantID, job string, stale time.Duration) ([]domain.Delivery, []error)
	ReleaseReplay(ctx context.Context, ids []string, job string) error
	DLQDepths(ctx context.Context) (map[string]int, error)
	ReconcileDLQDepth(ctx context.Context, tenantID string) (store.DepthCheck, error)

	Job(ctx context.Context, id string) (domain.Job, error)
	SaveJob(ctx context.Context, j *domain.Job) error
	CreateJob(ctx context.Context, j *domain.Job, limit int) error
	TenantJobs(ctx context.Context, tenantID string) ([]string, error)
	ReleaseJob(ctx context.Context, tenantID, jobID string) error
	IdleJobs(ctx context.Context, before time.Time, limit int) ([]domain.Job, error)
	ClaimSweep(ctx context.Context, gap time.Duration) (bool, error)

	AddEndpointStats(ctx context.Context, tenantID, endpointID string, hour time.Time, st domain.AttemptStats) error
	EndpointStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.StatsBucket, error)
	LastAttempts(ctx context.Context, tenantID, endpointID string) (*time.Time, *domain.AttemptFailure, error)
	AddEndpointTypeStats(ctx context.Context, tenantID, endpointID, eventType string, hour time.Time, st domain.AttemptStats) error
	EndpointTypeStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error)

	Tombstone(ctx context.Context, tenantID string) error
	Erased(ctx context.Context, tenantID string) (bool, error)
	TenantEndpoints(ctx context.Context, tenantID string) ([]domain.Endpoint, bool, error)
	EraseIndexed(ctx context.Context, tenantID, kind string, limit int) (int, bool, error)
	EraseDeliveries(ctx context.Context, tenantID string, ids []string) (int, error)
	EraseStats(ctx context.Context, tenantID, endpointID string, limit int) (int, bool, error)
	EraseTenantItems(ctx context.Context, tenantID string, limit int) (map[string]int, bool, error)
}

var _ Store = (*store.Store)(nil)
