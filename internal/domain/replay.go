package domain

import "time"

// DeadFilter selects a tenant's dead deliveries. Zero fields select all.
type DeadFilter struct {
	EndpointID string    `json:"endpoint_id,omitempty" dynamodbav:"endpoint_id,omitempty"`
	EventType  string    `json:"event_type,omitempty" dynamodbav:"event_type,omitempty"`
	Since      time.Time `json:"since,omitzero" dynamodbav:"since,omitempty"`
	Until      time.Time `json:"until,omitzero" dynamodbav:"until,omitempty"`
}

// Range selects a tenant's deliveries through its events: those whose
// event occurred from Since to Until (both inclusive), of EventType (""
// any), bound for EndpointID ("" any of the tenant's), in one of States
// (empty: every state). A KindSince job replays them; a KindCancel job
// cancels those of one endpoint that are pending.
type Range struct {
	EndpointID string          `json:"endpoint_id,omitempty" dynamodbav:"endpoint_id,omitempty"`
	EventType  string          `json:"event_type,omitempty" dynamodbav:"event_type,omitempty"`
	Since      time.Time       `json:"since" dynamodbav:"since"`
	Until      time.Time       `json:"until" dynamodbav:"until"`
	States     []DeliveryState `json:"states,omitempty" dynamodbav:"states,omitempty"`
}

// Selects reports whether r's states take state s.
func (r Range) Selects(s DeliveryState) bool {
	if len(r.States) == 0 {
		return true
	}
	for _, x := range r.States {
		if x == s {
			return true
		}
	}
	return false
}

// ReplayJob is a replay of dead deliveries, run in steps by the replay
// worker, its progress checkpointed here after every step.
type ReplayJob struct {
	JobID string `json:"id" dynamodbav:"job_id"`
	// TenantID owns the job; empty for an operator's redrive of the whole DLQ.
	TenantID string `json:"-" dynamodbav:"tenant_id,omitempty"`
	// Kind is what the job replays: ids, a filter, or the whole DLQ.
	Kind   JobKind    `json:"kind" dynamodbav:"kind"`
	IDs    []string   `json:"delivery_ids,omitempty" dynamodbav:"ids,omitempty"`
	Filter DeadFilter `json:"filter,omitzero" dynamodbav:"filter"`
	// Status is queued, running or completed.
	Status   JobStatus `json:"status" dynamodbav:"status"`
	Matched  int       `json:"matched" dynamodbav:"matched"`
	Replayed int       `json:"replayed" dynamodbav:"replayed"`
	Failed   int       `json:"failed" dynamodbav:"failed"`
	// Skipped counts deliveries left alone, by reason; SkippedIDs names the
	// first of them.
	Skipped    map[string]int    `json:"skipped" dynamodbav:"skipped"`
	SkippedIDs map[string]string `json:"skipped_ids,omitempty" dynamodbav:"skipped_ids,omitempty"`
	// Cursor is where the next step starts; Pending the ids of the step in
	// progress, processed again if the worker stopped inside it.
	Cursor  string   `json:"-" dynamodbav:"cursor,omitempty"`
	Pending []string `json:"-" dynamodbav:"pending,omitempty"`
	// Steps counts the steps run; Version guards against two workers.
	Steps       int        `json:"steps" dynamodbav:"steps"`
	Version     int        `json:"-" dynamodbav:"version"`
	CreatedAt   time.Time  `json:"created_at" dynamodbav:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at" dynamodbav:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty" dynamodbav:"completed_at,omitempty"`
	// Erasure is an erase job's progress (KindErase only).
	Erasure *Erasure `json:"erasure,omitempty" dynamodbav:"erasure,omitempty"`
	// Range is what a KindSince or KindCancel job selects.
	Range *Range `json:"range,omitempty" dynamodbav:"range,omitempty"`
	// NotRebuilt counts the deliveries a KindSince job could not send
	// again: their event's payload is past the retention, or its outbox
	// item is gone (by reason in Skipped: SkipPayloadExpired,
	// SkipEventGone).
	NotRebuilt int `json:"not_rebuilt,omitempty" dynamodbav:"not_rebuilt,omitempty"`
	// Cancelled counts the deliveries a KindCancel job cancelled;
	// CancelledIDs names the first MaxCancelledIDs of them.
	Cancelled    int      `json:"cancelled,omitempty" dynamodbav:"cancelled,omitempty"`
	CancelledIDs []string `json:"cancelled_ids,omitempty" dynamodbav:"cancelled_ids,omitempty"`
	// DLQWaits counts a redrive's steps in a row, with nothing moved, that
	// found DLQ messages hidden by someone else and waited for them
	// (KindRedrive).
	DLQWaits int `json:"-" dynamodbav:"dlq_waits,omitempty"`
}

