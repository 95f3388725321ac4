package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
)

// maxRecoveries bounds the jobs one Recover sends again.
const maxRecoveries = 100

// Recover sends again the message of every job not completed and not saved
// for longer than jobIdle (Config.JobIdle): its message was lost (a purged queue, a message
// that expired), else a step would have saved it. The job is saved first,
// which makes one recovery win against another and leaves it alone for
// another jobIdle; a job that resumes from a recovered message and from its
// original one at once is safe, as any redelivered job message is. It
// returns how many it sent again.
func (s *Starter) Recover(ctx context.Context, jobIdle time.Duration, log *slog.Logger) (int, error) {
	idle, err := s.Store.IdleJobs(ctx, s.now().Add(-jobIdle), maxRecoveries)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range idle {
		if j.Status == domain.StatusCompleted || j.CompletedAt != nil {
			continue // the index lags a completion
		}
		err := s.Store.SaveJob(ctx, &j)
		if errors.Is(err, store.ErrConflict) {
			continue // saved since it was listed: it is alive
		}
		if err != nil {
			return n, err
		}
		if err := s.EnqueueJob(ctx, &j, 0); err != nil {
			return n, err
		}
		n++
		log.WarnContext(ctx, "job idle too long: its message was lost, sent again", "job_id", j.JobID, "tenant_id", j.TenantID,
			"kind", j.Kind, "status", j.Status)
	}
	return n, nil
}
