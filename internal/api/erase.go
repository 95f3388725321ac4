package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/store"
)

// Erasures marks a tenant as being erased: its keys stop authenticating at
// once, and the erase job (started by Server.Jobs) deletes the rest.
type Erasures interface {
	Tombstone(ctx context.Context, tenantID string) error
}

// eraseTenant starts the erasure of a tenant's data, or answers the one
// under way (or done): 202 with the job either way, 404 for no such tenant.
func (s *Server) eraseTenant(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	if s.Jobs == nil {
		return problem(http.StatusServiceUnavailable, "erasure is not configured on this deployment (it runs on the replay worker)")
	}
	tenant := r.PathValue("tenant_id")
	j, err := s.Store.Job(r.Context(), domain.ErasureJobID(tenant))
	if errors.Is(err, store.ErrNotFound) {
		j, err = s.startErasure(r.Context(), tenant)
	}
	if err != nil {
		return s.found(r, "tenant "+strconv.Quote(tenant), err)
	}
	w.Header().Set("Location", "/v1/admin/tenants/"+tenant+"/erasure")
	return s.writeJob(w, r, http.StatusAccepted, j)
}

// startErasure tombstones the tenant (store.ErrNotFound if it does not
// exist), then records its erase job and sets it running; a job another
// request started meanwhile is read and answered instead.
func (s *Server) startErasure(ctx context.Context, tenant string) (domain.Job, error) {
	if err := s.Store.Tombstone(ctx, tenant); err != nil {
		return domain.Job{}, err
	}
	j := erasure.NewJob(tenant)
	err := s.Jobs.Start(ctx, &j)
	if errors.Is(err, store.ErrConflict) {
		return s.Store.Job(ctx, j.JobID)
	}
	return j, err
}

// getErasure answers the erasure job of a tenant: what it erased so far, by
// kind, and whether it is done; 404 when none was asked for.
func (s *Server) getErasure(w http.ResponseWriter, r *http.Request, _ string) *Problem {
	tenant := r.PathValue("tenant_id")
	j, err := s.Store.Job(r.Context(), domain.ErasureJobID(tenant))
	if err != nil {
		return s.found(r, "erasure of tenant "+strconv.Quote(tenant), err)
	}
	return s.writeJob(w, r, http.StatusOK, j)
}
