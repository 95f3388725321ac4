package background

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/erasure"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/notify"
	"github.com/hookline/hookline/internal/opevent"
	"github.com/hookline/hookline/internal/replay"
	"github.com/hookline/hookline/internal/trace"
)

// Worker is the replay function's handler: Handle runs each message of a
// batch through the route table (routes.go).
type Worker struct {
	Store Store
	Queue Queue
	// DeliveryQueueURL receives replayed messages; DLQURL is swept and, for
	// a redrive, drained; ArrivalsURL is the delivery queues' redrive
	// target, whose messages the scheduled sweep moves to the DLQ (empty:
	// none); JobsQueueURL carries the messages of tenants' jobs.
	DeliveryQueueURL, DLQURL, ArrivalsURL, JobsQueueURL string
	// OpsQueueURL carries the operator's jobs and the sweeps, gauges, job
	// recoveries and delivery.dead notices: a queue of its own, worked with
	// its own concurrency, so that no tenant's jobs can hold them up.
	// Empty: JobsQueueURL.
	OpsQueueURL string
	// Config is how jobs run (each field's default in jobs.Config).
	jobs.Config
	// Now is the clock; Rand draws jitter in [0, 1). Defaults: time.Now, none.
	Now  func() time.Time
	Rand func() float64
	Log  *slog.Logger
	// Metrics receives Replayed, the TenantDLQDepth gauges and
	// DLQDepthCorrections (EMF). Nil: none.
	Metrics *metrics.Writer
	// Tracer emits the replay jobs' spans (replay.Replayer.Tracer). Nil:
	// none.
	Tracer *trace.Tracer
	// OpEvents writes the delivery.dead summaries into the outbox. Nil: the
	// notices are dropped, and the sweep's missed deaths not noted.
	OpEvents opevent.Emitter
	// Outbox lists and deletes the outbox items of the tenants erased (an
	// *erasure.OutboxTable). Nil: an erase job's step fails.
	Outbox erasure.Outbox
	// MessageLog reads the message log (a *messagelog.Reader): the events
	// a replay since a time and a cancel select, the outbox items a replay
	// rebuilds deliveries from. Nil: the steps of those jobs fail.
	MessageLog replay.MessageLog
	// Notices e-mails the operational events the stack's rule sends from
	// the operator's bus to the operations queue. Nil: no SES identity,
	// they are dropped.
	Notices *notify.Notifier
	// PayloadRetention is how long after its occurred_at an event's
	// payload may be sent again (replay.Replayer.PayloadRetention).
	PayloadRetention time.Duration
}

// Handle runs each message of the batch through the route table
// (jobs.Runner.Handle).
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.runner().Handle(ctx, ev)
}

// Step runs one step of job jobID (jobs.Runner.Step).
func (w *Worker) Step(ctx context.Context, jobID string) error {
	return w.runner().Step(ctx, jobID)
}

// Start records a new job and sets it running (jobs.Starter.Start).
func (w *Worker) Start(ctx context.Context, j *domain.Job) error {
	return w.starter().Start(ctx, j)
}

// Enqueue sends a message after delay (jobs.Starter.Enqueue).
func (w *Worker) Enqueue(ctx context.Context, msg jobs.Message, delay time.Duration) error {
	return w.starter().Enqueue(ctx, msg, delay)
}

// Recover sends again the jobs idle longer than JobIdle
// (jobs.Starter.Recover) and returns how many.
func (w *Worker) Recover(ctx context.Context) (int, error) {
	return w.starter().Recover(ctx, w.cfg().JobIdle, w.Log)
}

// Sweep sweeps the DLQ once (dlq.Sweeper.Sweep) and returns how many
// messages it deleted and kept.
func (w *Worker) Sweep(ctx context.Context) (deleted, kept int, err error) {
	return w.sweeper().Sweep(ctx, "")
}

// PublishDepths publishes the DLQ depth gauges (dlq.Depths.Publish).
func (w *Worker) PublishDepths(ctx context.Context, tenant string) error {
	return w.depths().Publish(ctx, tenant)
}

// ReconcileDepths reconciles the DLQ depth counters (dlq.Depths.Reconcile).
func (w *Worker) ReconcileDepths(ctx context.Context) error {
	return w.depths().Reconcile(ctx)
}

// SummarizeDeaths writes the delivery.dead summary of the window n names
// (opevent.DeadSummaries).
func (w *Worker) SummarizeDeaths(ctx context.Context, n opevent.DeadNotice) error {
	s := opevent.DeadSummaries{Windows: w.Store, OpEvents: w.OpEvents, Log: w.Log}
	return s.Summarize(ctx, n)
}
