package jobs

import (
	"cmp"
	"time"

	"github.com/hookline/hookline/internal/domain"
)

// The defaults of Config, each written once.
const (
	// DefaultMaxOpenJobs is Config.MaxOpenJobs when not set.
	DefaultMaxOpenJobs = 3
	// DefaultSweepGap is Config.SweepGap when not set.
	DefaultSweepGap = time.Minute
	// DefaultJobIdle is Config.JobIdle when not set.
	DefaultJobIdle = time.Hour
	// DefaultRate is Config.Rate when not set.
	DefaultRate = domain.DefaultReplayRate
	// DefaultStale is Config.Stale when not set.
	DefaultStale = 15 * time.Minute
	// DefaultDeadWindow is Config.DeadWindow when not set.
	DefaultDeadWindow = domain.DefaultDeadWindow
	// maxStepSends bounds the default StepSends.
	maxStepSends = 600
)

// Config is how jobs run. Every field's zero value means its default;
// WithDefaults fills them in, once.
type Config struct {
	// MaxOpenJobs bounds each tenant's jobs queued or running at once;
	// Start refuses one more with store.ErrTooManyJobs. With it the jobs
	// queue holds at most MaxOpenJobs job messages per tenant, and since a
	// job gives its worker up after every step, another tenant's job waits
	// for at most that many steps of each other tenant. Default
	// DefaultMaxOpenJobs.
	MaxOpenJobs int
	// SweepGap is the least time between two sweeps of the DLQ: the sweeps
	// asked for after jobs (and by the schedule) within it are dropped.
	// Default 60 s, so that the sweep a job asks for 90 s after it
	// completes either runs or was preceded by one that began after the job
	// completed.
	SweepGap time.Duration
	// JobIdle is how long a job may go unsaved before a recovery takes its
	// message for lost and sends it again: longer than a step's delay (at
	// most 15 min) and the jobs queue's visibility timeout (30 min)
	// together. Default 1 h.
	JobIdle time.Duration
	// Rate is the sends per second a job paces itself to. Default 10.
	Rate float64
	// StepSends bounds the sends of one step. Default: 60 s worth at Rate,
	// at most 600.
	StepSends int
	// Stale is how old another job's claim must be before it is taken over
	// (that job stopped and was not resumed). Default 15 min.
	Stale time.Duration
	// DeadWindow is delivery.dead's coalescing window, as deliver's
	// (deliver.Config.DeadWindow), for the missed deaths the sweep records.
	// Default 5 min.
	DeadWindow time.Duration
}

// WithDefaults returns c with every field not set given its default.
func (c Config) WithDefaults() Config {
	pos := func(d time.Duration) time.Duration { return max(d, 0) }
	c.MaxOpenJobs = cmp.Or(max(c.MaxOpenJobs, 0), DefaultMaxOpenJobs)
	c.SweepGap = cmp.Or(pos(c.SweepGap), DefaultSweepGap)
	c.JobIdle = cmp.Or(pos(c.JobIdle), DefaultJobIdle)
	c.Rate = cmp.Or(max(c.Rate, 0), DefaultRate)
	c.StepSends = cmp.Or(max(c.StepSends, 0), min(maxStepSends, max(1, int(c.Rate*60))))
	c.Stale = cmp.Or(pos(c.Stale), DefaultStale)
	c.DeadWindow = cmp.Or(pos(c.DeadWindow), DefaultDeadWindow)
	return c
}