// MaxCancelledIDs bounds the ids a cancel job's record names (its count
// is kept whole): a job record stays far within DynamoDB's item size.
const MaxCancelledIDs = 100

// Erasure is the progress of the erasure of a tenant's data (a KindErase
// job): the phase it is in, and how many items of each kind it deleted.
type Erasure struct {
	// TenantID is the tenant erased.
	TenantID string `json:"tenant_id" dynamodbav:"tenant_id"`
	// Phase is the kind being erased now (one of ErasePhases); empty once
	// the job completed.
	Phase string `json:"phase,omitempty" dynamodbav:"phase,omitempty"`
	// Endpoints are the ids of the tenant's endpoints, read when the job
	// began: the ids of its deliveries derive from them.
	Endpoints []string `json:"-" dynamodbav:"endpoints,omitempty"`
	// Erased counts the items deleted, by kind.
	Erased map[string]int `json:"erased" dynamodbav:"erased"`
	// DLQWaits counts the steps whose DLQ phase found messages hidden by
	// someone else (a sweep, a redrive) and waited for them.
	DLQWaits int `json:"-" dynamodbav:"dlq_waits,omitempty"`
	// DLQLeftToSweep is how many DLQ messages were still hidden by someone
	// else when the DLQ phase stopped waiting: any of the tenant's among
	// them are deleted by the DLQ sweep, which drops a tombstoned tenant's.
	DLQLeftToSweep int `json:"dlq_left_to_sweep,omitempty" dynamodbav:"dlq_left_to_sweep,omitempty"`
}

// ErasePhases are the phases of an erasure, in order: deliveries first
// (found through the tenant's outbox items and endpoints, while both are
// still there); the DLQ's messages before the dead deliveries (a sweep that
// finds a message of the tenant there may record its death again); the
// tenant's item last.
var ErasePhases = []string{
	EraseAPIKeys, ErasePortalLinks, EraseDeliveries, EraseDLQ, EraseDeadDeliveries, EraseRejections,
	EraseReplayJobs, EraseDeadWindows, EraseStats, EraseTenant,
}

// The kinds an erasure deletes (the keys of Erasure.Erased).
const (
	EraseAPIKeys        = "api_keys"
	ErasePortalLinks    = "portal_links"
	EraseDeliveries     = "deliveries"
	EraseOutboxItems    = "outbox_items"
	EraseDeadDeliveries = "dead_deliveries"
	EraseDLQ            = "dlq_messages"
	EraseRejections     = "rejections"
	EraseReplayJobs     = "replay_jobs"
	EraseDeadWindows    = "dead_windows"
	EraseStats          = "stats"
	EraseTenant         = "tenant"
	EraseEndpoints      = "endpoints"
)

// ErasureJobID is the id of the erase job of a tenant: one per tenant, so
// that asking again finds the job under way.
func ErasureJobID(tenantID string) string { return "erase_" + tenantID }

