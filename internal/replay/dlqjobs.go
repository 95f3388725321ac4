package replay

import (
	"context"
	"time"

	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
)

// redriveStep runs one step of the operator's redrive (dlq.Redriver), then
// completes the job or sends its next step when its paced sends are due.
func (w *Worker) redriveStep(ctx context.Context, j *domain.ReplayJob) error {
	c := w.cfg()
	r := dlq.Redriver{Store: w.Store, DLQ: w.dlq(), Queue: w.Queue, DeliveryQueueURL: w.DeliveryQueueURL,
		StepSends: c.StepSends, Stale: c.Stale, Delay: w.delay, Metrics: w.Metrics, Now: w.Now}
	done, sent, err := r.Step(ctx, j)
	if err != nil {
		return err
	}
	if done {
		return w.complete(ctx, j)
	}
	return w.enqueueJob(ctx, j, time.Duration(float64(sent)/c.Rate*float64(time.Second)))
}

// Sweep sweeps the DLQ once (dlq.Sweeper.Sweep) and returns how many
// messages it deleted and kept.
func (w *Worker) Sweep(ctx context.Context) (deleted, kept int, err error) {
	return w.sweeper().Sweep(ctx)
}

// coalescedSweep sweeps the DLQ unless another sweep began within SweepGap.
func (w *Worker) coalescedSweep(ctx context.Context) error {
	return w.sweeper().Coalesced(ctx, w.cfg().SweepGap)
}

func (w *Worker) sweeper() *dlq.Sweeper {
	return &dlq.Sweeper{Store: w.Store, DLQ: w.dlq(), Deaths: w.noteMissedDeath, Now: w.Now, Log: w.Log}
}
