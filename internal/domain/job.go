package domain

import "time"

// Job is a background job of one of the JobKinds: a replay (of dead
// deliveries by ids or filter, or of deliveries since a time), a cancel of
// pending deliveries, the operator's redrive of the DLQ or a tenant's
// erasure. The replay function's worker runs it in steps, its progress
// checkpointed here after every step.
type Job struct {
	JobID string `json:"id" dynamodbav:"job_id"`
	// TenantID owns the job; empty for an operator's job (the redrive of
	// the whole DLQ, an erasure).
	TenantID string `json:"-" dynamodbav:"tenant_id,omitempty"`
	// Kind is what the job does (JobKinds); Args its own arguments and
	// progress.
	Kind JobKind `json:"kind" dynamodbav:"kind"`
	// Args is what a job of its Kind is given and has done so far: a type
	// of the package that runs the kind (replay.IDs, replay.Filter,
	// replay.Since, cancel.Args, erasure.Args, dlq.RedriveArgs), stored in
	// the record beside the fields every job has. A record read from the
	// store holds them as StoredArgs until jobs.ArgsOf decodes them; nil is
	// a kind's zero arguments.
	Args JobArgs `json:"-" dynamodbav:"-"`
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
}

// NewJob is a queued job of args' kind for tenantID ("" for an
// operator's job), its id given by the starter.
func NewJob(tenantID string, args JobArgs) Job {
	return Job{TenantID: tenantID, Kind: args.JobKind(), Args: args, Status: StatusQueued}
}

// JobArgs are one kind of job's own arguments and progress (River's
// JobArgs is the model): a struct of the package that runs the kind,
// whose dynamodbav names are attributes of the job's record and must not
// be any of Job's own.
type JobArgs interface {
	// JobKind is the kind of job the arguments belong to.
	JobKind() JobKind
}

// StoredArgs are a job's arguments as the store read them, not yet decoded
// into their kind's type (jobs.ArgsOf decodes them); written back as read
// when nothing decoded them.
type StoredArgs interface {
	JobArgs
	// DecodeArgs decodes the arguments into into, a pointer to their
	// kind's type.
	DecodeArgs(into any) error
}

// JobKind is what a job does.
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

// JobStatus is where a job is.
type JobStatus string

// Job statuses.
const (
	// StatusQueued: created, no step run yet.
	StatusQueued JobStatus = "queued"
	// StatusRunning: a step has run and more remain.
	StatusRunning JobStatus = "running"
	// StatusCompleted: done; no step remains.
	StatusCompleted JobStatus = "completed"
)

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

// The reasons a job leaves a delivery (or a DLQ message) alone, counted in
// Job.Skipped (the API's "skipped" of a job, docs/openapi.yaml).
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
