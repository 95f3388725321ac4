package background

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hookline/hookline/internal/cancel"
	"github.com/hookline/hookline/internal/dlq"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/notify"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/store"
)

// Store is what the background jobs need of the state table: the ports of
// each job's package, composed (a *store.Store; on a fake table in the
// tests, storefake). The wiring passes the store once.
type Store interface {
	jobs.Store
	replay.Store
	dlq.RedriveStore
	dlq.SweepStore
	dlq.Counters
	dlq.Reconciler
	erasure.Erasures
	cancel.Store
	opevent.SummaryWindows
	opevent.DeathWindows
	notify.Store
}

var _ Store = (*store.Store)(nil)

// Queue is what the background jobs need of SQS: sending a message, sending
// a batch, and reading the DLQ (an *sqs.Client).
type Queue interface {
	jobs.Sender
	message.BatchSender
	dlq.SQS
}

// routes is every kind of message but a job's step, and the package that
// handles it: the one table a new kind is added to.
func (w *Worker) routes() jobs.Routes {
	return jobs.Routes{
		jobs.KindSweep: func(ctx context.Context, m jobs.Message) error {
			if m.TenantID != "" {
				// After a job of the tenant: its messages read, whatever
				// sweep ran just before.
				_, _, err := w.sweeper().Sweep(ctx, m.TenantID)
				return err
			}
			// No reconciliation: KindSweepReconcile's.
			return w.sweeper().Periodic(ctx, w.cfg().SweepGap)
		},
		jobs.KindSweepReconcile: func(ctx context.Context, _ jobs.Message) error {
			// The schedule's: the arrivals moved, the whole DLQ swept once
			// a day, and the counters reconciled even when that pass is
			// coalesced away.
			return errors.Join(w.sweeper().Periodic(ctx, dlq.FullPassGap), w.ReconcileDepths(ctx))
		},
		jobs.KindRecover: func(ctx context.Context, _ jobs.Message) error { _, err := w.Recover(ctx); return err },
		jobs.KindGauges:  func(ctx context.Context, m jobs.Message) error { return w.PublishDepths(ctx, m.TenantID) },
		jobs.KindDeadNotice: func(ctx context.Context, m jobs.Message) error {
			var n opevent.DeadNotice
			if len(m.DeadNotice) == 0 || string(m.DeadNotice) == "null" {
				w.Log.ErrorContext(ctx, "delivery.dead notice without its window dropped")
				return nil
			}
			if err := json.Unmarshal(m.DeadNotice, &n); err != nil {
				w.Log.ErrorContext(ctx, "delivery.dead notice whose window cannot be read dropped", "error", err.Error())
				return nil
			}
			return w.SummarizeDeaths(ctx, n)
		},
		jobs.KindNotice: func(ctx context.Context, m jobs.Message) error {
			if w.Notices == nil {
				return nil // no SES identity: nothing is e-mailed
			}
			var ev notify.BusEvent
			if err := json.Unmarshal(m.BusEvent, &ev); err != nil {
				w.Log.ErrorContext(ctx, "an operator bus event that cannot be read dropped", "error", err.Error())
				return nil
			}
			return w.Notices.Notice(ctx, ev)
		},
	}
}

// jobSteps is every kind of job, and the package whose step runs it: the
// one table a new kind of job is added to.
func (w *Worker) jobSteps() jobs.Jobs {
	rp := w.replayer()
	return jobs.Jobs{
		domain.KindIDs:     rp.Step,
		domain.KindFilter:  rp.Step,
		domain.KindRedrive: w.redriveStep,
		domain.KindErase:   w.eraseStep,
		domain.KindSince:   rp.Step,
		domain.KindCancel:  w.cancelStep,
	}
}