// NewErasureJob is the erase job of a tenant, queued: an operator's job
// (no TenantID, so no tenant sees it or counts it among its replays).
func NewErasureJob(tenantID string) ReplayJob {
	return ReplayJob{JobID: ErasureJobID(tenantID), Kind: KindErase, Status: StatusQueued, Erasure: &Erasure{TenantID: tenantID, Erased: map[string]int{}}}
}

// JobKind is what a replay job replays.
type JobKind string

// Job kinds.
const (
	// KindIDs replays the tenant's dead deliveries named by id.
	KindIDs JobKind = "ids"
	// KindFilter replays the tenant's dead deliveries its DeadFilter selects.
	KindFilter JobKind = "filter"
	// KindRedrive is the operator's redrive of the whole dead-letter queue.
	KindRedrive JobKind = "redrive"
	// KindErase is the operator's erasure of a tenant's data (Erasure).
	KindErase JobKind = "erase"
	// KindSince replays the tenant's deliveries, in any state, that its
	// Range selects: delivered, pending and cancelled ones rebuilt from
	// their event's outbox item, dead ones as KindFilter replays them.
	KindSince JobKind = "since"
	// KindCancel cancels the pending deliveries of one of the tenant's
	// endpoints that its Range selects.
	KindCancel JobKind = "cancel"
)

// JobKinds is every kind of job, for the runner's table to be checked
// against.
func JobKinds() []JobKind {
	return []JobKind{KindIDs, KindFilter, KindRedrive, KindErase, KindSince, KindCancel}
}

// JobStatus is where a replay job is.
type JobStatus string

// Job statuses.
const (
	// StatusQueued: created, no step run yet.
	StatusQueued JobStatus = "queued"
	// StatusRunning: a step has run and more remain.
	StatusRunning JobStatus = "running"
	// StatusCompleted: done; nothing more is replayed.
	StatusCompleted JobStatus = "completed"
)

// The reasons a job leaves a delivery (or a DLQ message) alone, counted in
// ReplayJob.Skipped (the API's "skipped" of a job, docs/openapi.yaml).
const (
	// SkipNotFound: no such delivery, or another tenant's.
	SkipNotFound = "not_found"
	// SkipNotDead: the delivery is not dead (delivered, or in flight).
	SkipNotDead = "not_dead"
	// SkipReplayInProgress: another job holds a fresh claim on it.
	SkipReplayInProgress = "replay_in_progress"
	// SkipNoMessage: its record holds no message to send again.
	SkipNoMessage = "no_message"
	// SkipEndpointDisabled: its endpoint is disabled or gone.
	SkipEndpointDisabled = "endpoint_disabled"
	// SkipMalformedMessage: a DLQ message that is not a delivery message
	// (the operator's redrive).
	SkipMalformedMessage = "malformed_message"
	// SkipStaleCopy: a DLQ message whose delivery was delivered or
	// replayed since (the operator's redrive deletes it).
	SkipStaleCopy = "stale_copy"
	// SkipHiddenElsewhere: DLQ messages someone else still held hidden
	// when the operator's redrive stopped waiting for them (counted, not
	// named: the redrive cannot see them); a redrive started later moves
	// them.
	SkipHiddenElsewhere = "hidden_elsewhere"
	// SkipPayloadExpired: the event's payload is past the payload
	// retention, so its delivery cannot be rebuilt (KindSince).
	SkipPayloadExpired = "payload_expired"
	// SkipEventGone: the event's outbox item is gone (expired by its TTL,
	// or never listed), so its delivery cannot be rebuilt (KindSince).
	SkipEventGone = "event_gone"
	// SkipNotSelected: the delivery's state is not one the job selects.
	SkipNotSelected = "state_not_selected"
	// SkipNotPending: a cancel found the delivery delivered, dead or
	// cancelled already (an attempt that ended first wins).
	SkipNotPending = "not_pending"
	// SkipNotRouted: a cancel found no record of the delivery and cannot
	// tell that its event went to the endpoint (the endpoint does not take
	// its type, or its payload filter does not match, or the event is gone).
	SkipNotRouted = "not_routed"
)
