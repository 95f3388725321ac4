package domain

// Erasure is the progress of the erasure of a tenant's data (a KindErase
// job's erasure.Args): the phase it is in, and how many items of each kind it deleted.
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
	EraseJobs, EraseDeadWindows, EraseStats, EraseTenant,
}

// The kinds an erasure deletes (the keys of Erasure.Erased). EraseJobs, a
// tenant's jobs of every kind, keeps its earlier value "replay_jobs" (from
// when every job was a replay): it is the phase and the key of Erased in
// stored erase jobs and in the API's answers.
const (
	EraseAPIKeys        = "api_keys"
	ErasePortalLinks    = "portal_links"
	EraseDeliveries     = "deliveries"
	EraseOutboxItems    = "outbox_items"
	EraseDeadDeliveries = "dead_deliveries"
	EraseDLQ            = "dlq_messages"
	EraseRejections     = "rejections"
	EraseJobs           = "replay_jobs"
	EraseDeadWindows    = "dead_windows"
	EraseStats          = "stats"
	EraseTenant         = "tenant"
	EraseEndpoints      = "endpoints"
)

// ErasureJobID is the id of the erase job of a tenant: one per tenant, so
// that asking again finds the job under way.
func ErasureJobID(tenantID string) string { return "erase_" + tenantID }