func (w *Worker) runner() *jobs.Runner {
	return &jobs.Runner{Starter: w.starter(), Routes: w.routes(), Jobs: w.jobSteps(), Completed: w.completed, Log: w.Log}
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// cfg is the worker's Config with its defaults filled in.
func (w *Worker) cfg() jobs.Config { return w.Config.WithDefaults() }

// starter is the worker's side of the job records, slots and queues.
func (w *Worker) starter() *jobs.Starter {
	return &jobs.Starter{Store: w.Store, Queue: w.Queue, JobsQueueURL: w.JobsQueueURL, OpsQueueURL: w.OpsQueueURL, MaxOpenJobs: w.MaxOpenJobs, Now: w.Now}
}

// completed brings the SQS DLQ in line once a job's replayed messages are
// in flight, and once more a little later: a sweep only sees the messages
// nobody else (another sweep, a redrive, a reader) holds hidden at that
// moment. However many jobs complete, the sweeps run at most once per
// SweepGap.
func (w *Worker) completed(ctx context.Context, j *domain.Job) error {
	sweep := jobs.Message{Kind: jobs.KindSweep, TenantID: j.TenantID}
	if err := w.Enqueue(ctx, sweep, 5*time.Second); err != nil {
		return err
	}
	return w.Enqueue(ctx, sweep, 90*time.Second)
}

func (w *Worker) replayer() *replay.Replayer {
	return &replay.Replayer{Store: w.Store, Queue: w.Queue, DeliveryQueueURL: w.DeliveryQueueURL, Config: w.Config,
		Now: w.Now, Rand: w.Rand, Metrics: w.Metrics, Tracer: w.Tracer,
		MessageLog: w.MessageLog, PayloadRetention: w.PayloadRetention}
}

// cancelStep runs one step of a tenant's cancel of an endpoint's pending
// deliveries (cancel.Canceller).
func (w *Worker) cancelStep(ctx context.Context, j *domain.Job) (bool, time.Duration, error) {
	c := cancel.Canceller{Store: w.Store, MessageLog: w.MessageLog, Now: w.Now}
	return c.Step(ctx, j)
}

// redriveStep runs one step of the operator's redrive (dlq.Redriver); the
// next step starts when its paced sends are due.
func (w *Worker) redriveStep(ctx context.Context, j *domain.Job) (bool, time.Duration, error) {
	c := w.cfg()
	start := w.now()
	r := dlq.Redriver{Store: w.Store, DLQ: w.dlq(), Queue: w.Queue, DeliveryQueueURL: w.DeliveryQueueURL,
		StepSends: c.StepSends, Stale: c.Stale, Delay: func(n int) int32 { return c.Delay(n, w.now().Sub(start), w.Rand) }, Metrics: w.Metrics, Now: w.Now}
	done, sent, wait, err := r.Step(ctx, j)
	return done, max(c.Next(sent, w.now().Sub(start)), wait), err
}

// eraseStep runs one step of a tenant's erasure (erasure.Eraser).
func (w *Worker) eraseStep(ctx context.Context, j *domain.Job) (bool, time.Duration, error) {
	e := erasure.Eraser{Store: w.Store, Erasures: w.Store, Outbox: w.Outbox, DLQ: w.dlq(), Now: w.Now}
	return e.Step(ctx, j)
}

// dlq is the delivery DLQ.
func (w *Worker) dlq() dlq.Queue { return dlq.Queue{SQS: w.Queue, URL: w.DLQURL} }

func (w *Worker) sweeper() *dlq.Sweeper {
	return &dlq.Sweeper{Store: w.Store, DLQ: w.dlq(), Arrivals: dlq.Queue{SQS: w.Queue, URL: w.ArrivalsURL}, Send: w.Queue, Deaths: w.noteMissedDeath, Now: w.Now, Log: w.Log}
}

func (w *Worker) depths() *dlq.Depths {
	return &dlq.Depths{Counters: w.Store, Reconciler: w.Store, Metrics: w.Metrics, Log: w.Log}
}

// noteMissedDeath adds a death the sweep recorded (its attempt did not) to
// its endpoint's delivery.dead window, as deliver does for the deaths it
// records. A failure is logged: the death is recorded all the same.
func (w *Worker) noteMissedDeath(ctx context.Context, d domain.Delivery) {
	if w.OpEvents == nil {
		return
	}
	death := domain.OpDeath{DeliveryID: d.DeliveryID, EventID: d.EventID, EventType: d.EventType, Reason: domain.ReasonAttemptsExhausted, Attempts: d.Attempts}
	err := opevent.NoteDeath(ctx, w.Store, w.Queue, w.starter().OpsQueue(), w.cfg().DeadWindow, w.now(), d.TenantID, d.EndpointID, death)
	if err != nil {
		w.Log.ErrorContext(ctx, "cannot note a missed death for delivery.dead", "delivery_id", d.DeliveryID, "error", err.Error())
	}
}
