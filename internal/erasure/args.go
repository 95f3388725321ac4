package erasure

import "github.com/hookline/hookline/internal/domain"

// Args are an erase job's arguments (domain.KindErase): the tenant erased
// and the erasure's progress, stored as the job record's "erasure".
type Args struct {
	Erasure domain.Erasure `dynamodbav:"erasure"`
}

// JobKind is domain.KindErase.
func (Args) JobKind() domain.JobKind { return domain.KindErase }

// NewJob is the erase job of a tenant, queued: an operator's job (no
// TenantID, so no tenant sees it or counts it among its jobs), its id
// domain.ErasureJobID's, one per tenant.
func NewJob(tenantID string) domain.Job {
	j := domain.NewJob("", &Args{Erasure: domain.Erasure{TenantID: tenantID, Erased: map[string]int{}}})
	j.JobID = domain.ErasureJobID(tenantID)
	return j
}
